#!/bin/sh
# Ignores SIGTERM; stamps its start into $1.
trap '' TERM
date +%s%N > "$1"
# The shell and its sleep (which inherits the ignored SIGTERM) both outlive SIGTERM: only SIGKILL stops them.
sleep 100000

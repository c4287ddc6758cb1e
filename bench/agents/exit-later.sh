#!/bin/sh
# Sleeps $2 seconds, stamps its last instruction into $1, exits 0: the supervisor's exit reaction.
sleep "$2"
date +%s%N > "$1"

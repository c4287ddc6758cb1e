#!/bin/sh
# An opencode-like agent that reports one step's usage and then says nothing: its supervisor writes its
# part of the run's ledger once, then only looks at the run's budget. Answers `--version` as a new enough
# opencode (catherd's readiness check asks it).
if [ "$1" = "--version" ]; then
  echo "opencode 99.0.0"
  exit 0
fi
echo '{"type":"step_finish","sessionID":"ses_bench","part":{"id":"prt_1","reason":"tool-calls","tokens":{"input":10000,"output":100,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.01}}'
# Silent from here on: one process (sleep) in the group, dies on SIGTERM.
exec sleep 100000

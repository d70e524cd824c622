#!/usr/bin/env bash
# run.sh -- run one of this folder's Node scripts with the npm packages of
# scripts/nodeenv.sh (the MCP SDK, the conformance suite, the inspector).
#
#   tests/mcp/node/run.sh SCRIPT.mjs [ARGS...]
#
# Node resolves an ES module's imports from the folder the module is in, so
# the scripts are copied into a fresh folder beside the installed
# node_modules and run from there; the folder is removed afterwards.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
[ $# -ge 1 ] || {
    echo "usage: tests/mcp/node/run.sh SCRIPT.mjs [ARGS...]" >&2
    exit 64
}
modules=$("$root/scripts/nodeenv.sh")
work=$(mktemp -d "$(dirname "$modules")/run.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$here"/*.mjs "$work/"
script=$1
shift
rc=0
LIL_NODE_MODULES=$modules node "$work/$script" "$@" || rc=$?
exit $rc

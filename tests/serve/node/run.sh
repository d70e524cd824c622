#!/usr/bin/env bash
# run.sh -- run one of this folder's Node scripts with playwright-core from
# scripts/nodeenv.sh (its env of tests/serve/node).
#
#   tests/serve/node/run.sh SCRIPT.mjs [ARGS...]
#
# lib.mjs loads playwright-core from LIL_NODE_MODULES, set here, so the
# scripts run where they are.  Without node, npm or the registry the env
# cannot be made: the script says so and the test fails, it never skips.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
[ $# -ge 1 ] || {
    echo "usage: tests/serve/node/run.sh SCRIPT.mjs [ARGS...]" >&2
    exit 64
}
modules=$("$root/scripts/nodeenv.sh" tests/serve/node)
script=$1
shift
export LIL_NODE_MODULES=$modules
exec node "$here/$script" "$@"

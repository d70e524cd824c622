#!/usr/bin/env bash
# run_in_venv.sh REQUIREMENTS SCRIPT [ARGS...] -- run a Python script with
# the python of the venv of a pinned requirements file (scripts/pyenv.sh
# makes or reuses it).  When the venv cannot be made (no package index), the
# test fails with pyenv's message: it never skips.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
[ $# -ge 2 ] || { echo "usage: run_in_venv.sh REQUIREMENTS SCRIPT [ARGS...]" >&2; exit 64; }
req=$1
shift
py=$(bash "$root/scripts/pyenv.sh" "$req")
exec "$py" "$@"

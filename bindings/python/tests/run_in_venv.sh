#!/usr/bin/env bash
# run_in_venv.sh REQUIREMENTS ARGS... -- run the python of the venv of a
# pinned requirements file (scripts/pyenv.sh makes or reuses it, with
# $PYTHON: CMake passes the build's Python, for which lil._lil is built)
# with ARGS: a script, or `-m unittest -v MODULE`.  When the venv cannot be made (no package index), the
# test fails with pyenv's message: it never skips.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
[ $# -ge 2 ] || { echo "usage: run_in_venv.sh REQUIREMENTS ARGS..." >&2; exit 64; }
req=$1
shift
py=$(bash "$root/scripts/pyenv.sh" "$req")
exec "$py" "$@"

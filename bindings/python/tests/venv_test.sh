#!/usr/bin/env bash
# venv_test.sh REQUIREMENTS ARGS... -- run the python of the venv of one
# pinned requirements file (scripts/pyenv.sh makes or reuses it) with ARGS:
# the tests that need packages from PyPI (the agent frameworks).  The venv
# is made with $PYTHON (CMake passes the build's Python, for which lil._lil
# is built).  When the venv cannot be made (no package index), pyenv.sh
# says why and this fails: the test fails, it never skips.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
requirements=$1
shift
python=$(bash "$here/../../../scripts/pyenv.sh" "$requirements")
exec "$python" "$@"

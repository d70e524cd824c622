#!/usr/bin/env bash
# pydeps.sh -- install the Python packages the tests use into build/pydeps/.
#
#   scripts/pydeps.sh [PYTHON]        (default: python3)
#
# The tests validate every JSON document lil prints against docs/schemas/
# with the `jsonschema` package from PyPI (tests/schema_check.py).  It goes
# into build/pydeps/pyX.Y/ of this checkout (pip install --target), for the
# Python that runs the tests; nothing is installed system-wide.  Run once
# per checkout (scripts/test.sh does); again after a change of the pin.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${1:-python3}
ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
dest=build/pydeps/py$ver
pin="jsonschema==4.26.0"
have() { # the pinned version, imported from $dest
  "$py" - "$dest" "${pin#*==}" <<'PY' 2>/dev/null
import os, sys
dest = os.path.abspath(sys.argv[1])
sys.path.insert(0, dest)
from importlib.metadata import version
import jsonschema
sys.exit(not (jsonschema.__file__.startswith(dest + os.sep) and version("jsonschema") == sys.argv[2]))
PY
}
if have; then
  echo "pydeps: $pin already in $dest"
  exit 0
fi
rm -rf "$dest"
if "$py" -m pip --version >/dev/null 2>&1; then
  pip=("$py" -m pip)
else # Debian's python3 has no pip: a throwaway venv's
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$py" -m venv "$tmp/venv"
  pip=("$tmp/venv/bin/python" -m pip)
fi
"${pip[@]}" install --quiet --disable-pip-version-check --target "$dest" "$pin"
have || { echo "pydeps: $pin is not importable from $dest" >&2; exit 1; }
echo "pydeps: $pin installed in $dest"

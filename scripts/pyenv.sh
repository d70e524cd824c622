#!/usr/bin/env bash
# pyenv.sh -- the virtual environments of the tests and benchmarks that use
# packages from PyPI (the agent frameworks, letitloop, SDKs).
#
#   scripts/pyenv.sh REQUIREMENTS      make (or reuse) the venv of one pinned
#                                      requirements file; print its python
#   scripts/pyenv.sh --all             every bindings/python/requirements/*.txt
#   scripts/pyenv.sh --path REQUIREMENTS   print the venv's python, build nothing
#
# A requirements file names exact versions (`name==1.2.3`, one per line).
# Its venv is build/venvs/NAME-HASH/ (NAME: the file's name without .txt;
# HASH: the first 12 hex digits of the file's SHA-256, so a changed pin makes
# a new venv and never reuses a stale one), created with `python3 -m venv`
# and filled with `pip install -r`; a venv is complete only when its `.ok`
# file exists, written last, so an interrupted install is redone.  Two
# processes making the same venv wait for each other (flock).  Nothing is
# installed outside build/venvs/; `import lil` comes from this checkout
# (the tests set PYTHONPATH), never from the venv.
#
# When the package index cannot be reached the install fails and this script
# exits 1 saying so: tests that need the venv fail, they never skip.
# LIL_VENV_ROOT overrides build/venvs; PYTHON names the interpreter.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venvs=${LIL_VENV_ROOT:-$root/build/venvs}
py=${PYTHON:-python3}

usage() {
    echo "usage: scripts/pyenv.sh [--path] REQUIREMENTS | --all" >&2
    exit 64
}

# venv_dir FILE: build/venvs/NAME-HASH for a requirements file.
venv_dir() {
    local f=$1 name hash
    name=$(basename "$f" .txt)
    hash=$(sha256sum "$f" | cut -c1-12)
    echo "$venvs/$name-$hash"
}

# make_venv FILE: create the venv of FILE unless complete; print its python.
make_venv() {
    local f=$1 dir
    [ -r "$f" ] || {
        echo "pyenv: $f: no such requirements file" >&2
        return 1
    }
    dir=$(venv_dir "$f")
    mkdir -p "$venvs"
    exec 9>"$dir.lock"
    flock 9
    if [ ! -e "$dir/.ok" ]; then
        rm -rf "$dir"
        echo "pyenv: creating $(basename "$dir") from ${f#"$root"/}" >&2
        "$py" -m venv "$dir" >&2
        if ! "$dir/bin/python" -m pip install --quiet --disable-pip-version-check \
            --no-input -r "$f" >&2; then
            echo "pyenv: pip could not install ${f#"$root"/} (is the package index" \
                "reachable? these tests need it and fail without it)" >&2
            rm -rf "$dir"
            exec 9>&-
            return 1
        fi
        touch "$dir/.ok"
    fi
    exec 9>&-
    echo "$dir/bin/python"
}

[ $# -ge 1 ] || usage
case $1 in
--all)
    [ $# -eq 1 ] || usage
    rc=0
    for f in "$root"/bindings/python/requirements/*.txt; do
        [ -e "$f" ] || continue
        make_venv "$f" >/dev/null || rc=1
    done
    exit $rc
    ;;
--path)
    [ $# -eq 2 ] || usage
    echo "$(venv_dir "$2")/bin/python"
    ;;
-*) usage ;;
*)
    [ $# -eq 1 ] || usage
    make_venv "$1"
    ;;
esac

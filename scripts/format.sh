#!/usr/bin/env bash
# format.sh -- check or fix the layout of the C sources against .clang-format.
#
#   scripts/format.sh [--check]      list the files that differ; exit 1 if any
#   scripts/format.sh --fix          rewrite them in place
#   scripts/format.sh [...] FILE...  only these files
#
# The files are every *.c and *.h under src/ include/ cli/ tests/ fuzz/
# bench/ examples/ bindings/ and at the top level.  The layout is clang-format 14's
# (Debian 12): another major version formats some constructs differently, so
# the script refuses to run with one.  CLANG_FORMAT names the binary.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

usage() {
    echo "usage: scripts/format.sh [--check|--fix] [FILE...]" >&2
    exit 64
}

mode=check
files=()
while [ $# -gt 0 ]; do
    case $1 in
    --check) mode=check ;;
    --fix) mode=fix ;;
    -*) usage ;;
    *) files+=("$1") ;;
    esac
    shift
done

cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
    for c in clang-format-14 clang-format; do
        if command -v "$c" >/dev/null 2>&1; then
            cf=$c
            break
        fi
    done
fi
if [ -z "$cf" ]; then
    echo "format.sh: clang-format not found (scripts/deps.sh installs it)" >&2
    exit 1
fi
version=$("$cf" --version)
if ! grep -qE 'version 14\.' <<<"$version"; then
    echo "format.sh: $cf is not clang-format 14: $version" >&2
    exit 1
fi

if [ ${#files[@]} -eq 0 ]; then
    mapfile -t files < <(
        { find src include cli tests fuzz bench examples bindings -name '*.[ch]' -type f
          find . -maxdepth 1 -name '*.[ch]' -type f; } 2>/dev/null |
            sed 's|^\./||' | LC_ALL=C sort
    )
fi

if [ $mode = fix ]; then
    "$cf" -i --style=file "${files[@]}"
    exit 0
fi

differ=()
for f in "${files[@]}"; do
    if ! "$cf" --style=file "$f" | cmp -s - "$f"; then
        differ+=("$f")
    fi
done
if [ ${#differ[@]} -gt 0 ]; then
    echo "format.sh: ${#differ[@]} of ${#files[@]} files differ from .clang-format:" >&2
    printf '  %s\n' "${differ[@]}" >&2
    echo "format.sh: scripts/format.sh --fix rewrites them" >&2
    exit 1
fi
echo "format.sh: ${#files[@]} files formatted"

#!/bin/sh
# bench/run.sh [--quick] [--only NAME]... -- build the release preset and run every
# benchmark, lil beside the physical limit of this machine, in one run.
# Prints a markdown table (docs/performance.md explains each row).
#
# The scratch directory is under build/ in the repository, so on the same
# disk as the checkout; it is removed at the end.  --quick shrinks the
# counts (< 1 minute); the full run takes a few minutes.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
usage() { echo "usage: bench/run.sh [--quick] [--only raw|sync|bytes|resume|group|replay|spec|shell|loop|agent|watch|python]..." >&2; exit 64; }
quick=
only=
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=--quick ;;
        --only) [ $# -ge 2 ] || usage; only="$only --only $2"; shift ;;
        *) usage ;;
    esac
    shift
done

cd "$root"
echo "== building (cmake --preset release)" >&2
cmake --preset release >/dev/null
cmake --build build/release >&2 || {
    echo "== full build failed; building the benchmarks only" >&2
    cmake --build build/release --target lil_bench >&2
}

scratch=$(mktemp -d "$root/build/release/bench-run.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
echo "== running in $scratch" >&2
"$root/build/release/bench/lil_bench" --dir "$scratch" $quick $only

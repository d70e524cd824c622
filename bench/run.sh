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
usage() { echo "usage: bench/run.sh [--quick] [--only raw|sync|bytes|resume|group|replay|spec|shell|loop|agent|watch|pg|python|letitloop|langgraph|workers|mcp|serve]..." >&2; exit 64; }
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
# The pg, workers and serve groups need a PostgreSQL server (serve: for its
# PostgreSQL rows): one of its own (tests/pg/pgserver.sh,
# fsync on, a unix socket) in a short directory (the socket's path is
# limited), on the same disk as /tmp, stopped at the end.  Without the
# server programs the group says it did not run.
pgdir=
pg=
case "$only" in
    "" | *"--only pg"* | *"--only workers"* | *"--only serve"*)
        pgdir=$(mktemp -d /tmp/lil-bench-pg.XXXXXX)
        if pg=$(bash "$root/tests/pg/pgserver.sh" start "$pgdir" 2>&2); then
            echo "== PostgreSQL server in $pgdir" >&2
        else
            echo "== no PostgreSQL server (the pg group will say so)" >&2
            pg=
        fi
        ;;
esac
cleanup() {
    [ -z "$pgdir" ] || bash "$root/tests/pg/pgserver.sh" stop "$pgdir" >/dev/null 2>&1 || true
    rm -rf "$scratch"
}
trap cleanup EXIT INT TERM
echo "== running in $scratch" >&2
"$root/build/release/bench/lil_bench" --dir "$scratch" $quick $only ${pg:+--pg "$pg"}

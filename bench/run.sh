#!/bin/sh
# bench/run.sh [--quick] [--only NAME]... -- build the release preset and run every
# benchmark, lil beside the physical limit of this machine, in one run.
# Prints a markdown table (docs/performance.md explains each row).
#
# --only conformance runs the crash-conformance benchmark instead
# (bench/conformance/conformance.py, docs/conformance.md): lil beside
# letitloop, DBOS and LangGraph under real kills, installing the peers into
# venvs under build/venvs the first time, and keeps its table in
# build/release/conformance.md and .json.  It is not part of the default
# run: its full form takes about an hour and a half (--quick: about a quarter of an hour).
#
# The scratch directory is under build/ in the repository, so on the same
# disk as the checkout; it is removed at the end.  --quick shrinks the
# counts (< 1 minute); the full run takes a few minutes.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
usage() { echo "usage: bench/run.sh [--quick] [--only raw|sync|bytes|resume|group|replay|spec|shell|loop|agent|watch|pg|python|letitloop|langgraph|workers|mcp|serve|conformance]..." >&2; exit 64; }
quick=
only=
conformance=
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=--quick ;;
        --only) [ $# -ge 2 ] || usage
            if [ "$2" = conformance ]; then conformance=1; else only="$only --only $2"; fi
            shift ;;
        *) usage ;;
    esac
    shift
done

cd "$root"
echo "== building (cmake --preset release)" >&2
cmake --preset release >/dev/null
cmake --build build/release >&2 || {
    echo "== full build failed; building the benchmarks only" >&2
    cmake --build build/release --target lil_bench conf_lil_c >&2
}

if [ -n "$conformance" ]; then
    echo "== running the crash-conformance benchmark" >&2
    python3 "$here/conformance/conformance.py" --build "$root/build/release" $quick \
        --json "$root/build/release/conformance.json" --md "$root/build/release/conformance.md" ||
        exit $?
    echo "== the table is kept in build/release/conformance.md, every number in build/release/conformance.json" >&2
    [ -n "$only" ] || exit 0
fi

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

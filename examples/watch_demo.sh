#!/usr/bin/env bash
# watch_demo.sh LIL LIL_DEMO WORKDIR -- durability and liveness together
# (docs/supervise.md); also the CTest test watch_demo.
#
# lil_demo (examples/demo.c) runs 10 durable steps of 100 ms under
# `lil watch`.  This script SIGKILLs the program three times, each time
# inside a step, and does nothing else: lil watch starts it again each time
# (durability alone would leave it dead), and the journal makes each new
# process skip the steps already done (liveness alone would start over).
# At the end demo_verify.sh checks, from the demo's own run-count log, that
# every step completed exactly once.
#
#     bash examples/watch_demo.sh build/ci/cli/lil build/ci/examples/lil_demo /tmp/wd
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
lil=$(readlink -f "$1")
demo=$(readlink -f "$2")
work=$3
steps=10
work_ms=100

rm -rf "$work"
mkdir -p "$work"
cd "$work"
: >runs.log

# The supervisor: restart after 0.2 s (no jitter, so the demo is the same
# every time); its reports go to watch.err, the program's output to demo.out.
"$lil" watch --dir store --backoff 0.2 --jitter 0 -- \
    "$demo" -d store -n $steps -w $work_ms -l runs.log >demo.out 2>watch.err &
watch=$!

# Kill three processes, inside steps 3, 6 and 9: once a step's function
# has logged its start ("pid=P step=K"), its process is in the middle of
# 100 ms of work.
n=0
for step in 3 6 9; do
    n=$((n + 1))
    for ((i = 0; i < 1500; i++)); do
        grep -q "step=$step\$" runs.log && break
        kill -0 $watch 2>/dev/null || { echo "lil watch ended early:" >&2; cat watch.err >&2; exit 1; }
        sleep 0.02
    done
    pid=$(grep "step=$step\$" runs.log | head -n 1 | sed 's/^pid=\([0-9]*\) .*/\1/')
    kill -KILL "$pid"
    echo "kill $n: SIGKILL to pid $pid inside step $step"
done

rc=0
wait $watch || rc=$?
cat watch.err
if [ $rc -ne 0 ]; then
    echo "lil watch exited with $rc, expected 0" >&2
    exit 1
fi

# One output file per process (each starts with "lil_demo: pid P, ..."),
# in the order they ran, for demo_verify.sh.
awk '/^lil_demo: pid /{n++} {print > ("out" n ".txt")}' demo.out
outs=()
for ((i = 1; i <= 4; i++)); do
    [ -f out$i.txt ] || { echo "expected 4 processes, got $((i - 1))" >&2; exit 1; }
    outs+=("out$i.txt")
done
[ ! -f out5.txt ] || { echo "more than 4 processes ran" >&2; exit 1; }
[ "$(grep -c 'was killed by SIGKILL' watch.err)" -eq 3 ] || { echo "expected 3 deaths" >&2; exit 1; }
bash "$here/demo_verify.sh" $steps runs.log "${outs[@]}"
echo "1 passed, 0 failed"

#!/usr/bin/env bash
# demo.sh -- build lil and watch a program survive SIGKILL.
#
# Installs what is missing (scripts/deps.sh), builds the release preset,
# then runs examples/demo.c: 20 durable steps of ~100 ms each.  The first
# process is killed with SIGKILL part-way; the second finishes the run,
# replaying the completed steps from the journal instead of running them.
# Then `lil inspect demo` shows the run, and the demo's own run-count log is
# checked: every step completed, and no completed step ran again.
#
# Then the loop demo (examples/loop_demo.sh): `lil run examples/loop-demo.yaml`,
# ten shell steps of ~100 ms that log each run, is SIGKILLed while a step
# runs; `lil run` then answers uncertain (exit 2) instead of guessing, the
# demo looks at the log and tells lil what happened (`lil recover
# --assume-done`, or `--retry` when the step's line is missing), the run
# completes, `lil inspect` shows the recovery, and the log must hold every
# step exactly once.
#
# Environment: DEMO_STEPS (20), DEMO_WORK_MS (100), DEMO_KILL_AFTER (0.8 s).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

steps=${DEMO_STEPS:-20}
work_ms=${DEMO_WORK_MS:-100}
kill_after=${DEMO_KILL_AFTER:-0.8}

die() {
    echo "demo.sh: FAILED: $*" >&2
    exit 1
}

bash scripts/deps.sh

echo "== building lil (cmake --preset release)"
mkdir -p build
if ! { cmake --preset release && cmake --build build/release --target lil_demo lil_cli; } \
    >build/demo-build.log 2>&1; then
    tail -n 40 build/demo-build.log >&2
    die "the build failed (full log: build/demo-build.log)"
fi
demo=$root/build/release/examples/lil_demo
lil=$root/build/release/cli/lil

work=$root/build/demo
export LIL_DIR=$work/store # the demo and `lil` both use this store
rm -rf "$work"
mkdir -p "$work"
log=$work/runs.log
: >"$log"
run_demo=("$demo" -n "$steps" -w "$work_ms" -l "$log")

echo
echo "== run 1: $steps steps of ${work_ms} ms; it gets SIGKILL after ${kill_after} s"
"${run_demo[@]}" >"$work/run1.out" 2>&1 &
pid=$!
tail -s 0.05 --pid=$pid -n +1 -f "$work/run1.out" &
tail_pid=$!
sleep "$kill_after"
kill -0 $pid 2>/dev/null || die "run 1 ended before it could be killed"
kill -KILL $pid
status=0
wait $pid 2>/dev/null || status=$?
wait $tail_pid
[ $status -eq 137 ] || die "run 1 exited with status $status, not by SIGKILL"
done1=$(grep -c ': ran ' "$work/run1.out" || true)
echo "** killed pid $pid with SIGKILL after ${kill_after} s ($done1 steps reported done)"

echo
echo "== run 2: the same command again"
"${run_demo[@]}" 2>&1 | tee "$work/run2.out" || die "run 2 failed"

echo
echo "== lil inspect demo"
"$lil" inspect demo

echo
echo "== checking the run-count log ($log)"
bash examples/demo_verify.sh "$steps" "$log" "$work/run1.out" "$work/run2.out" ||
    die "a step ran twice or did not complete (see above)"

echo
echo "== the loop demo: a LoopSpec loop run with \`lil run\`, killed in the middle of a step"
bash examples/loop_demo.sh "$lil" "$work/loop" || die "the loop demo failed (see above)"
echo
echo "demo.sh: ok: both runs survived SIGKILL; no completed step ran twice"

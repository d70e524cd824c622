#!/usr/bin/env bash
# demo_test.sh LIL_DEMO WORKDIR -- the CTest test demo_crash_resume.
#
# Runs lil_demo with 8 steps of 40 ms, SIGKILLs it inside step 3, starts it
# again and SIGKILLs it inside step 6, lets a third process finish, then runs
# it a fourth time (everything replays, nothing runs).  demo_verify.sh then
# checks from the demo's run-count log that all steps completed and no
# completed step ran twice.
set -euo pipefail

demo=$1
work=$2
steps=8
work_ms=40

rm -rf "$work"
mkdir -p "$work"
store=$work/store
log=$work/runs.log
: >"$log"

# wait_for FILE TEXT PID: until FILE holds the line TEXT (at most 60 s).
wait_for() {
    local i
    for ((i = 0; i < 3000; i++)); do
        grep -q "^$2" "$1" && return 0
        kill -0 "$3" 2>/dev/null || { echo "lil_demo exited early:" >&2; cat "$1" >&2; return 1; }
        sleep 0.02
    done
    echo "timed out waiting for '$2' in $1" >&2
    return 1
}

# killed_run N AFTER_STEP: start process N and SIGKILL it once it has
# reported step AFTER_STEP done (it is then inside the next step).
killed_run() {
    local out=$work/run$1.out pid rc=0
    "$demo" -d "$store" -n $steps -w $work_ms -l "$log" >"$out" 2>&1 &
    pid=$!
    wait_for "$out" "step $2: " $pid
    kill -KILL $pid
    wait $pid 2>/dev/null || rc=$?
    if [ $rc -ne 137 ]; then
        echo "run $1: expected death by SIGKILL (137), got $rc" >&2
        cat "$out" >&2
        exit 1
    fi
    echo "run $1 (pid $pid) killed after step $2"
}

killed_run 1 2
killed_run 2 5
for r in 3 4; do
    "$demo" -d "$store" -n $steps -w $work_ms -l "$log" >"$work/run$r.out" 2>&1 || {
        echo "run $r failed:" >&2
        cat "$work/run$r.out" >&2
        exit 1
    }
done
cat "$work/run3.out"

# The fourth process found the run completed and ran nothing.
if grep -q ': ran ' "$work/run4.out" || ! grep -q '^run was already completed' "$work/run4.out"; then
    echo "run 4 should only replay:" >&2
    cat "$work/run4.out" >&2
    exit 1
fi

bash "$(dirname "$0")/demo_verify.sh" $steps "$log" \
    "$work/run1.out" "$work/run2.out" "$work/run3.out" "$work/run4.out"
echo "1 passed, 0 failed"

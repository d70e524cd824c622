#!/usr/bin/env bash
# loop_demo.sh LIL WORKDIR -- the loop part of scripts/demo.sh (also the
# CTest test loop_demo).
#
# Runs examples/loop-demo.yaml (ten shell steps of ~100 ms, each appending
# a line to loop-demo.log) with `lil run` in WORKDIR, and SIGKILLs lil while
# one of the steps runs.  The step's own process outlives lil and finishes.
# Then:
#   - `lil run` again answers uncertain (exit 2): the step had started and
#     its outcome is not in the journal, so lil does not guess;
#   - the demo looks at the log: when the interrupted step's line is there,
#     the step did finish, and `lil recover --assume-done` says so; when it
#     is not, `lil recover --retry` runs it again; either way the run goes
#     on and completes;
#   - `lil inspect` shows the run, and the log must hold each of the ten
#     lines exactly once: no finished step ran again.
# LOOP_DEMO_KILL_STEP=1 kills the step's process group too, as a machine
# that lost power would: its line never comes, and the demo retries it.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: loop_demo.sh LIL WORKDIR" >&2; exit 64; }
lil=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$2
spec=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/loop-demo.yaml

die() {
    echo "loop_demo.sh: FAILED: $*" >&2
    exit 1
}

rm -rf "$work"
mkdir -p "$work"
cd "$work" # shell steps run in lil's working directory: loop-demo.log is here
export LIL_DIR=$work/store
log=loop-demo.log

# Whether process $1 has ended (gone, or a zombie nobody reaped yet).
ended() {
    local state
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null || true)
    [ -z "$state" ] || [ "$state" = Z ]
}

# The live children of process $1.
children_of() {
    local c
    for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
        ended "$c" || echo "$c"
    done
}

lines() {
    if [ -f $log ]; then wc -l <$log; else echo 0; fi
}

echo "== loop run 1: lil run loop-demo.yaml (5 iterations x 2 shell steps of ~100 ms)"
# lil runs in a subshell that waits for it, so that its death by SIGKILL is
# reported by the demo and not by bash's job control.
(
    sh -c 'echo $$ >lil.pid; exec "$0" run "$1"' "$lil" "$spec" >run1.out 2>&1 || echo $? >run1.status
) 2>/dev/null &
bg=$!
for ((i = 0; i < 500; i++)); do
    [ -s lil.pid ] && break
    sleep 0.01
done
pid=$(cat lil.pid)
kids=
for ((i = 0; i < 1500; i++)); do # up to 30 s: until 3 steps are done and a 4th runs
    if [ "$(lines)" -ge 3 ]; then
        kill -STOP $pid # hold lil still while looking at its children
        kids=$(children_of $pid)
        [ -n "$kids" ] && break
        kill -CONT $pid
    fi
    kill -0 $pid 2>/dev/null || { cat run1.out >&2; die "lil run ended before it could be killed"; }
    sleep 0.02
done
[ -n "$kids" ] || die "no step was running after 30 s"
kill -KILL $pid
wait $bg
status=$(cat run1.status 2>/dev/null || echo 0)
[ "$status" -eq 137 ] || die "lil run exited with status $status, not by SIGKILL"
echo "** SIGKILL to lil (pid $pid) while its step ran in pid" $kids"; $(lines) lines in $log"
if [ "${LOOP_DEMO_KILL_STEP:-0}" = 1 ]; then
    for k in $kids; do kill -KILL -- "-$k" 2>/dev/null || kill -KILL "$k"; done
    echo "** SIGKILL to the step's process group too"
fi
for k in $kids; do # the step finishes on its own
    for ((i = 0; i < 500; i++)); do
        ended "$k" && break
        sleep 0.02
    done
done
echo "   the step's process has ended: $(lines) lines in $log"

echo
echo "== lil run loop-demo.yaml (again)"
status=0
"$lil" run "$spec" || status=$?
[ $status -eq 2 ] || die "lil run answered $status, not 2 (uncertain)"
echo "** exit status 2: uncertain"

# Which step was it?  "uncertain":{"iteration":I,"seq":S,...}
json=$("$lil" --json run "$spec" || true)
at=$(printf '%s\n' "$json" | grep -o '"uncertain":{"iteration":[0-9]*,"seq":[0-9]*' |
    grep -o '[0-9][0-9]*' | tr '\n' ' ')
read -r it seq <<<"$at" || true
[ -n "${seq:-}" ] || die "no uncertain effect in: $json"
step=$([ "$seq" -eq 0 ] && echo fetch || echo build)
echo
if grep -qx "iteration $it: $step" $log; then
    echo "== its line 'iteration $it: $step' is in $log: it finished; tell lil so"
    "$lil" recover "$spec" --assume-done --result-json '{"code":0,"stdout":""}' \
        --reason "its line is in $log" || die "lil recover --assume-done failed"
else
    echo "== its line 'iteration $it: $step' is not in $log: it did not finish; retry it"
    "$lil" recover "$spec" --retry --reason "its line is not in $log" ||
        die "lil recover --retry failed"
fi

echo
echo "== lil inspect loop-demo: from the interrupted step's intent to its outcome"
"$lil" inspect loop-demo >inspect.out || die "lil inspect failed"
sed -n '1,2p' inspect.out
awk -v k="$it.$seq" '$1 == "SEQ" { print; next }
    $3 == "intent" && $4 == k { on = 1 }
    on { print }
    $3 == "step" && $4 == k { on = 0 }' inspect.out | cut -c 1-150
grep -q "resolve .* $it.$seq " inspect.out || die "lil inspect shows no resolution of $it.$seq"
echo "   (each open/close pair: a \`lil run\` that only answered uncertain)"

echo
echo "== checking $log"
bad=0
for ((n = 0; n < 5; n++)); do
    for s in fetch build; do
        c=$(grep -cx "iteration $n: $s" $log || true)
        [ "$c" -eq 1 ] || { echo "'iteration $n: $s' is in the log $c times" >&2; bad=1; }
    done
done
[ "$(lines)" -eq 10 ] || { echo "$log has $(lines) lines, not 10" >&2; bad=1; }
[ $bad -eq 0 ] || { cat $log >&2; die "a step ran twice or never"; }
echo "ok: each of the 10 steps ran exactly once, the SIGKILL notwithstanding"

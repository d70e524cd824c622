#!/usr/bin/env bash
# demo_verify.sh N RUNS_LOG OUT_1 ... OUT_M
#
# Checks, from lil_demo's own evidence, that no completed step ran twice.
#
#   N         the number of steps of the run
#   RUNS_LOG  the run-count log (lil_demo -l): "pid=P step=K" each time a
#             step function started, written by the function itself
#   OUT_i     what the i-th process printed, in the order they ran; every
#             process but the last was killed; the last one finished
#
# The last output names, for every step, the pid of the process whose
# execution completed it (its journaled result carries that pid).  For each
# step K completed by process q:
#   - process q started K's function exactly once;
#   - no later process started it at all (a completed step never runs again);
#   - no earlier process reported it done ("step K: ran");
#   - an earlier process may have started it only if it was killed inside it,
#     and a killed process can be inside at most one step.
# And the last process completed all N steps.
set -euo pipefail

[ $# -ge 3 ] || { echo "usage: demo_verify.sh N RUNS_LOG OUT..." >&2; exit 64; }
n=$1
log=$2
shift 2

{
    sed 's/^/L /' "$log"
    i=0
    for f in "$@"; do
        i=$((i + 1))
        sed "s/^/O$i /" "$f"
    done
} | awk -v n="$n" -v m="$#" '
function err(msg) { print "demo_verify: " msg > "/dev/stderr"; bad++ }
$1 == "L" {
    p = $2; sub(/^pid=/, "", p); k = $3; sub(/^step=/, "", k)
    starts[p, k]++; logpid[p] = 1; nstarts++
    next
}
{ i = substr($1, 2) + 0 }
$2 == "lil_demo:" && $3 == "pid" {
    p = $4; sub(/,$/, "", p); pid_of[i] = p; run_of[p] = i
    next
}
$2 == "step" && $3 ~ /^[0-9]+:$/ {
    k = $3; sub(/:$/, "", k)
    if ($4 == "ran") ran[i, k] = 1; else rep[i, k] = 1
    if (i == m && match($0, /"pid":[0-9]+/)) done_by[k] = substr($0, RSTART + 6, RLENGTH - 6)
    next
}
i == m && $2 == "run" && ($3 == "completed:" || $3 == "was") { finished = 1 }
END {
    for (j = 1; j <= m; j++)
        if (!(j in pid_of)) pid_of[j] = "none" j
    for (p in logpid)
        if (!(p in run_of)) err("pid " p " in the run-count log belongs to no run")
    for (key in starts) {
        split(key, a, SUBSEP)
        if (starts[key] > 1) err("step " a[2] " started " starts[key] " times in pid " a[1])
    }
    for (k = 1; k <= n; k++) {
        if (!(k in done_by)) { err("step " k " missing from the last run"); continue }
        q = done_by[k]
        if (!(q in run_of)) { err("step " k " completed by unknown pid " q); continue }
        qi = run_of[q]
        completed[qi]++
        if (starts[q, k] != 1)
            err("step " k ": pid " q " completed it but started it " (starts[q, k] + 0) " times")
        for (j = qi + 1; j <= m; j++)
            if (starts[pid_of[j], k] > 0)
                err("step " k " completed in run " qi " (pid " q ") and RAN AGAIN in run " j " (pid " pid_of[j] ")")
        for (j = 1; j <= m; j++) {
            if (rep[j, k] && starts[pid_of[j], k] > 0)
                err("step " k " reported replayed in run " j " but its function ran")
            if (j < qi && ran[j, k])
                err("step " k " reported done in run " j " yet ran again in run " qi)
            if (j < qi && starts[pid_of[j], k] > 0) { cut[j]++; cut_step[j] = k }
        }
    }
    for (j = 1; j < m; j++)
        if (cut[j] > 1) err("run " j " was inside " cut[j] " steps when it was killed")
    if (!finished) err("the last run did not complete")
    if (bad) { print "demo_verify: FAILED (" bad " problems)" > "/dev/stderr"; exit 1 }
    line = "verified: all " n " steps completed, each exactly once ("
    for (j = 1; j <= m; j++)
        line = line sprintf("run %d: %d%s", j, completed[j] + 0, j < m ? ", " : ")")
    print line
    print "  no completed step ran again (" nstarts " step-function starts in all)."
    for (j = 1; j < m; j++)
        if (cut[j])
            print "  step " cut_step[j] " was in progress when run " j " was killed; it had not completed, so it ran again."
}
'

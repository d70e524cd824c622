#!/usr/bin/env python3
"""t_caps.py -- caps through `lil run` (docs/loopspec.md, "Caps"): max_iterations with
each on_cap_exceeded action (fail: exit 1; exit-clean: stopped, exit 5,
final; breakpoint: paused, exit 3, and the worked example: the same pause
again without a record, then `--approve` and `lil approve` each open a new
window of max_iterations), no_progress (max_repeats 2 stops at iteration
3), and the wallclock budget, downtime included."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, has, named, test  # noqa: E402

CAPPED = """
    loopspec: "0.1"
    id: capped
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
        x: {type: int, init: 1}
    body:
      - id: bump
        kind: shell
        cmd: "echo bump-${state.n} >> @SIDE@; @CMD@"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= @LIMIT@}"}
    caps: @CAPS@
"""


def capped(t, caps, cmd="true", limit=100):
    t.spec(CAPPED, CAPS=caps, CMD=cmd, LIMIT=limit)


def caps_of(recs):
    """(reason, action, iteration) of each cap.N record."""
    return [(r.p.get("reason"), r.p.get("action"), r.p.get("iteration"))
            for r in named(recs, "cap")]


def bumps(n):
    return ["bump-%d" % i for i in range(n)]


@test
def max_iterations_fail(t):
    capped(t, "{max_iterations: 2, on_cap_exceeded: fail}")
    expect(t.run(), 1, status="failed", iteration=2, state={"n": 2, "x": 1},
           reason="max_iterations")
    eq(t.side(), bumps(2), "side file")
    recs = t.log("capped")
    eq(caps_of(recs), [("max_iterations", "fail", 2)], "cap records")
    eq([r.type for r in recs].count("run-failed"), 1, "run-failed records")
    expect(t.run(), 1, status="failed", iteration=2, state={"n": 2, "x": 1})
    loopt.same_records(t, "capped", recs, "record count after running the failed run again")
    eq(t.side(), bumps(2), "side file after running it again")


@test
def max_iterations_exit_clean(t):
    capped(t, "{max_iterations: 2, on_cap_exceeded: exit-clean}")
    expect(t.run(), 5, status="stopped", iteration=2, state={"n": 2, "x": 1},
           reason="max_iterations")
    recs = t.log("capped")
    eq(caps_of(recs), [("max_iterations", "exit-clean", 2)], "cap records")
    done = [r for r in recs if r.type == "run-done"]
    eq(len(done), 1, "run-done records")
    eq(done[0].p.get("status"), "stopped", "run-done status")
    # final: neither a run nor a resume nor an approval goes on
    expect(t.run(), 5, status="stopped", iteration=2)
    expect(t.run(verb="resume"), 5, status="stopped", iteration=2)
    expect(t.run("--approve"), 5, status="stopped", iteration=2)
    eq(t.side(), bumps(2), "side file")
    loopt.same_records(t, "capped", recs, "record count after the final run was run again")


@test
def max_iterations_breakpoint_windows(t):
    capped(t, "{max_iterations: 2, on_cap_exceeded: breakpoint}")
    expect(t.run(), 3, status="paused", iteration=2, state={"n": 2, "x": 1},
           reason="max_iterations")
    recs = t.log("capped")
    expect(t.run(), 3, status="paused", iteration=2, state={"n": 2, "x": 1},
           reason="max_iterations")
    loopt.same_records(t, "capped", recs, "record count after the paused run ran again")
    expect(t.run("--approve"), 3, status="paused", iteration=4, state={"n": 4, "x": 1},
           reason="max_iterations")
    recs = t.log("capped")
    cleared = named(recs, "cap_cleared")
    eq(len(cleared), 1, "cap_cleared records after --approve")
    eq(cleared[0].p.get("atIteration"), 2, "cap_cleared's atIteration")
    eq([r.p.get("iteration") for r in named(recs, "cap")], [2, 4], "cap records' iterations")
    expect(t.run("--reason", "two more", "--actor", "ann", verb="approve"), 3,
           status="paused", iteration=6, state={"n": 6, "x": 1}, reason="max_iterations")
    cleared = named(t.log("capped"), "cap_cleared")
    eq(len(cleared), 2, "cap_cleared records after lil approve")
    has(cleared[1].p, {"reason": "max_iterations", "atIteration": 4, "actor": "ann",
                       "why": "two more"}, "second cap_cleared")
    eq(t.side(), bumps(6), "side file: every iteration once")


NO_PROGRESS = ("{max_iterations: 10, on_cap_exceeded: %s, "
               "no_progress: {fingerprint: \"${state.x}\", max_repeats: 2}}")


@test
def no_progress_exit_clean(t):
    capped(t, NO_PROGRESS % "exit-clean")
    expect(t.run(), 5, status="stopped", iteration=3, state={"n": 3, "x": 1},
           reason="no_progress")
    eq(t.side(), bumps(3), "side file")


@test
def no_progress_breakpoint(t):
    capped(t, NO_PROGRESS % "breakpoint")
    expect(t.run(), 3, status="paused", iteration=3, state={"n": 3, "x": 1},
           reason="no_progress")
    eq(t.side(), bumps(3), "side file")


@test
def no_progress_fail(t):
    capped(t, NO_PROGRESS % "fail")
    expect(t.run(), 1, status="failed", iteration=3, state={"n": 3, "x": 1},
           reason="no_progress")
    eq(caps_of(t.log("capped")), [("no_progress", "fail", 3)], "cap records")


@test
def no_progress_changing_fingerprint(t):
    capped(t, "{max_iterations: 10, on_cap_exceeded: fail, "
              "no_progress: {fingerprint: \"${state.n}\", max_repeats: 1}}", limit=4)
    expect(t.run(), 0, status="completed", iteration=4, state={"n": 4, "x": 1})


# A poll whose answer lacks the field the loop waits on: the save misses,
# every fingerprint is undefined, and identical misses are no progress.
POLL_MISSES = """
    loopspec: "0.1"
    id: poll
    pattern: poll-until
    state:
      vars:
        status: {type: string, init: "pending"}
        polls: {type: int, init: 0}
    body:
      - id: check
        kind: @KIND@
        @WHAT@
        save: {status: "$.status"}
        on_done: {incr: polls}
    terminate: {signal: state-predicate, until: "${state.status == 'done'}"}
    caps:
      max_iterations: 100
      on_cap_exceeded: exit-clean
      no_progress: {fingerprint: "${state.status}", max_repeats: @REPEATS@}
"""

# poll.sh: one line to the side file; the answer is {"unexpected": true},
# or {"status": "pending"} at the polls listed in $VALUE_AT
POLL_SH = """
echo poll >> "$1"
n=$(wc -l < "$1")
for at in $VALUE_AT; do
  if [ "$n" -eq "$at" ]; then echo '{"status": "pending"}'; exit 0; fi
done
echo '{"unexpected": true}'
"""


def poll_misses(t, repeats, value_at=""):
    t.write("poll.sh", POLL_SH.replace("$VALUE_AT", value_at))
    t.spec(POLL_MISSES, KIND="shell", REPEATS=repeats,
           WHAT='cmd: "sh @DIR@/poll.sh @SIDE@"')


@test
def no_progress_undefined_fingerprints(t):
    # max_repeats N: N + 1 identical misses, then the cap
    for repeats in (3, 12, 30):
        poll_misses(t, repeats)
        run_id = "p%d" % repeats
        expect(t.run("--run-id", run_id), 5, status="stopped", iteration=repeats + 1,
               state={"polls": repeats + 1}, reason="no_progress")
        eq(len(t.side()), repeats + 1, "polls made with max_repeats %d" % repeats)
        eq(caps_of(t.log(run_id)), [("no_progress", "exit-clean", repeats + 1)],
           "cap records with max_repeats %d" % repeats)
        os.unlink(t.side_path)


@test
def no_progress_undefined_fingerprints_http(t):
    srv = t.server()  # /echo answers without a status
    t.spec(POLL_MISSES, KIND="http", REPEATS=3,
           WHAT="request: {method: GET, url: \"%s\"}" % srv.url("/echo"))
    expect(t.run(), 5, status="stopped", iteration=4, state={"polls": 4},
           reason="no_progress")
    eq(srv.count("/echo"), 4, "requests")


@test
def no_progress_undefined_is_its_own_value(t):
    # misses 1-2, a value at 3 (the streak starts again), misses 4-6: the
    # third identical miss in a row stops the run
    poll_misses(t, 2, value_at="3")
    expect(t.run(), 5, status="stopped", iteration=6, state={"polls": 6},
           reason="no_progress")
    eq(len(t.side()), 6, "polls")


@test
def wallclock_budget(t):
    capped(t, "{max_iterations: 100, on_cap_exceeded: fail, budget: {wallclock: 400ms}}",
           cmd="sleep 0.15")
    t0 = time.monotonic()
    res = expect(t.run(), 1, status="failed", reason="wallclock-budget")
    took = time.monotonic() - t0
    it = res["iteration"]
    check(2 <= it <= 3, "the budget of 400 ms trips after 2 or 3 iterations of 150 ms: %d"
          % it)
    check(took >= 0.4, "the run took %.2fs, under the budget" % took)
    eq(res["state"], {"n": it, "x": 1}, "state")
    eq(t.side(), bumps(it), "side file")


@test
def wallclock_counts_downtime(t):
    capped(t, "{max_iterations: 100, on_cap_exceeded: exit-clean, "
              "budget: {wallclock: 300ms}}")
    expect(t.run(verb="step"), 4, status="waiting", iteration=1)
    time.sleep(0.4)
    expect(t.run(), 5, status="stopped", iteration=1, state={"n": 1, "x": 1},
           reason="wallclock-budget")
    eq(t.side(), bumps(1), "side file")


if __name__ == "__main__":
    loopt.main()

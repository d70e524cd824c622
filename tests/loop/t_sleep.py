#!/usr/bin/env python3
"""t_sleep.py -- durable sleep (docs/loopspec.md): a short sleep blocks and the
run goes on; a long one parks the run (waiting, exit 4, wakeAt = now + the
duration), journals the sleep and `parked.N`, and a premature run parks
again at the same wakeAt without running the iteration's earlier effects
again; `--wait` sleeps in the process until wakeAt and completes."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, has, named, test  # noqa: E402

SLEEPER = """
    loopspec: "0.1"
    id: sleeper
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: before
        kind: shell
        cmd: "echo before-${state.n} >> @SIDE@"
      - id: nap
        kind: sleep
        for: @FOR@
      - id: after
        kind: shell
        cmd: "echo after-${state.n} >> @SIDE@"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 1}"}
    caps: {max_iterations: 3}
"""


def now_ms():
    return int(time.time() * 1000)


@test
def short_sleep_blocks(t):
    t.spec(SLEEPER, FOR="50ms")
    t0 = time.monotonic()
    expect(t.run(), 0, status="completed", iteration=1, state={"n": 1},
           absent=("wakeAt",))
    check(time.monotonic() - t0 >= 0.05, "the run slept 50 ms")
    eq(t.side(), ["before-0", "after-0"], "side file")
    rec = loopt.step_rec(t.log("sleeper"), "0.1")
    check(rec is not None and rec.p.get("kind") == "sleep" and "wakeAt" in rec.p,
          "the sleep is journaled as 0.1 {kind: sleep, wakeAt}: %r" % rec)
    eq(named(t.log("sleeper"), "parked"), [], "parked records")


@test
def long_sleep_parks(t):
    t.spec(SLEEPER, FOR="1h")
    lo = now_ms() + 3600 * 1000
    res = expect(t.run(), 4, status="waiting", iteration=0, state={"n": 0})
    hi = now_ms() + 3600 * 1000
    wake = res.get("wakeAt")
    check(isinstance(wake, int) and lo <= wake <= hi,
          "wakeAt %r is now + 1h, within [%d, %d]" % (wake, lo, hi))
    eq(t.side(), ["before-0"], "side file")
    recs = t.log("sleeper")
    has(loopt.step_rec(recs, "0.1").p, {"kind": "sleep", "wakeAt": wake}, "sleep record")
    parked = named(recs, "parked")
    eq(len(parked), 1, "parked records")
    has(parked[0].p, {"iteration": 0, "wakeAt": wake}, "parked record")
    # too early: parked again at the same wakeAt; `before` is not run again
    expect(t.run(), 4, status="waiting", iteration=0, state={"n": 0}, wakeAt=wake)
    expect(t.run(verb="resume"), 4, status="waiting", iteration=0, wakeAt=wake)
    expect(t.run(verb="step"), 4, status="waiting", iteration=0, wakeAt=wake)
    eq(t.side(), ["before-0"], "side file after three early runs")
    eq(loopt.intents(t.log("sleeper")), ["0.0"], "effect intents")


@test
def wait_flag_sleeps_until_wake(t):
    t.spec(SLEEPER, FOR="2s")
    t0 = time.monotonic()
    expect(t.run("--wait"), 0, status="completed", iteration=1, state={"n": 1})
    took = time.monotonic() - t0
    check(took >= 1.9, "--wait slept until wakeAt (2 s), took %.2fs" % took)
    eq(t.side(), ["before-0", "after-0"], "side file")


@test
def parked_then_wait(t):
    # parked by one run, woken by a later one with --wait
    t.spec(SLEEPER, FOR="1500ms")
    res = expect(t.run(), 4, status="waiting", iteration=0)
    wake = res["wakeAt"]
    expect(t.run("--wait"), 0, status="completed", iteration=1, state={"n": 1})
    check(now_ms() >= wake, "completed after wakeAt")
    eq(t.side(), ["before-0", "after-0"], "side file: `before` ran once")


UNTIL = """
    loopspec: "0.1"
    id: until
    pattern: poll-until
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: poll
        kind: sleep
        until: "@GUARD@"
      - id: count
        kind: shell
        cmd: "echo count-${state.n} >> @SIDE@"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 1}"}
    caps: {max_iterations: 3}
"""


@test
def sleep_until_true_goes_on(t):
    t.spec(UNTIL, GUARD="${state.n == 0}")
    expect(t.run(), 0, status="completed", iteration=1, state={"n": 1})
    has(loopt.step_rec(t.log("until"), "0.0").p, {"kind": "sleepUntil", "resolved": True},
        "sleepUntil record")


@test
def sleep_until_false_parks(t):
    # docs/loopspec.md: parked with wakeAt = now + 5 s, re-evaluated by a later run
    t.spec(UNTIL, GUARD="${state.n > 0}")
    lo = now_ms() + 5000
    res = expect(t.run(), 4, status="waiting", iteration=0, state={"n": 0})
    hi = now_ms() + 5000
    check(lo <= res.get("wakeAt", 0) <= hi, "wakeAt %r is now + 5 s" % res.get("wakeAt"))
    has(loopt.step_rec(t.log("until"), "0.0").p, {"kind": "sleepUntil", "wakeAt": res["wakeAt"]},
        "sleepUntil record")
    eq(t.side(), [], "side file")


if __name__ == "__main__":
    loopt.main()

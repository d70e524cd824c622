#!/usr/bin/env python3
"""t_lifecycle.py -- a loop from start to end: terminate before any
iteration, a counter, `lil step` one iteration at a time, a completed run
run again, and every effect run exactly once (docs/loops.md; docs/loopspec.md,
"How a loop runs")."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, intents, loop_records, named, test  # noqa: E402

# A counter: each iteration appends bump-N to the side file and adds one.
COUNTER = """
    loopspec: "0.1"
    id: counter
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: bump
        kind: shell
        cmd: "echo bump-${state.n} >> @SIDE@"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= @LIMIT@}"}
    caps: {max_iterations: 10, on_cap_exceeded: fail}
"""


@test
def terminate_true_at_start(t):
    t.spec(COUNTER, LIMIT=0)
    expect(t.run(), 0, status="completed", iteration=0, state={"n": 0},
           absent=("reason", "wakeAt", "next", "uncertain"))
    eq(t.side(), [], "side file: the body never ran")
    recs = t.log("counter")
    eq(intents(recs), [], "effects journaled")
    eq([r.key for r in recs if r.key.endswith(".snap")], [], "snapshots")
    eq(len(named(recs, "terminated")), 1, "terminated records")
    loopt.has(named(recs, "terminated")[0].p, {"iteration": 0}, "terminated payload")
    eq([r.type for r in recs].count("run-done"), 1, "run-done records")


@test
def counter_three_iterations(t):
    t.spec(COUNTER, LIMIT=3)
    expect(t.run(), 0, status="completed", iteration=3, state={"n": 3},
           absent=("reason", "wakeAt", "next"))
    eq(t.side(), ["bump-0", "bump-1", "bump-2"], "side file")
    recs = t.log("counter")
    eq(intents(recs), ["0.0", "1.0", "2.0"], "effect intents")
    snaps = [r for r in recs if r.type == "step" and r.key.endswith(".snap")]
    eq([r.key for r in snaps], ["0.snap", "1.snap", "2.snap"], "snapshots")
    eq([(s.p["iteration"], s.p["state"]) for s in snaps],
       [(0, {"n": 1}), (1, {"n": 2}), (2, {"n": 3})], "snapshot payloads")
    first = loop_records(recs)[0]
    eq((first.type, first.key), ("step", "loop"), "the run's first loop record")
    eq(first.p["loopId"], "counter", "loop record's loopId")
    eq(first.p["baseState"], {"n": 0}, "loop record's baseState")
    check(isinstance(first.p["spec"], str) and len(first.p["spec"]) == 64,
          "loop record's spec is a SHA-256 in hex: %r" % first.p.get("spec"))
    eq(first.p["inputs"], {}, "loop record's inputs")
    done = [r for r in recs if r.type == "run-done"]
    eq(len(done), 1, "run-done records")
    eq(done[0].p.get("status"), "completed", "run-done status")
    eq(done[0].p.get("iteration"), 3, "run-done iteration")


@test
def step_one_iteration_at_a_time(t):
    # Contract 5.9: a 2-iteration loop steps waiting 1/1, waiting 2/2,
    # completed 2, then completed 2 again with next 2.
    t.spec(COUNTER, LIMIT=2)
    expect(t.run(verb="step"), 4, status="waiting", iteration=1, state={"n": 1},
           next={"iteration": 1})
    eq(t.side(), ["bump-0"], "side file after one step")
    expect(t.run(verb="step"), 4, status="waiting", iteration=2, state={"n": 2},
           next={"iteration": 2})
    expect(t.run(verb="step"), 0, status="completed", iteration=2, state={"n": 2},
           absent=("next",))
    expect(t.run(verb="step"), 0, status="completed", iteration=2, state={"n": 2},
           next={"iteration": 2})
    eq(t.side(), ["bump-0", "bump-1"], "side file: each iteration once")


@test
def sync_modes_and_text_output(t):
    t.spec(COUNTER, LIMIT=2)
    for mode in ("full", "normal", "off"):
        expect(t.run("--sync", mode, "--run-id", "sync-" + mode), 0, status="completed",
               iteration=2, state={"n": 2})
    # without --json: text, the same exit status
    res = t.lil("run", t.spec_path, "--run-id", "text")
    eq(res.rc, 0, "exit status without --json")
    check("completed" in res.out, "the text says completed: %r" % res.out)
    check(res.json is None or not isinstance(res.json, dict),
          "without --json stdout is not the JSON result: %r" % res.out)


@test
def rerun_completed_changes_nothing(t):
    t.spec(COUNTER, LIMIT=3)
    expect(t.run(), 0, status="completed", iteration=3)
    before = t.log("counter")
    expect(t.run(), 0, status="completed", iteration=3, state={"n": 3})
    loopt.same_records(t, "counter", before, "records after running the completed run again")
    eq(t.side(), ["bump-0", "bump-1", "bump-2"], "side file")
    expect(t.run("--approve"), 0, status="completed", iteration=3)
    loopt.same_records(t, "counter", before, "record count after run --approve")


# Two shell steps per iteration, three iterations: six effects.
TWO_STEPS = """
    loopspec: "0.1"
    id: twice
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: a
        kind: shell
        cmd: "echo a-${state.n} >> @SIDE@"
      - id: b
        kind: shell
        cmd: "echo b-${state.n} >> @SIDE@; echo '{\\"k\\": ${state.n}}'"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 3}"}
    caps: {max_iterations: 10}
"""
SIX = ["a-0", "b-0", "a-1", "b-1", "a-2", "b-2"]


@test
def effects_run_once(t):
    t.spec(TWO_STEPS)
    expect(t.run(), 0, status="completed", iteration=3, state={"n": 3})
    eq(t.side(), SIX, "side file: every effect once, in order")
    recs = t.log("twice")
    eq(intents(recs), ["0.0", "0.1", "1.0", "1.1", "2.0", "2.1"], "effect intents")
    eq(loopt.outcome(recs, "1.1").p.get("result"), {"k": 1}, "outcome of 1.1's result")
    expect(t.run(), 0, status="completed", iteration=3, state={"n": 3})
    expect(t.run(verb="resume"), 0, status="completed", iteration=3)
    expect(t.run(verb="step"), 0, status="completed", iteration=3)
    eq(t.side(), SIX, "side file after run, resume and step of the completed run")
    eq(intents(t.log("twice")), intents(recs), "intents after running it again")


@test
def effects_run_once_across_steps(t):
    t.spec(TWO_STEPS)
    expect(t.run(verb="step"), 4, status="waiting", iteration=1)
    expect(t.run(verb="step"), 4, status="waiting", iteration=2)
    eq(t.side(), SIX[:4], "side file after two steps")
    expect(t.run(), 0, status="completed", iteration=3, state={"n": 3})
    eq(t.side(), SIX, "side file: the steps' effects not run again")


if __name__ == "__main__":
    loopt.main()

#!/usr/bin/env python3
"""t_hooks.py -- what runs at the end and inside the body (docs/loopspec.md,
5.17): terminate.on_exit runs before `terminated` as journaled effects
(`exit.S`), observe.hooks.completed after it between `observer` records
(started, then done or failed), a failing hook leaves the run completed,
and neither runs again; a `reduce` over a list binds its alias, skips
the elements its `when` refuses and numbers only the effects that ran; over
a string it walks the characters (code points), over an object it fails."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, intents, named, test  # noqa: E402

ENDING = """
    loopspec: "0.1"
    id: ending
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: bump
        kind: shell
        cmd: "echo bump-${state.n} >> @SIDE@"
        on_done: {incr: n}
    terminate:
      signal: state-predicate
      until: "${state.n >= 2}"
      on_exit: {kind: shell, cmd: "echo exit-${state.n}-${iteration} >> @SIDE@"}
    observe:
      hooks:
        completed: @HOOK@
    caps: {max_iterations: 5}
"""
SHELL_HOOK = '{kind: shell, cmd: "echo hook-${state.n}-${iteration} >> @SIDE@"}'


def order(recs):
    """The loop's records from the first of on_exit's on: (type, key, status)."""
    out = []
    for r in loopt.loop_records(recs):
        if r.key.startswith("exit.") or r.key.startswith("terminated.") \
                or r.key.startswith("observer.") or r.type in ("run-done", "run-failed"):
            status = r.p.get("status") if isinstance(r.p, dict) else None
            out.append((r.type, r.key.split(".")[0] if r.key else "", status))
    return out


@test
def on_exit_then_observer(t):
    t.spec(ENDING, HOOK=SHELL_HOOK)
    expect(t.run(), 0, status="completed", iteration=2, state={"n": 2})
    eq(t.side(), ["bump-0", "bump-1", "exit-2-2", "hook-2-2"], "side file")
    recs = t.log("ending")
    eq(order(recs), [("intent", "exit", None), ("step", "exit", None),
                     ("step", "terminated", None), ("step", "observer", "started"),
                     ("step", "observer", "done"), ("run-done", "", "completed")],
       "the records of the end, in order")
    eq(intents(recs)[-1:], ["exit.0"], "on_exit's effect is exit.0")
    loopt.has(named(recs, "terminated")[0].p, {"iteration": 2}, "terminated record")
    for r in named(recs, "observer"):
        loopt.has(r.p, {"event": "completed"}, "observer record")
    expect(t.run(), 0, status="completed", iteration=2)
    eq(t.side(), ["bump-0", "bump-1", "exit-2-2", "hook-2-2"], "side file after running it again")


@test
def failing_hook_leaves_completed(t):
    port = loopt.closed_port()
    t.spec(ENDING, HOOK='{kind: http, request: {method: GET, url: "http://127.0.0.1:%d/"}}'
           % port)
    expect(t.run(), 0, status="completed", iteration=2, state={"n": 2})
    recs = t.log("ending")
    obs = [r.p for r in named(recs, "observer")]
    eq([o.get("status") for o in obs], ["started", "failed"], "observer records")
    check(isinstance(obs[-1].get("error"), str) and obs[-1]["error"],
          "the failed observer record says why: %r" % obs[-1])
    eq([r.type for r in recs].count("run-done"), 1, "run-done records")
    expect(t.run(), 0, status="completed", iteration=2)
    eq(len(named(t.log("ending"), "observer")), 2, "observer records after running it again")


REDUCE = """
    loopspec: "0.1"
    id: each
    pattern: map-reduce
    state:
      vars:
        items: {type: list, init: ["a", "b", "c"]}
        seen: {type: list, init: []}
        done: {type: boolean, init: false}
    body:
      - id: walk
        kind: reduce
        over: "${state.items}"
        as: it
        body:
          - id: visit
            kind: shell
            when: "${it != 'b'}"
            cmd: "echo visit-${it}-${iteration} >> @SIDE@"
            on_done: {append: {seen: "${it}"}}
      - id: finish
        kind: shell
        cmd: "echo finish >> @SIDE@"
        on_done: {set: {done: "${true}"}}
    terminate: {signal: state-predicate, until: "${state.done}"}
    caps: {max_iterations: 3}
"""


@test
def reduce_with_alias_and_when(t):
    t.spec(REDUCE)
    expect(t.run(), 0, status="completed", iteration=1,
           state={"items": ["a", "b", "c"], "seen": ["a", "c"], "done": True})
    eq(t.side(), ["visit-a-0", "visit-c-0", "finish"], "side file")
    recs = t.log("each")
    eq(intents(recs), ["0.0", "0.1", "0.2"], "effect intents: a skipped step takes no seq")
    eq([loopt.outcome(recs, k).p.get("step") for k in ("0.0", "0.1", "0.2")],
       ["visit", "visit", "finish"], "the steps of the outcomes")


REDUCE_OVER = """
    loopspec: "0.1"
    id: chars
    pattern: map-reduce
    state:
      vars:
        text: {type: @TYPE@, init: @INIT@}
        seen: {type: list, init: []}
    body:
      - id: walk
        kind: reduce
        over: "${state.text}"
        body:
          - id: visit
            kind: shell
            cmd: "echo visit-${item} >> @SIDE@"
            on_done: {append: {seen: "${item}"}}
    terminate: {signal: state-predicate, until: "${iteration >= 1}"}
    caps: {max_iterations: 3}
"""


@test
def reduce_over_a_string(t):
    # for...of over a string: one item a code point (U+1F600 is one item,
    # two UTF-16 units)
    t.spec(REDUCE_OVER, TYPE="string", INIT='"a\u00e9\U0001F600b"')
    expect(t.run(), 0, status="completed", iteration=1,
           state={"text": "a\u00e9\U0001F600b", "seen": ["a", "\u00e9", "\U0001F600", "b"]})
    eq(t.side(), ["visit-a", "visit-\u00e9", "visit-\U0001F600", "visit-b"], "side file")
    eq(intents(t.log("chars")), ["0.0", "0.1", "0.2", "0.3"], "effect intents")


@test
def reduce_over_an_empty_string(t):
    t.spec(REDUCE_OVER, TYPE="string", INIT='""')
    expect(t.run(), 0, status="completed", iteration=1, state={"text": "", "seen": []})
    eq(t.side(), [], "side file")


@test
def reduce_over_an_object_fails(t):
    t.spec(REDUCE_OVER, TYPE="json", INIT="{a: 1}")
    expect(t.run(), 1, status="failed", reason_has="is not a list or a string")
    eq(t.side(), [], "side file")
    eq(intents(t.log("chars")), [], "effect intents")


if __name__ == "__main__":
    loopt.main()

#!/usr/bin/env python3
"""t_approve.py -- breakpoints and gates (docs/loopspec.md, with lil's
differences: docs/loops.md).  An unapproved breakpoint pauses the run
(exit 3, `breakpoint awaiting approval [strategy: S]: ASK`) and journals
`pause.N`; the committed state is the last snapshot; `lil approve --reason`
releases that pause and journals who and why; approving a run that is not
paused is refused; `--yes` and `auto_approve_in: [nonInteractive]` approve;
a gate fires after its step when its `when` holds."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, has, named, test  # noqa: E402

BREAKPOINT = """
    loopspec: "0.1"
    id: bp
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: work
        kind: shell
        cmd: "echo work-${state.n} >> @SIDE@"
        on_done: {incr: n}
      - id: ask
        kind: breakpoint
        ask: "deploy ${state.n}?"
        @MORE@
    terminate: {signal: state-predicate, until: "${state.n >= 2}"}
    caps: {max_iterations: 5}
"""


def waiting_reason(ask, strategy="single"):
    return "breakpoint awaiting approval [strategy: %s]: %s" % (strategy, ask)


def approvals(recs):
    """The payloads of the approved breakpoints' records (I.S steps)."""
    return [r.p for r in recs if r.type == "step" and "effect" not in r.flags
            and isinstance(r.p, dict) and r.p.get("kind") == "breakpoint"]


@test
def breakpoint_pause_and_approve(t):
    t.spec(BREAKPOINT, MORE="")
    expect(t.run(), 3, status="paused", iteration=0, state={"n": 0},
           reason=waiting_reason("deploy 1?"))
    eq(t.side(), ["work-0"], "side file")
    recs = t.log("bp")
    pauses = named(recs, "pause")
    eq(len(pauses), 1, "pause records")
    p = pauses[0].p
    eq({k: p.get(k) for k in ("iteration", "seq", "step", "ask", "strategy")},
       {"iteration": 0, "seq": 1, "step": "ask", "ask": "deploy 1?", "strategy": "single"},
       "pause record")
    check(isinstance(p.get("digest"), str) and p["digest"], "pause record has a digest")
    eq(approvals(recs), [], "approvals before any")
    # running it again pauses at the same place; the effect is not run again
    expect(t.run(), 3, status="paused", iteration=0, state={"n": 0},
           reason=waiting_reason("deploy 1?"))
    eq(t.side(), ["work-0"], "side file after running the paused run again")
    # approve: the iteration goes on, the next one pauses at its breakpoint
    expect(t.run("--reason", "looks good", "--actor", "alice", verb="approve"), 3,
           status="paused", iteration=1, state={"n": 1}, reason=waiting_reason("deploy 2?"))
    got = approvals(t.log("bp"))
    eq(len(got), 1, "approval records")
    with t.soft():
        # docs/loops.md: the approval holds the question answered (ask and
        # strategy, the same shape whoever approved)
        has(got[0], {"step": "ask", "actor": "alice", "reason": "looks good",
                     "strategy": "single", "result": {"approved": True}},
            "approval record")
        check("deploy 1?" in str(got[0].get("ask")),
              "the approval names the question answered: %r" % got[0])
        eq(got[0].get("digest"), p.get("digest"), "the approval's digest is the pause's")
    expect(t.run("--reason", "ship it", verb="approve"), 0, status="completed",
           iteration=2, state={"n": 2})
    got = approvals(t.log("bp"))
    with t.soft():
        eq([(a.get("actor"), a.get("reason")) for a in got],
           [("alice", "looks good"), ("loopt", "ship it")], "approvals (the second by $USER)")
        check("deploy 2?" in str(got[-1].get("ask")),
              "the second approval answers deploy 2?: %r" % got[-1])
    eq(t.side(), ["work-0", "work-1"], "side file: each effect once")
    # nothing is paused any more
    res = t.run("--reason", "again", verb="approve")
    check(res.rc not in (0, 64), "approve of a completed run is refused, exit %s" % res.rc)
    eq(len(approvals(t.log("bp"))), 2, "approval records after the refused approval")


@test
def approve_refused_when_not_paused(t):
    t.spec(BREAKPOINT.replace("kind: breakpoint", "kind: sleep")
           .replace('ask: "deploy ${state.n}?"', "for: 1h"), MORE="")
    expect(t.run(), 4, status="waiting", iteration=0)
    recs = t.log("bp")
    res = t.run("--reason", "why not", verb="approve")
    check(res.rc not in (0, 64), "approve of a waiting run is refused, exit %s" % res.rc)
    check(res.err.strip(), "the refusal says why on stderr")
    loopt.same_records(t, "bp", recs, "records after the refused approval")


@test
def breakpoint_strategy_in_reason(t):
    t.spec(BREAKPOINT, MORE="strategy: quorum")
    expect(t.run(), 3, status="paused", reason=waiting_reason("deploy 1?", "quorum"))


@test
def yes_approves_every_breakpoint(t):
    t.spec(BREAKPOINT, MORE="")
    expect(t.run("--yes", "--actor", "bot", "--reason", "unattended"), 0,
           status="completed", iteration=2, state={"n": 2})
    got = approvals(t.log("bp"))
    eq([(a.get("ask"), a.get("actor"), a.get("reason")) for a in got],
       [("deploy 1?", "bot", "unattended"), ("deploy 2?", "bot", "unattended")],
       "approvals by --yes")
    eq(named(t.log("bp"), "pause"), [], "pause records")


@test
def auto_approve_non_interactive(t):
    t.spec(BREAKPOINT, MORE="auto_approve_in: [nonInteractive]")
    expect(t.run(), 0, status="completed", iteration=2, state={"n": 2})
    eq(len(approvals(t.log("bp"))), 2, "approval records")


@test
def auto_approve_other_mode_pauses(t):
    t.spec(BREAKPOINT, MORE="auto_approve_in: [ci, yolo]")
    expect(t.run(), 3, status="paused", reason=waiting_reason("deploy 1?"))


GATE = """
    loopspec: "0.1"
    id: gated
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: work
        kind: shell
        cmd: "echo work-${state.n} >> @SIDE@"
        on_done: {incr: n}
      - id: after-work
        kind: shell
        cmd: "echo after-${state.n} >> @SIDE@"
    gates:
      - after: work
        when: "${state.n == 2}"
        ask: "n is ${state.n}, go on?"
    terminate: {signal: state-predicate, until: "${state.n >= 3}"}
    caps: {max_iterations: 5}
"""


@test
def gate_after_step_when(t):
    t.spec(GATE)
    expect(t.run(), 3, status="paused", iteration=1, state={"n": 1},
           reason=waiting_reason("n is 2, go on?"))
    # the gate fires right after `work`, before `after-work`
    eq(t.side(), ["work-0", "after-1", "work-1"], "side file at the gate")
    p = named(t.log("gated"), "pause")[0].p
    eq((p.get("iteration"), p.get("seq"), p.get("ask")), (1, 1, "n is 2, go on?"),
       "pause record")
    expect(t.run("--reason", "fine", verb="approve"), 0, status="completed",
           iteration=3, state={"n": 3})
    eq(t.side(), ["work-0", "after-1", "work-1", "after-2", "work-2", "after-3"],
       "side file: every effect once")


if __name__ == "__main__":
    loopt.main()

#!/usr/bin/env python3
"""t_recover.py -- an effect whose process died after its intent (docs/loopspec.md,
5.21): the shell step SIGKILLs the lil running it (its parent, $PPID), so
the journal holds the intent and no outcome.  Every later run, resume and
step is uncertain (exit 2, the effect named by iteration, seq, kind and
identity) and runs nothing; `lil recover` decides: --retry runs the effect
again, --assume-done takes the given result without running it, --abort
stops the run for good (also when the process that aborted died between
the decision and the outcome record after it).  Recovering a run that is
not uncertain is refused."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, intents, test  # noqa: E402

# The first time, the command kills lil (its parent) and leaves `killed`.
CMD = ("echo start >> @SIDE@; if [ ! -e @DIR@/killed ]; then : > @DIR@/killed; "
       "kill -9 $PPID; sleep 1; fi; echo '{\"x\": 2}'")
RISKY = """
    loopspec: "0.1"
    id: risky
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
        x: {type: int, init: 0}
    body:
      - id: charge
        kind: shell
        cmd: %s
        save: {x: "$.x"}
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 1}"}
    caps: {max_iterations: 3}
""" % json.dumps(CMD)


def make_uncertain(t):
    """Run until the step kills lil; check that every verb then says
    uncertain and runs nothing."""
    t.spec(RISKY)
    res = t.run()
    loopt.no_missing_verb(res)
    if res.rc != -9:
        loopt.fail("the step was to kill lil with SIGKILL; lil exited %s" % res.rc)
    eq(t.side(), ["start"], "side file after the kill")
    identity = json.dumps({"cmd": CMD.replace("@SIDE@", t.side_path)
                           .replace("@DIR@", t.dir)}, separators=(",", ":"))
    want = {"iteration": 0, "seq": 0, "kind": "shell", "identity": identity}
    for verb in ("run", "resume", "step"):
        obj = expect(t.run(verb=verb), 2, status="uncertain", iteration=0,
                     state={"n": 0, "x": 0})
        got = dict(obj.get("uncertain") or {})
        if isinstance(got.get("identity"), str):
            try:  # compare the identity as JSON, then its bytes
                eq(json.loads(got["identity"]), json.loads(identity), "identity as JSON")
            except ValueError:
                pass
        eq(got, want, "the uncertain effect (%s)" % verb)
        check(obj.get("reason"), "an uncertain result says why")
    eq(t.side(), ["start"], "side file: nothing ran while uncertain")


@test
def recover_retry(t):
    make_uncertain(t)
    expect(t.run("--retry", "--reason", "charge again", "--actor", "ops", verb="recover"),
           0, status="completed", iteration=1, state={"n": 1, "x": 2})
    eq(t.side(), ["start", "start"], "side file: the effect ran again")
    recs = t.log("risky")
    eq(intents(recs), ["0.0", "0.0"], "intents of effect 0.0")
    res = [r for r in recs if r.type == "resolve"]
    eq(len(res), 1, "resolve records")
    check("charge again" in (res[0].payload or "") and "ops" in (res[0].payload or ""),
          "the resolution journals actor and reason: %r" % res[0])
    res = t.run("--retry", "--reason", "once more", verb="recover")
    check(res.rc not in (0, 64), "recover of a completed run is refused, exit %s" % res.rc)
    eq(t.side(), ["start", "start"], "side file after the refused recovery")


@test
def recover_assume_done(t):
    make_uncertain(t)
    expect(t.run("--assume-done", "--result-json", '{"x": 1}', "--reason", "it went through",
                 verb="recover"), 0, status="completed", iteration=1, state={"n": 1, "x": 1})
    eq(t.side(), ["start"], "side file: the effect was not run again")
    recs = t.log("risky")
    eq(intents(recs), ["0.0"], "intents")
    with t.soft():  # docs/loops.md: the result is journaled as the effect's outcome
        loopt.has(loopt.outcome(recs, "0.0").p if loopt.outcome(recs, "0.0") else None,
                  {"iteration": 0, "seq": 0, "kind": "shell", "result": {"x": 1},
                   "recovered": True}, "the outcome of 0.0")


@test
def recover_abort(t):
    make_uncertain(t)
    expect(t.run("--abort", "--reason", "charge disputed", verb="recover"), 5,
           status="stopped", iteration=0, state={"n": 0, "x": 0}, reason_has="charge disputed")
    recs = t.log("risky")
    for verb in ("run", "resume", "step"):
        expect(t.run(verb=verb), 5, status="stopped", iteration=0)
    expect(t.run("--approve"), 5, status="stopped", iteration=0)
    res = t.run("--retry", "--reason", "changed my mind", verb="recover")
    check(res.rc not in (0, 64), "recover of an aborted run is refused, exit %s" % res.rc)
    loopt.same_records(t, "risky", recs, "records after the aborted run was run again")
    eq(t.side(), ["start"], "side file: the effect never ran again")


@test
def recover_abort_whose_outcome_was_lost(t):
    """The abort's resolve record is the decision: a process that died
    before the outcome record after it leaves the run stopped, not
    uncertain (the journal cut after the resolve record, as a crash would)."""
    make_uncertain(t)
    expect(t.run("--abort", "--reason", "charge disputed", verb="recover"), 5,
           status="stopped")
    failed = [r for r in t.log("risky") if r.type == "step-failed" and r.key == "0.0"]
    eq(len(failed), 1, "the abort's outcome record")
    t.file_only()  # the crash is made by cutting the journal file
    os.truncate(t.journal("risky"), failed[0].offset)
    # a process that died there never closed the run: the store's rollback
    # record (written at a clean close) does not know the outcome record
    head = t.journal("risky")[:-len(".lil")] + ".head"
    if os.path.exists(head):
        os.unlink(head)
    for verb in ("run", "step"):
        expect(t.run(verb=verb), 5, status="stopped", reason_has="charge disputed")
    res = t.run("--retry", "--reason", "changed my mind", verb="recover")
    check(res.rc not in (0, 64), "recover of an aborted run is refused, exit %s" % res.rc)
    check("no uncertain effect" in res.err, "the refusal says why: %r" % res.err)
    eq(t.side(), ["start"], "side file: the effect never ran again")


@test
def recover_refused_when_not_uncertain(t):
    t.spec(RISKY.replace("kill -9 $PPID; sleep 1; ", "")
           .replace("${state.n >= 1}", "${state.n >= 2}").replace("id: risky", "id: calm"))
    expect(t.run(verb="step"), 4, status="waiting", iteration=1)
    recs = t.log("calm")
    for how in (["--retry"], ["--abort"], ["--assume-done", "--result-json", "{}"]):
        res = t.run(*how, "--reason", "nothing to do", verb="recover")
        check(res.rc not in (0, 64), "recover %s of a waiting run is refused, exit %s"
              % (how[0], res.rc))
        check(res.err.strip(), "the refusal says why")
    loopt.same_records(t, "calm", recs, "records after the refused recoveries")


if __name__ == "__main__":
    loopt.main()

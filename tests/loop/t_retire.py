#!/usr/bin/env python3
"""t_retire.py -- an operator's control of a run's life: `lil rm` retires
runs (refusing held and unfinished ones), `lil run --fresh` starts a new
run beside the old one, `lil gc` removes old ended runs, and every next
step lil prints can be pasted: it names the store and the run, so pasting
it acts on the same run (docs/cli.md, "lil rm", "lil gc", "Hints";
docs/loops.md)."""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, test  # noqa: E402

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
        cmd: "echo bump-${state.n} >> @SIDE@; @SLEEP@"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 2}"}
    caps: {max_iterations: 10, on_cap_exceeded: fail}
"""

# A breakpoint before each bump: the run pauses (exit 3) until approved.
ASK = """
    loopspec: "0.1"
    id: ask
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: gate
        kind: breakpoint
        ask: "go on?"
      - id: bump
        kind: shell
        cmd: "echo bump-${state.n} >> @SIDE@"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 1}"}
    caps: {max_iterations: 10, on_cap_exceeded: fail}
"""


def hints(text):
    """The commands in backquotes of lil's text output."""
    return re.findall(r"`(lil [^`]*)`", text)


def paste(t, cmd):
    """Run cmd as a person pasting it would: through the shell, in the
    test's directory and environment."""
    p = subprocess.run(["/bin/sh", "-c", cmd.replace("lil ", loopt.LIL + " ", 1)],
                       cwd=t.dir, env=t.env, capture_output=True, timeout=60)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


@test
def rm_removes_ended_runs_and_reports_missing_ones(t):
    t.spec(COUNTER, SLEEP="true")
    for rid in ("a", "b"):
        expect(t.run("--run-id", rid), 0, status="completed", iteration=2)
    res = t.lil("rm", "a", "nope", "b")
    eq(res.rc, 1, "exit status when one run is missing")
    check("nope" in res.err, "the missing run is named: %r" % res.err)
    check(not t.has_run("a") and not t.has_run("b"), "a and b are removed")
    if not loopt._PG:
        left = [f for f in t.store_files() if f.startswith(("a.", "b."))]
        eq(left, [], "no side file of a or b is left in the store")
    # the id is free again: a new run starts from the beginning
    expect(t.run("--run-id", "a"), 0, status="completed", iteration=2)
    eq(t.side().count("bump-0"), 3, "the new run a ran its effects")
    res = t.lil("--json", "rm", "a")
    eq(res.rc, 0, "rm --json")
    eq(res.json, {"removed": ["a"], "failed": []}, "rm --json document")


@test
def rm_refuses_a_run_that_has_not_ended_unless_forced(t):
    t.spec(ASK)
    expect(t.run("--run-id", "p"), 3, status="paused")
    res = t.lil("rm", "p")
    eq(res.rc, 1, "exit status of rm of a paused run")
    check("paused" in res.err and "not ended" in res.err,
          "the message says why: %r" % res.err)
    check(t.has_run("p"), "the paused run is still there")
    eq(t.lil("rm", "--force", "p").rc, 0, "rm --force of a paused run")
    check(not t.has_run("p"), "the paused run is removed")


@test
def rm_never_removes_a_run_held_by_a_live_process(t):
    t.spec(COUNTER, SLEEP="sleep 30")
    p = t.spawn("run", t.spec_path, "--run-id", "busy")
    t.wait_for(lambda: t.side() == ["bump-0"], "the first effect", proc=p)
    for args in (("rm", "busy"), ("rm", "--force", "busy")):
        res = t.lil(*args)
        eq(res.rc, 75, "exit status of %s of a held run" % " ".join(args))
        check("held" in res.err, "the message says it is held: %r" % res.err)
        check(t.has_run("busy"), "the held run is still there")
    p.kill()
    t.finish(p)


@test
def fresh_starts_a_new_run_beside_the_old_one(t):
    t.spec(COUNTER, SLEEP="true")
    expect(t.run(), 0, status="completed", iteration=2)
    before = t.log("counter")
    res = t.run("--fresh")
    obj = expect(res, 0, status="completed", iteration=2)
    new = obj.get("runId")
    check(isinstance(new, str) and new.startswith("counter-") and new != "counter",
          "--json names the new run: %r" % obj)
    check(new in res.err, "stderr names the new run: %r" % res.err)
    eq(t.side(), ["bump-0", "bump-1"] * 2, "the fresh run ran every effect")
    loopt.same_records(t, "counter", before, "the old run after --fresh")
    check(t.has_run(new), "the new run is in the store")
    loopt.expect_usage(t.run("--fresh", "--run-id", "x"), "run")


@test
def gc_removes_only_old_ended_runs(t):
    t.spec(COUNTER, SLEEP="true")
    expect(t.run("--run-id", "done1"), 0)
    expect(t.run("--run-id", "done2"), 0)
    t.spec(ASK, name="ask.yaml")
    expect(t.run("--run-id", "waits", spec=t.path("ask.yaml")), 3)
    res = t.lil("gc", "--older-than", "1h")
    eq((res.rc, res.out), (0, "nothing to remove\n"), "gc of runs younger than 1h")
    res = t.lil("gc", "--older-than", "0s", "--dry-run")
    eq(res.rc, 0, "gc --dry-run")
    eq(res.out.splitlines(), ["would remove run 'done1'", "would remove run 'done2'"],
       "gc --dry-run names what would go")
    check(t.has_run("done1") and t.has_run("done2"), "--dry-run removes nothing")
    res = t.lil("--json", "gc", "--older-than", "0s", "--status", "failed")
    eq(res.json.get("removed"), [], "no failed run to remove")
    res = t.lil("gc", "--older-than=0s", "--status", "completed,stopped")
    eq(res.out.splitlines(), ["removed run 'done1'", "removed run 'done2'"], "gc")
    check(not t.has_run("done1") and not t.has_run("done2"), "old ended runs removed")
    check(t.has_run("waits"), "a paused run is never removed by gc")
    loopt.expect_usage(t.lil("gc", "--older-than", "soon"), "gc")
    loopt.expect_usage(t.lil("gc"), "gc")


@test
def pasted_hints_act_on_the_same_run(t):
    t.spec(ASK)
    # a run under its own id: the spec's default run ("ask") must stay untouched
    res = t.lil("run", t.spec_path, "--run-id", "job-7")
    eq(res.rc, 3, "exit status of the paused run")
    approve = [h for h in hints(res.out) if " approve " in h]
    eq(len(approve), 1, "one approve hint in %r" % res.out)
    check("--dir " in approve[0] and "--run-id job-7" in approve[0],
          "the hint names the store and the run: %r" % approve[0])
    rc, out, err = paste(t, approve[0])
    eq(rc, 0, "exit status of the pasted approve (stderr %r)" % err)
    check("run 'job-7': completed" in out, "the pasted approve ran job-7 on: %r" % out)
    check(not t.has_run("ask"), "the spec's default run was never made")
    # the completed run says what next; its rm hint retires job-7 itself
    nexts = hints(out)
    check(any("--fresh" in h for h in nexts), "a --fresh hint: %r" % out)
    rm = [h for h in nexts if " rm " in h]
    eq(len(rm), 1, "one rm hint in %r" % out)
    rc, out, err = paste(t, rm[0])
    eq(rc, 0, "exit status of the pasted rm (stderr %r)" % err)
    check(not t.has_run("job-7"), "the pasted rm removed job-7")


@test
def stopped_run_hint_resumes_it(t):
    t.spec(COUNTER, SLEEP="true")
    eq(t.lil("stop", t.spec_path, "--run-id", "s1", "--reason", "not yet").rc, 0,
       "stop before the run starts")
    res = t.lil("run", t.spec_path, "--run-id", "s1")
    eq(res.rc, 5, "the run starts stopped")
    resume = [h for h in hints(res.out) if " resume " in h]
    eq(len(resume), 1, "one resume hint in %r" % res.out)
    rc, out, err = paste(t, resume[0])
    eq(rc, 0, "exit status of the pasted resume (stderr %r)" % err)
    check("run 's1': completed" in out, "the pasted resume ran s1: %r" % out)


if __name__ == "__main__":
    loopt.main()

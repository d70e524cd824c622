#!/usr/bin/env python3
"""t_bind.py -- what a run is bound to (docs/loops.md, "What a run is bound
to"), each test an attack and its refusal.

The spec: an edit under a paused run, then an approval, is refused (exit
1, the message naming both digests and the step changed, not a byte
written, the run still paused) and the approval with the spec as it was
goes on; another spec under the same --run-id is refused, naming both loop
ids; --accept-spec-change journals spec_changed.N (actor, OS user, reason,
both digests, the parts changed) and the new spec applies from the
iteration in flight on: what that iteration journaled before replays as
journaled (the changed command is not run for it), the next one runs the
new command.

The pause: every pause has an id and a digest (the result, `lil inspect
--json`, `lil ls --json`); two approvers race -- the first names the pause
and releases it, the second, naming the old pause (by id or digest), is
refused, nothing journaled, the message naming the current pause; an
approval in a script without --pause, --digest or --current is a usage
error (64) naming the pause; the approval records the actor and the OS
user."""

import os
import pwd
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, has, named, test  # noqa: E402

BREAKPOINT = """
    loopspec: "0.1"
    id: @ID@
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: work
        kind: shell
        cmd: "echo @WORD@-${state.n} >> @SIDE@"
        on_done: {incr: n}
      - id: ask
        kind: breakpoint
        ask: "deploy ${state.n}?"
    terminate: {signal: state-predicate, until: "${state.n >= 3}"}
    caps: {max_iterations: 5}
"""


def bp(t, word="work", loop_id="bp"):
    return t.spec(BREAKPOINT, WORD=word, ID=loop_id)


def approvals(recs):
    return [r.p for r in recs if r.type == "step" and "effect" not in r.flags
            and isinstance(r.p, dict) and r.p.get("kind") == "breakpoint"]


def os_user():
    return pwd.getpwuid(os.geteuid()).pw_name


@test
def edited_spec_under_a_paused_run_is_refused(t):
    bp(t)
    first = expect(t.run(), 3, status="paused", iteration=0)
    digest = first["pause"]["digest"]
    before = t.journal_bytes("bp")
    bp(t, word="oops")  # one typo under a paused run
    expect(t.run("--reason", "ok", verb="approve"), 1)
    err = t.last.err
    check("body.work" in err and "--accept-spec-change" in err,
          "the refusal names the step changed and the way on: " + err)
    check(digest not in err, "the refusal is about the spec, not the pause")
    eq(t.journal_bytes("bp"), before, "nothing was written")
    for verb in ("run", "resume"):
        expect(t.run(verb=verb, *(("--reason", "r") if verb == "resume" else ())), 1)
        eq(t.journal_bytes("bp"), before, "nothing written by %s" % verb)
    bp(t)  # the spec as it was: the approval goes on
    expect(t.run("--reason", "ok", verb="approve"), 3, status="paused", iteration=1)
    eq(t.side(), ["work-0", "work-1"], "side file")


@test
def refusal_names_both_digests(t):
    bp(t)
    expect(t.run(), 3, status="paused")
    was = [r for r in t.log("bp") if r.key == "loop"][0].p["spec"]
    bp(t, word="oops")
    expect(t.run("--run-id", "fresh"), 3)  # the edited spec's digest, journaled
    now = [r for r in t.log("fresh") if r.key == "loop"][0].p["spec"]
    expect(t.run(), 1)
    check(was[:16] in t.last.err and now[:16] in t.last.err,
          "both digests (%s, %s): %s" % (was, now, t.last.err))


@test
def another_spec_under_the_same_run_id_is_refused(t):
    bp(t)
    expect(t.run("--run-id", "shared"), 3, status="paused")
    before = t.journal_bytes("shared")
    other = t.spec(BREAKPOINT, name="other.yaml", WORD="rm-rf", ID="intruder")
    expect(t.run("--run-id", "shared", spec=other), 1)
    check("intruder" in t.last.err and "'bp'" in t.last.err,
          "the refusal names both loop ids: " + t.last.err)
    eq(t.journal_bytes("shared"), before, "nothing was written")
    eq(t.side(), ["work-0"], "the other spec's command never ran")


@test
def accepted_change_is_journaled_and_applies_from_the_next_iteration(t):
    bp(t)
    expect(t.run(), 3, status="paused", iteration=0)
    eq(t.side(), ["work-0"], "side file")
    bp(t, word="new")
    res = expect(t.run("--reason", "fixed the command", "--actor", "ann",
                       "--accept-spec-change", verb="approve"), 3,
                 status="paused", iteration=1)
    # iteration 0 replays its journaled effect (not run with the new
    # command); iteration 1 runs the new one
    eq(t.side(), ["work-0", "new-1"], "side file")
    recs = t.log("bp")
    changes = named(recs, "spec_changed")
    eq(len(changes), 1, "spec_changed records")
    start = [r for r in recs if r.key == "loop"][0].p
    has(changes[0].p, {"actor": "ann", "osUser": os_user(), "reason": "fixed the command",
                       "from": start["spec"], "fromLoopId": "bp", "toLoopId": "bp",
                       "changed": ["body.work"], "iteration": 0}, "spec_changed")
    check(changes[0].p["to"] != start["spec"], "both digests")
    # from now on the new spec is the one the run is bound to
    expect(t.run("--reason", "go", verb="approve"), 3, status="paused", iteration=2)
    eq(t.side(), ["work-0", "new-1", "new-2"], "side file")
    bp(t)  # the old spec is now the other one
    expect(t.run(), 1)
    check(res["pause"]["id"].startswith("pause."), "a pause id")


@test
def two_approvers_race(t):
    bp(t)
    first = expect(t.run(), 3, status="paused", iteration=0)
    p0 = first["pause"]
    has(p0, {"kind": "breakpoint", "iteration": 0, "step": "ask", "ask": "deploy 1?"},
        "the pause")
    check(p0["id"].startswith("pause.") and len(p0["digest"]) == 64, "id and digest")
    # alice approves the pause she saw; the run goes on to the next pause
    second = expect(t.run("--pause", p0["id"], "--reason", "ok", "--actor", "alice",
                          verb="approve"), 3, status="paused", iteration=1)
    p1 = second["pause"]
    check(p1["id"] != p0["id"] and p1["digest"] != p0["digest"],
          "another pause, another id and digest: %r %r" % (p0, p1))
    before = t.journal_bytes("bp")
    # bob, late, names the pause he saw: refused, nothing journaled
    for args in (("--pause", p0["id"]), ("--digest", p0["digest"]),
                 ("--digest", p0["digest"][:12]),
                 ("--pause", p1["id"], "--digest", p0["digest"])):
        expect(t.run(*args, "--reason", "ok", "--actor", "bob", verb="approve"), 1)
        check(p1["id"] in t.last.err, "the refusal names the current pause: " +
              t.last.err)
        eq(t.journal_bytes("bp"), before, "nothing journaled for %r" % (args,))
    eq(t.side(), ["work-0", "work-1"], "side file")
    # the current one, named by a digest prefix, is approved
    expect(t.run("--digest", p1["digest"][:12], "--reason", "ok", "--actor", "bob",
                 verb="approve"), 3, status="paused", iteration=2)
    got = approvals(t.log("bp"))
    eq([(a["actor"], a["pause"]) for a in got], [("alice", p0["id"]), ("bob", p1["id"])],
       "who approved which pause")


@test
def approve_in_a_script_names_the_pause(t):
    bp(t)
    first = expect(t.run(), 3, status="paused")
    before = t.journal_bytes("bp")
    res = t.lil("approve", t.spec_path, "--reason", "ok", "--no-current")
    eq(res.rc, 64, "exit status of an approval that names no pause in a script")
    check("--pause " + first["pause"]["id"] in res.err,
          "the message names the pause id to pass: " + res.err)
    eq(t.journal_bytes("bp"), before, "nothing journaled")
    expect(t.run("--current", "--reason", "ok", verb="approve"), 3, iteration=1)
    usage = t.lil("approve", t.spec_path, "--reason", "ok", "--current", "--pause",
                  first["pause"]["id"])
    eq(usage.rc, 64, "--current with --pause")


@test
def approval_records_actor_and_os_user(t):
    bp(t)
    expect(t.run(), 3, status="paused")
    expect(t.run("--reason", "fine", "--actor", "carol", verb="approve"), 3)
    got = approvals(t.log("bp"))
    has(got[0], {"actor": "carol", "osUser": os_user(), "reason": "fine"}, "approval")


@test
def every_view_shows_the_pause(t):
    bp(t)
    res = expect(t.run(), 3, status="paused")
    pid, digest = res["pause"]["id"], res["pause"]["digest"]
    text = t.lil("run", t.spec_path)
    check("pause: %s (digest %s)" % (pid, digest) in text.out,
          "lil run's text shows the pause: " + text.out)
    check("--pause %s" % pid in text.out, "and the approval naming it: " + text.out)
    ins = t.lil("inspect", "bp")
    check(pid in ins.out and digest in ins.out, "inspect shows them: " + ins.out)
    row = [r for r in t.lil("--json", "ls").json["runs"] if r["id"] == "bp"][0]
    has(row["loop"]["waiting_for"], {"id": pid, "digest": digest}, "ls --json")
    facts = t.lil("--json", "inspect", "bp").json["loop"]
    has(facts["waiting_for"], {"id": pid, "digest": digest}, "inspect --json")


if __name__ == "__main__":
    loopt.main()

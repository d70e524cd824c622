#!/usr/bin/env python3
"""t_notify.py -- the `notify` and `artifacts` keys acted on, through the lil
binary (docs/loops.md, "Notifications" and "Artifacts").

What is checked: a channel's command (LIL_NOTIFY_<CHANNEL>) runs on the
events the policy names -- completed, paused, failed -- after the event is
journaled, with notify.N records (attempted, then ok or failed); a failing
or unconfigured channel is journaled and changes neither the status nor the
exit code; a notification is never sent twice (a second run, a SIGKILL
during the action), and one cut off by a crash before its attempt is sent
when the run is opened again; the artifacts are listed with their sizes and
SHA-256 digests in the RunResult and `lil inspect` (text and --json), a
symlink to a file outside the directory is not followed; `lil score` counts
the journal whatever observe.trace says.
"""

import hashlib
import json
import os
import signal
import tempfile

import loopt
from loopt import check, eq, test

SPEC = """
    loopspec: "0.1"
    id: note
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: work
        kind: shell
        cmd: "@CMD@"
        on_done: {incr: n}
@EXTRA@
    terminate: {signal: state-predicate, until: "${state.n >= 1}"}
    caps: {max_iterations: 3}
    notify: {policy: @POLICY@, channels: [ops]}
"""

TELL = 'echo "$LIL_NOTIFY_EVENT $LIL_NOTIFY_CHANNEL $LIL_NOTIFY_RUN" >> %s'


def note_spec(t, policy="always", cmd="true", extra=""):
    return t.spec(SPEC, POLICY=policy, CMD=cmd, EXTRA=extra)


def tell_env(t, cmd=None):
    return {"LIL_NOTIFY_OPS": cmd if cmd is not None else TELL % t.side_path}


def notices(t, run_id="note"):
    return [r.p for r in loopt.named(t.log(run_id), "notify")]


def told(t):
    return [line for line in t.side() if line.split()[1:2] == ["ops"]]


@test
def completed_is_told_once(t):
    note_spec(t)
    res = t.run(env=tell_env(t))
    loopt.expect(res, 0, status="completed")
    eq(told(t), ["completed ops note"], "the channel's command ran once")
    recs = t.log("note")
    kinds = [r.type if r.type != "step" else r.key.split(".")[0] for r in recs]
    check(kinds.index("run-done") < kinds.index("notify"),
          "the end is journaled before the notification: %s" % kinds)
    eq([(n["event"], n["status"]) for n in notices(t)],
       [("completed", "attempted"), ("completed", "ok")], "notify records")
    res = t.run(env=tell_env(t))
    loopt.expect(res, 0, status="completed")
    eq(len(told(t)), 1, "a second run of the ended run sends nothing")


@test
def paused_then_completed(t):
    note_spec(t, extra="      - id: gate\n        kind: breakpoint\n"
                       "        ask: \"go on?\"")
    res = t.run(env=tell_env(t))
    loopt.expect(res, 3, status="paused")
    eq(told(t), ["paused ops note"], "the pause is told")
    res = t.lil("approve", t.spec_path, "--json", "--reason", "ok", env=tell_env(t))
    eq(res.rc, 0, "approve (stderr: %s)" % res.err)
    eq(told(t), ["paused ops note", "completed ops note"], "then the end")


@test
def failed_on_failure_policy(t):
    t.spec("""
        loopspec: "0.1"
        id: note
        pattern: react
        state:
          vars:
            n: {type: int, init: 0}
        body:
          - {id: work, kind: shell, cmd: "true", on_done: {incr: n}}
        terminate: {signal: state-predicate, until: "${state.n >= 5}"}
        caps: {max_iterations: 1, on_cap_exceeded: fail}
        notify: {policy: on-failure, channels: [ops]}
    """)
    res = t.run(env=tell_env(t))
    loopt.expect(res, 1, status="failed")
    eq(told(t), ["failed ops note"], "a failure is told under on-failure")


@test
def completed_not_told_on_failure_policy(t):
    note_spec(t, policy="on-failure")
    loopt.expect(t.run(env=tell_env(t)), 0, status="completed")
    eq(told(t), [], "on-failure does not tell a completion")
    eq(notices(t), [], "and journals nothing")


@test
def failing_channel_changes_nothing(t):
    note_spec(t)
    res = t.run(env=tell_env(t, "echo tried >> %s; exit 7" % t.side_path))
    loopt.expect(res, 0, status="completed")
    last = notices(t)[-1]
    eq((last["status"], last["error"]), ("failed", "exit 7"), "the failure journaled")
    res = t.run(env=tell_env(t, "echo tried >> %s" % t.side_path))
    loopt.expect(res, 0, status="completed")
    eq(t.side(), ["tried"], "an attempted notification is not sent again")


@test
def unconfigured_channel(t):
    note_spec(t)
    env = {"LIL_NOTIFY_OPS": ""}
    loopt.expect(t.run(env=env), 0, status="completed")
    last = notices(t)[-1]
    eq(last["status"], "failed", "no action: failed")
    check("LIL_NOTIFY_OPS" in last["error"], "names the variable: %s" % last["error"])


@test
def killed_during_the_action_is_not_resent(t):
    note_spec(t)
    cmd = "echo started >> %s; sleep 30" % t.side_path
    p = t.spawn("run", t.spec_path, "--json", env=tell_env(t, cmd))
    t.wait_for(lambda: t.side() == ["started"], "the notification started", proc=p)
    p.send_signal(signal.SIGKILL)
    t.finish(p)
    res = t.run(verb="resume", env=tell_env(t, cmd))
    loopt.expect(res, 0, status="completed")
    eq(t.side(), ["started"], "at most once: not sent again after the crash")
    eq([n["status"] for n in notices(t)], ["attempted"], "left as attempted")


@test
def crash_before_the_attempt_sends_on_resume(t):
    t.spec(SPEC.replace("channels: [ops]", "channels: [ops, web.hook]"),
           POLICY="always", CMD="true", EXTRA="")
    # channel ops kills lil while it runs: web.hook's attempt never started
    env = tell_env(t, "echo ops >> %s; kill -9 $PPID; sleep 5" % t.side_path)
    env["LIL_NOTIFY_WEB_HOOK"] = "echo web.hook >> %s" % t.side_path
    res = t.run(env=env)
    eq(res.rc, -signal.SIGKILL, "lil was killed during the first notification")
    eq(t.side(), ["ops"], "the second channel was not attempted")
    res = t.run(verb="resume", env=env)
    loopt.expect(res, 0, status="completed")
    eq(t.side(), ["ops", "web.hook"],
       "on resume: the channel cut off before its attempt is told, the attempted "
       "one is not")
    eq([(n["channel"], n["status"]) for n in notices(t)],
       [("ops", "attempted"), ("web.hook", "attempted"), ("web.hook", "ok")],
       "notify records")


ART = """
    loopspec: "0.1"
    id: arts
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: make
        kind: shell
        cmd: "mkdir -p out/sub && printf hello > out/a.txt && printf 12345 > out/sub/b.txt && printf x > out/c.log && ln -sf @OUTSIDE@ out/link.txt"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 1}"}
    caps: {max_iterations: 3}
    artifacts: {include: ["out/**/*.txt"], exclude: ["out/sub/skip*"]}
"""


@test
def artifacts_with_digests(t):
    outside = tempfile.NamedTemporaryFile(prefix="loopt-outside-", suffix=".txt",
                                          delete=False)
    outside.write(b"secret outside")
    outside.close()
    try:
        t.spec(ART, OUTSIDE=outside.name)
        res = t.run()
        loopt.expect(res, 0, status="completed")
    finally:
        os.unlink(outside.name)
    want = [{"path": p, "size": len(b), "sha256": hashlib.sha256(b).hexdigest()}
            for p, b in (("out/a.txt", b"hello"), ("out/sub/b.txt", b"12345"))]
    doc = json.loads(res.out)
    eq(doc.get("artifacts"), {"files": want}, "the RunResult's artifacts")
    res = t.lil("inspect", "arts", "--json")
    eq(json.loads(res.out)["artifacts"], {"files": want}, "inspect --json")
    res = t.lil("inspect", "arts")
    check("artifacts     2 files" in res.out and want[1]["sha256"] in res.out,
          "inspect lists them: %s" % res.out)
    check("link.txt" not in res.out, "the symlink is not followed")


@test
def score_counts_what_runs(t):
    t.spec("""
        loopspec: "0.1"
        id: sc
        pattern: react
        body:
          - {id: work, kind: shell, cmd: "true"}
        terminate: {signal: state-predicate, until: "${iteration >= 1}"}
        caps: {max_iterations: 2}
        observe: {trace: none}
        notify: {policy: always, channels: [ops]}
    """, valid=False)
    res = t.lil("score", t.spec_path, "--json")
    doc = json.loads(res.out)
    dims = {d["name"]: d for d in doc["score"]["dimensions"]}
    eq(dims["observability"]["points"], 15, "journal and an active notify count")


if __name__ == "__main__":
    loopt.main()

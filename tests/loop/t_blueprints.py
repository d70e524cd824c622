#!/usr/bin/env python3
"""t_blueprints.py -- every spec `lil new` writes, run end to end.

Each test makes a spec with `lil new` (a blueprint, or --from-shell), and
changes only what a test cannot wait for or has not got: sleeps of 30s or
a minute become 1ms, a URL points at the test's own server.  The loops
that only use shell, http and the internal harness run with `lil run`;
the ones whose agent steps use another harness (claude-code, llm: not
runnable here) run under `lil verify` with fixtures, which drives the real
runner with every effect answered from the fixture.  Each test checks the
outcome the blueprint's comments promise: completed when the exit holds,
else the cap it names, with its action (fail, breakpoint, exit-clean).
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, test  # noqa: E402


def new(t, *args, subst=()):
    """`lil new ARGS --out loop.yaml`, then each (old, new) of subst
    replaced once in the text (the old text must be there); returns the
    spec's path."""
    path = t.path("loop.yaml")
    res = t.lil("new", *args, "--out", path)
    eq(res.rc, 0, "exit status of lil new")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for old, repl in subst:
        check(old in text, "the generated spec holds %r" % old)
        text = text.replace(old, repl, 1)
    t.write("loop.yaml", text)
    eq(t.lil("validate", path).rc, 0, "exit status of lil validate")
    return path


def verify(t, path, fixtures):
    """`lil verify` with fixtures; returns the report (it must be ok:
    bounded, deterministic, resume-stable)."""
    fx = t.write("fixtures.json", json.dumps(fixtures))
    res = t.lil("verify", path, "--fixtures", fx, "--json")
    rep = expect(res, 0)
    check(rep["ok"] and rep["bounded"] and rep["deterministic"] and rep["resumeStable"],
          "verify passes")
    return rep


# A command that fails twice, then succeeds: it counts its runs in a file.
COUNTER = 'n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; ' \
          'echo "$n" >> @SIDE@; test "$n" -ge 3'
FAST_POLL = [("for: 30s", "for: 1ms")]


# ---------------------------------------------------------------------------
# --from-shell (poll-until): shell only, run for real


@test
def from_shell_completes_on_third_try(t):
    cmd = COUNTER.replace("@SIDE@", t.side_path)
    spec = new(t, "poll", "--from-shell", cmd, "--until", "state.code == 0",
               subst=FAST_POLL)
    obj = expect(t.run(), 0, status="completed", iteration=3)
    eq(obj["state"]["polls"], 3, "polls")
    eq(obj["state"]["code"], 0, "code")
    eq(t.side(), ["1", "2", "3"], "runs of the command")
    check(spec.endswith("loop.yaml"), "spec path")


@test
def from_shell_same_answer_waits_until_max_iterations(t):
    # The same exit code 240 times is a wait, not a lack of progress: the
    # loop ends on its iteration cap, and the run fails saying so.
    cmd = "echo x >> %s; exit 7" % t.side_path
    new(t, "poll", "--from-shell", cmd, "--until", "state.code == 0", subst=FAST_POLL)
    expect(t.run(timeout=110), 1, status="failed", iteration=240,
           reason_has="max_iterations")
    eq(len(t.side()), 240, "runs of the command")


@test
def from_shell_wallclock_fails_the_wait(t):
    # the 2 hours, made 2 seconds (and a poll every 100ms)
    new(t, "poll", "--from-shell", "exit 1", "--until", "state.code == 0",
        subst=[("for: 30s", "for: 100ms"), ('wallclock: "2h"', 'wallclock: "2s"')])
    obj = expect(t.run(timeout=60), 1, status="failed", reason_has="wallclock")
    check(obj["iteration"] < 240, "ended by the wallclock, not the iteration cap")


@test
def from_shell_json_output(t):
    # state.out is the parsed stdout: a command printing {"ready": true}
    # on its 2nd run
    cmd = ('n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; '
           'if [ "$n" -ge 2 ]; then echo \'{"ready": true}\'; '
           'else echo \'{"ready": false}\'; fi')
    new(t, "poll", "--from-shell", cmd, "--until", "${state.out.ready == true}",
        subst=FAST_POLL)
    obj = expect(t.run(), 0, status="completed", iteration=2)
    eq(obj["state"]["out"], {"ready": True}, "out")


# ---------------------------------------------------------------------------
# wait-for-deploy (poll-until over http): run for real against a server


class DeployServer(loopt.Server):
    """/deploy answers {"state": "pending"} `pending` times, then
    {"state": final} (never, when final is None)."""

    def __init__(self, pending, final):
        self.pending, self.final, self.calls = pending, final, 0
        super().__init__()

    def route(self, h, req):
        self.calls += 1
        state = "pending" if self.final is None or self.calls <= self.pending \
            else self.final
        self.reply(h, 200, "application/json", json.dumps({"state": state}))


def deploy_server(t, pending, final):
    s = DeployServer(pending, final)
    t._servers.append(s)
    return s


@test
def wait_for_deploy_ready(t):
    srv = deploy_server(t, 2, "ready")
    new(t, "deploy", "--blueprint", "wait-for-deploy", subst=[("for: 1m", "for: 1ms")])
    obj = expect(t.run("--input", "status_url=" + srv.url("/deploy")), 0,
                 status="completed", iteration=3)
    eq(obj["state"], {"status": "ready", "polls": 3}, "state")


@test
def wait_for_deploy_failed_deploy_ends_the_wait(t):
    srv = deploy_server(t, 0, "failed")
    new(t, "deploy", "--blueprint", "wait-for-deploy", subst=[("for: 1m", "for: 1ms")])
    obj = expect(t.run("--input", "status_url=" + srv.url("/deploy")), 0,
                 status="completed", iteration=1)
    eq(obj["state"]["status"], "failed", "status")


@test
def wait_for_deploy_pending_fails_on_its_cap(t):
    # pending for ever: the wait ends on max_iterations (240 polls, made 70
    # so that it passes the 60 repeats a no_progress cap used to stop at)
    srv = deploy_server(t, 0, None)
    new(t, "deploy", "--blueprint", "wait-for-deploy",
        subst=[("for: 1m", "for: 1ms"), ("max_iterations: 240", "max_iterations: 70")])
    expect(t.run("--input", "status_url=" + srv.url("/deploy"), timeout=110), 1,
           status="failed", iteration=70, reason_has="max_iterations")
    eq(srv.calls, 70, "requests")


# ---------------------------------------------------------------------------
# Blueprints with agent steps: lil verify with fixtures


@test
def fix_tests_green_and_stuck(t):
    spec = new(t, "fix", "--blueprint", "fix-tests")
    rep = verify(t, spec, {"shell": {"stdout": "", "code": 0}, "agent": {}})
    eq(rep["dryRun"]["status"], "completed", "green at once")
    eq(rep["dryRun"]["iteration"], 1, "iterations")
    # red for ever: the agent tries 12 times, then a person is asked
    rep = verify(t, spec, {"shell": {"stdout": "", "code": 2}, "agent": {}})
    eq(rep["dryRun"]["status"], "paused", "a cap's breakpoint")
    eq(rep["dryRun"]["reason"], "max_iterations", "the cap")
    eq(rep["dryRun"]["state"]["attempt"], 12, "fix attempts")


@test
def migrate_files_done_build_repair_and_stuck(t):
    spec = new(t, "mig", "--blueprint", "migrate-files")
    rep = verify(t, spec, {"shell": {"remaining": 0, "code": 0}, "agent": {}})
    eq(rep["dryRun"]["status"], "completed", "nothing to migrate")
    eq(rep["dryRun"]["state"]["round"], 0, "no agent call")
    # none left but the build fails: the agent is called to repair it,
    # and gives up to a person when it cannot
    rep = verify(t, spec, {"shell": {"remaining": 0, "code": 2}, "agent": {}})
    eq(rep["dryRun"]["status"], "paused", "stuck on the build")
    eq(rep["dryRun"]["reason"], "no_progress", "the cap")
    check(rep["dryRun"]["state"]["round"] >= 5, "the agent tried the build")
    rep = verify(t, spec, {"shell": {"remaining": 2, "code": 0}, "agent": {}})
    eq(rep["dryRun"]["status"], "paused", "stuck migrating")
    eq(rep["dryRun"]["reason"], "no_progress", "the cap")


@test
def optimize_score_good_and_stuck(t):
    spec = new(t, "opt", "--blueprint", "optimize-score")
    rep = verify(t, spec, {"shell": {"score": 0.95, "feedback": "fine"}, "agent": {}})
    eq((rep["dryRun"]["status"], rep["dryRun"]["iteration"]), ("completed", 1),
       "good at once")
    eq(rep["dryRun"]["state"]["rounds"], 0, "no agent call")
    rep = verify(t, spec, {"shell": {"score": 0.5, "feedback": "meh"}, "agent": {}})
    eq(rep["dryRun"]["status"], "paused", "the score does not move")
    eq(rep["dryRun"]["reason"], "no_progress", "the cap")


@test
def sweep_until_dry_clean_and_stuck(t):
    spec = new(t, "sweep", "--blueprint", "sweep-until-dry")
    rep = verify(t, spec, {"shell": {"found": 0}, "agent": {}})
    eq((rep["dryRun"]["status"], rep["dryRun"]["iteration"]), ("completed", 2),
       "two clean scans")
    rep = verify(t, spec, {"shell": {"found": 3}, "agent": {}})
    eq(rep["dryRun"]["status"], "stopped", "exit-clean when stuck")
    eq(rep["dryRun"]["reason"], "no_progress", "the cap")


@test
def triage_batch_one_pass(t):
    spec = new(t, "triage", "--blueprint", "triage-batch")
    rep = verify(t, spec, {"agent": {"label": "bug", "summary": "all calm"},
                           "shell": {}})
    eq((rep["dryRun"]["status"], rep["dryRun"]["iteration"]), ("completed", 1),
       "one pass")
    eq(rep["dryRun"]["state"]["summary"], "all calm", "summary")


@test
def nightly_report_one_pass(t):
    # verify gives the required URL inputs the sample "x": no URL, but the
    # dry run sends nothing, so the mock answers and the report notes it
    spec = new(t, "nightly", "--blueprint", "nightly-report")
    rep = verify(t, spec, {"http": {"visits": 3}, "agent": {"digest": "quiet day"},
                           "shell": {}})
    eq(sorted(i["code"] for i in rep["issues"] if i["severity"] != "info"), [],
       "no error or warning")
    check(any(i["code"] == "unsendable-request" for i in rep["issues"]),
          "the unsendable requests are noted")
    eq((rep["dryRun"]["status"], rep["dryRun"]["iteration"]), ("completed", 1),
       "one pass")
    eq(rep["dryRun"]["state"]["sent"], True, "delivered")
    eq(rep["dryRun"]["state"]["digest"], "quiet day", "digest")


@test
def every_blueprint_is_tested_here(t):
    res = t.lil("new", "--list", "--json")
    names = sorted(b["name"] for b in expect(res, 0))
    eq(names, sorted(["fix-tests", "migrate-files", "optimize-score",
                      "sweep-until-dry", "triage-batch", "wait-for-deploy",
                      "nightly-report"]), "the blueprints this file covers")


loopt.main()

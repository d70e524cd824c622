#!/usr/bin/env python3
"""t_stop.py -- the graceful stop (docs/loopspec.md, "Stop"; docs/loops.md): `lil
stop --reason` asks, from any process and without the run's lock; the run
honours the request at its next start or iteration boundary (stopped, exit
5, the reason given), every later run stays stopped, `lil resume` goes on;
a stop may come before the run exists (its first run ends stopped, before
any effect);
a second request while one is pending is refused; SIGTERM to `lil run`
stops it after the current effect, whose outcome is journaled.  stop's
exit statuses and resume's flags are the same in `--help`, in docs/cli.md
and in what the command does."""

import json
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, named, test  # noqa: E402

COUNTER = """
    loopspec: "0.1"
    id: halt
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: work
        kind: shell
        cmd: "echo start-${state.n} >> @SIDE@; @CMD@; echo end-${state.n} >> @SIDE@"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= @LIMIT@}"}
    caps: {max_iterations: 20}
"""


def lines(n):
    out = []
    for i in range(n):
        out += ["start-%d" % i, "end-%d" % i]
    return out


@test
def stop_requested_before_run(t):
    t.spec(COUNTER, CMD="true", LIMIT=3)
    expect(t.run(verb="step"), 4, status="waiting", iteration=1)
    res = t.stop("--reason", "maintenance window", "--actor", "ops")
    eq(res.rc, 0, "lil stop exit status")
    res = t.stop("--reason", "again")
    check(res.rc not in (0, 64), "a second stop request is refused, exit %s" % res.rc)
    check("already" in res.err, "the refusal says a stop is already requested: %r" % res.err)
    expect(t.run(), 5, status="stopped", iteration=1, state={"n": 1},
           reason="maintenance window")
    recs = t.log("halt")
    req = named(recs, "stop_requested")
    eq(len(req), 1, "stop_requested records")
    r = req[0].p.get("request", {})
    eq((r.get("runId"), r.get("actor"), r.get("reason")), ("halt", "ops", "maintenance window"),
       "the journaled request")
    # stays stopped until resumed, without new records
    expect(t.run(), 5, status="stopped", iteration=1, reason="maintenance window")
    expect(t.run(verb="step"), 5, status="stopped", iteration=1)
    loopt.same_records(t, "halt", recs, "records after running the stopped run again")
    eq(t.side(), lines(1), "side file while stopped")
    expect(t.run("--actor", "ops", "--reason", "window over", verb="resume"), 0,
           status="completed", iteration=3, state={"n": 3})
    cleared = named(t.log("halt"), "stop_cleared")
    eq(len(cleared), 1, "stop_cleared records")
    eq((cleared[0].p.get("actor"), cleared[0].p.get("reason")), ("ops", "window over"),
       "stop_cleared's actor and reason")
    eq(t.side(), lines(3), "side file: every effect once")
    # a new request after the run is over: nothing left to stop
    t.stop("--reason", "too late")
    expect(t.run(), 0, status="completed", iteration=3)


@test
def stop_before_the_run_exists(t):
    # nothing in the store yet (the file store's directory is not even
    # there): the request waits for the run, whose first `lil run` ends
    # stopped before any effect
    t.spec(COUNTER, CMD="true", LIMIT=3)
    check(not t.has_run("halt"), "no run before the stop")
    res = t.stop("--reason", "not before the freeze ends", "--actor", "ops")
    eq(res.rc, 0, "lil stop exit status of a run that has not started")
    check("has not started" in res.out, "lil stop says the run has not started: %r"
          % res.out)
    check(not t.has_run("halt"), "a stop makes no run")
    res = t.stop("--reason", "again", "--json")
    check(res.rc not in (0, 64), "a second request is refused, exit %s" % res.rc)
    check("already" in res.err, "the refusal says a stop is already requested")
    # inspect and log have no run to show, and say what waits for it
    for verb in ("inspect", "log"):
        res = t.lil(verb, "halt")
        eq(res.rc, 1, "lil %s of a run that has not started" % verb)
        check("a stop is requested for it (by ops: not before the freeze ends)" in
              res.err, "lil %s names the pending stop: %r" % (verb, res.err))
    res = t.lil("ls", "--json")
    eq(expect(res, 0)["runs"], [], "lil ls lists no run")
    res = t.run(verb="resume")
    eq(res.rc, 1, "lil resume of a run that has not started")
    check("a stop is requested" in res.err and "lil --dir " in res.err and
          (" run %s" % t.spec_path) in res.err,
          "lil resume says to run it first: %r" % res.err)
    # the first run: stopped at iteration 0, no effect, the request journaled
    expect(t.run(), 5, status="stopped", iteration=0, state={"n": 0},
           reason="not before the freeze ends")
    eq(t.side(), [], "no effect ran")
    recs = t.log("halt")
    req = named(recs, "stop_requested")
    eq(len(req), 1, "stop_requested records")
    r = req[0].p.get("request", {})
    eq((r.get("version"), r.get("runId"), r.get("actor"), r.get("reason")),
       (1, "halt", "ops", "not before the freeze ends"), "the journaled request")
    check(isinstance(r.get("requestedAt"), int), "the request's time")
    check(not [x for x in recs if x.type == "intent"], "no intent journaled")
    # now a run: ls and inspect show it stopped
    runs = expect(t.lil("ls", "--json"), 0)["runs"]
    eq([x["id"] for x in runs], ["halt"], "lil ls lists the run")
    res = t.lil("inspect", "halt")
    eq(res.rc, 0, "lil inspect exit status")
    check("stopped" in res.out and "by ops: not before the freeze ends" in res.out,
          "lil inspect shows the stop: %r" % res.out[:400])
    expect(t.run(verb="step"), 5, status="stopped", iteration=0)
    loopt.same_records(t, "halt", recs, "records after running the stopped run again")
    expect(t.run("--reason", "freeze over", verb="resume"), 0, status="completed",
           iteration=3, state={"n": 3})
    eq(t.side(), lines(3), "side file: every effect once")


@test
def stop_before_a_step_and_another_run_id(t):
    # `lil step` honours it as `lil run` does, and only the named run id
    t.spec(COUNTER, CMD="true", LIMIT=2)
    res = t.stop("--run-id", "later", "--reason", "hold", "--json")
    obj = expect(res, 0, status="stop-requested")
    eq(obj["request"], {"version": 1, "runId": "later", "actor": "loopt",
                        "reason": "hold"}, "the printed request")
    expect(t.run(), 0, status="completed", iteration=2)  # run 'halt'
    eq(t.side(), lines(2), "the other run id ran")
    expect(t.run("--run-id", "later", verb="step"), 5, status="stopped", iteration=0,
           reason="hold")
    eq(t.side(), lines(2), "no effect of the stopped run")


@test
def stop_wins_over_terminate(t):
    # requested while the exit predicate already holds: stopped, then resume completes
    t.spec(COUNTER, CMD="true", LIMIT=1)
    expect(t.run(verb="step"), 4, status="waiting", iteration=1)
    eq(t.stop("--reason", "hold on").rc, 0, "lil stop exit status")
    expect(t.run(), 5, status="stopped", iteration=1, reason="hold on")
    expect(t.run(verb="resume"), 0, status="completed", iteration=1)


@test
def stop_a_running_loop(t):
    t.spec(COUNTER, CMD="sleep 0.3", LIMIT=6)
    p = t.spawn("run", t.spec_path, "--json")
    t.wait_for(lambda: "start-0" in t.side(), "the first iteration to start", proc=p)
    eq(t.stop("--reason", "enough for now").rc, 0, "lil stop exit status")
    res = t.finish(p, timeout=10)
    obj = expect(res, 5, status="stopped", reason="enough for now")
    it = obj["iteration"]
    check(1 <= it < 6, "stopped at an iteration boundary before the end: %d" % it)
    eq(obj["state"], {"n": it}, "the committed state")
    eq(t.side(), lines(it), "side file: every started iteration was finished")
    expect(t.run(verb="resume"), 0, status="completed", iteration=6, state={"n": 6})
    eq(t.side(), lines(6), "side file: every effect once")


@test
def sigterm_stops_after_the_effect(t):
    t.spec(COUNTER, CMD="sleep 0.5", LIMIT=3)
    p = t.spawn("run", t.spec_path, "--json")
    t.wait_for(lambda: "start-0" in t.side(), "the first effect to start", proc=p)
    p.send_signal(signal.SIGTERM)
    res = t.finish(p, timeout=10)
    obj = expect(res, 5, status="stopped")
    eq(t.side(), ["start-0", "end-0"], "side file: the effect ran to its end, no other")
    recs = t.log("halt")
    out = loopt.outcome(recs, "0.0")
    check(out is not None, "the outcome of the running effect is journaled")
    check(obj["iteration"] in (0, 1), "stopped in or after iteration 0: %r" % obj)
    expect(t.run(verb="resume"), 0, status="completed", iteration=3, state={"n": 3})
    eq(t.side(), lines(3), "side file: the interrupted effect was not run again")


def alive(pid):
    """Is pid a process that has not ended (a zombie has)?"""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


@test
def sigint_twice_kills_the_effect(t):
    # docs/loops.md: a second SIGINT kills the effect's process group and
    # exits at once (130), leaving the effect uncertain
    t.spec(COUNTER, CMD="echo $$ > @DIR@/pid; sleep 3", LIMIT=1)
    p = t.spawn("run", t.spec_path, "--json")
    t.wait_for(lambda: os.path.exists(t.path("pid")) and open(t.path("pid")).read().strip(),
               "the effect to start", proc=p)
    pid = int(open(t.path("pid")).read())
    p.send_signal(signal.SIGINT)
    time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    res = t.finish(p, timeout=2.5)
    eq(res.rc, 130, "exit status after a second SIGINT")
    t.wait_for(lambda: not alive(pid), "the effect's shell to be killed", timeout=2)
    eq(t.side(), ["start-0"], "side file: the effect did not finish")
    cmd = "echo start-0 >> %s; echo $$ > %s/pid; sleep 3; echo end-0 >> %s" % (
        t.side_path, t.dir, t.side_path)
    expect(t.run(), 2, status="uncertain", iteration=0,
           uncertain={"iteration": 0, "seq": 0, "kind": "shell",
                      "identity": json.dumps({"cmd": cmd}, separators=(",", ":"))})


CLI_MD = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "docs", "cli.md")


def cli_md_section(verb):
    """The text of docs/cli.md's section "## lil VERB"."""
    with open(CLI_MD, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## lil %s\n(.*?)(?=^## )" % verb, text, re.S | re.M)
    return m.group(1) if m else ""


def exit_codes(text):
    """The statuses an "Exit status" sentence lists (0, 1, 64, ...)."""
    m = re.search(r"Exit status[^:]*:(.*)", " ".join(text.split()))
    if not m:
        return []
    return sorted({int(n) for n in re.findall(r"(?:^|[;:] )(\d+) ", m.group(1).strip())})


@test
def stop_has_its_own_exit_statuses(t):
    t.spec(COUNTER, CMD="true", LIMIT=1)
    res = t.lil("stop", "--help")
    eq(res.rc, 0, "stop --help")
    check("3 paused" not in res.out and "130" not in res.out,
          "not the exit statuses of the verbs that run the loop: %r" % res.out)
    eq(exit_codes(res.out), [0, 1, 64, 65], "the statuses stop's help lists")
    eq(exit_codes(cli_md_section("stop")), [0, 1, 64, 65],
       "the statuses docs/cli.md lists for stop")
    eq(t.stop("--reason", "first").rc, 0, "a request is published")
    eq(t.stop("--reason", "second").rc, 1, "a second one is refused")
    eq(t.stop().rc, 64, "no --reason")
    eq(t.stop("--reason", "x", spec=t.path("missing.yaml")).rc, 1, "no spec")
    expect(t.run(), 5, status="stopped")
    expect(t.run(verb="resume"), 0, status="completed")
    res = t.stop("--reason", "late")
    eq(res.rc, 1, "a run that has ended: %r" % res.err)


def help_flags(text):
    """{flag: takes a value} of the lines of a "Flags:" list."""
    flags = {}
    for line in text.split("Flags:", 1)[1].splitlines():
        for m in re.finditer(r"(?:^  |, )(--[a-z-]+)( [A-Za-z|]+)?", line):
            flags[m.group(1)] = bool(m.group(2))
    return flags


@test
def resume_flags_are_the_same_in_help_docs_and_parser(t):
    res = t.lil("resume", "--help")
    eq(res.rc, 0, "resume --help")
    flags = help_flags(res.out)
    documented = set(re.findall(r"^\| `(--[a-z-]+)|, `(--[a-z-]+)",
                                cli_md_section("resume"), re.M))
    documented = {a or b for a, b in documented}
    eq(sorted(flags), sorted(documented), "resume's flags: --help and docs/cli.md")
    check({"--run-id", "--actor", "--reason", "--approve", "--yes",
           "--accept-spec-change", "--json", "--progress"} <= set(flags),
          "the flags the parser takes: %r" % sorted(flags))
    values = {"--run-id": "r", "--actor": "a", "--reason": "r", "--progress": "plain"}
    for flag, has_value in sorted(flags.items()):
        words = [flag, values[flag]] if has_value else [flag]
        res = t.lil("resume", t.path("missing.yaml"), *words)
        eq(res.rc, 1, "resume %s: parsed, then the missing spec (%r)" % (flag, res.err))
    res = t.lil("resume", t.path("missing.yaml"), "--input", "a=1")
    eq(res.rc, 64, "resume takes no --input")


if __name__ == "__main__":
    loopt.main()

#!/usr/bin/env python3
"""t_see.py -- seeing what a run is doing (docs/cli.md: `lil inspect`, `lil
ls`, `lil log --follow`, `lil run --progress`; docs/loops.md, "Progress"):
a run held by a live process whose effect has no outcome is running, its
effect in flight (exit 0), and uncertain only once nobody holds it (exit
2); `lil log -f` follows a run as another process writes it, to its end;
`--progress plain|json` prints one line per event on stderr; a shell
command that is not found or not executable says so; Ctrl-C says what it
does."""

import json
import os
import re
import shlex
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, test  # noqa: E402

SLOW = """
    loopspec: "0.1"
    id: slow
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: work
        kind: shell
        cmd: "echo start-${state.n} >> @SIDE@; @CMD@"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= @LIMIT@}"}
    caps: {max_iterations: 20}
"""


def started(t, n=0):
    return lambda: "start-%d" % n in t.side()


@test
def inspect_live_run_is_running(t):
    t.spec(SLOW, CMD="sleep 30", LIMIT=1)
    p = t.spawn("run", t.spec_path, "--json")
    t.wait_for(started(t), "the first effect to start", proc=p)
    time.sleep(1.1)
    res = t.lil("inspect", "slow")
    eq(res.rc, 0, "inspect of a live run: exit status")
    line = [ln for ln in res.out.splitlines() if ln.startswith("status")][0]
    check("running (effect in flight: iteration 0, shell, " in line,
          "the status line names the effect in flight: %r" % line)
    check(line.rstrip().endswith(" s)"), "the status line says for how long: %r" % line)
    check("UNCERTAIN" not in res.out and "lil resolve" not in res.out,
          "a live run's effect is not called uncertain:\n%s" % res.out)
    res = t.lil("inspect", "slow", "--json")
    eq(res.rc, 0, "inspect --json of a live run: exit status")
    eq(res.json["status"], "running", "inspect --json status")
    fl = res.json["in_flight"]
    check(isinstance(fl, dict), "in_flight is an object: %r" % fl)
    eq((fl["iteration"], fl["kind"], fl["step"]), (0, "shell", "0.0"), "in_flight")
    check(fl["elapsed_ms"] >= 1000, "in_flight's elapsed_ms: %r" % fl)
    res = t.lil("ls", "--json")
    row = [r for r in res.json["runs"] if r["id"] == "slow"][0]
    eq((row["status"], row["loop"]["status"]), ("running", "running"), "ls's status")
    # once nobody holds it, the effect is uncertain
    p.kill()
    p.wait()
    res = t.lil("inspect", "slow")
    eq(res.rc, 2, "inspect of a run whose holder died: exit status")
    check("status        uncertain" in res.out, "status uncertain:\n%s" % res.out)
    eq(t.lil("inspect", "slow", "--json").json["in_flight"], None,
       "no effect in flight once the holder is gone")


def jsonl(text):
    return [json.loads(ln) for ln in text.splitlines() if ln.strip()]


@test
def log_follow_to_the_end(t):
    t.spec(SLOW, CMD="sleep 0.4", LIMIT=3)
    p = t.spawn("run", t.spec_path, "--json")
    t.wait_for(started(t), "the first effect to start", proc=p)
    f = t.spawn("log", "-f", "slow", "--jsonl")
    res = t.finish(f, timeout=30)
    eq(res.rc, 0, "lil log -f of a run that completes: exit status")
    got = jsonl(res.out)
    expect(t.finish(p), 0, status="completed", iteration=3)
    whole = [r for r in jsonl(t.lil("log", "slow", "--jsonl").out)]
    eq([r["seq"] for r in got], list(range(1, len(got) + 1)),
       "every record once, in order")
    check(any(r["type"] == "run-done" for r in got), "the end is followed: %r"
          % [r["type"] for r in got])
    eq(got, whole[:len(got)], "the same objects as lil log --jsonl")
    check(len(got) >= len(whole) - 1, "all but perhaps the last close record")
    # a run that has ended: its records, then the exit status of its end
    res = t.lil("log", "--follow", "slow")
    eq(res.rc, 0, "lil log --follow of a completed run")
    eq(len(res.out.splitlines()), len(whole), "text lines")
    res = t.lil("log", "--follow", "slow", "--json")
    eq(res.rc, 64, "--follow with --json")


@test
def log_follow_a_stopped_run(t):
    t.spec(SLOW, CMD="sleep 0.3", LIMIT=50)
    p = t.spawn("run", t.spec_path, "--json")
    t.wait_for(started(t), "the first effect to start", proc=p)
    f = t.spawn("log", "-f", "slow")
    time.sleep(0.5)
    check(f.poll() is None, "lil log -f goes on while the run runs")
    eq(t.stop("--reason", "enough").rc, 0, "lil stop")
    expect(t.finish(p), 5, status="stopped")
    res = t.finish(f, timeout=10)
    eq(res.rc, 5, "lil log -f of a run that stopped: exit status")
    check("stop" in res.out, "the stop is followed:\n%s" % res.out)


NOTFOUND = """
    loopspec: "0.1"
    id: spin
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: build
        kind: shell
        cmd: "@CMD@"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 3}"}
    caps: {max_iterations: 10}
"""


@test
def progress_plain_and_json(t):
    t.spec(SLOW, CMD="sleep 0.1", LIMIT=2)
    res = t.lil("run", t.spec_path, "--progress", "plain")
    eq(res.rc, 0, "lil run --progress plain")
    lines = [ln for ln in res.err.splitlines() if ln.startswith("lil: ")]
    check("iteration 0 starts" in "\n".join(lines), "plain lines")
    check("iteration 1: shell work ended after" in "\n".join(lines), "an effect's end")
    check("end: completed at iteration 2" in lines[-1], "the last line")
    t2 = t.spec(SLOW.replace("id: slow", "id: slow2"), name="two.yaml",
                CMD="sleep 0.1", LIMIT=2)
    res = t.lil("run", t2, "--progress", "json", "--json")
    eq(res.rc, 0, "lil run --progress json")
    evs = [json.loads(ln) for ln in res.err.splitlines() if ln.startswith("{")]
    eq([e["event"] for e in evs],
       ["iteration_start", "effect_start", "effect_end"] * 2 + ["iteration_start", "end"],
       "the events")
    check(evs[2]["dur_ms"] >= 90, "an effect's duration: %r" % evs[2])
    eq(evs[-1]["status"], "completed", "the end event")
    eq(res.json["status"], "completed", "the result on stdout")
    res = t.lil("run", t2, "--progress", "loud")
    eq(res.rc, 64, "--progress with another word")


@test
def command_not_found_says_so(t):
    t.spec(NOTFOUND, CMD="no-such-command-lil --x")
    res = t.lil("run", t.spec_path, "--progress", "plain")
    eq(res.rc, 0, "the loop completes (an exit code is a result)")
    first = [ln for ln in res.err.splitlines() if "iteration 0: shell build ended" in ln]
    check(first and first[0].endswith("command not found: no-such-command-lil"),
          "the first iteration's progress line says so: %r" % first)
    check("step build: command not found: no-such-command-lil "
        "(iterations 0 to 2, 3 times)" in res.out, "the result's text")
    res = t.run(verb="run", spec=t.spec(NOTFOUND.replace("id: spin", "id: spin2"),
                                        name="s2.yaml", CMD="no-such-command-lil"))
    eq(res.json["step_notes"], [{"step": "build",
                                  "note": "command not found: no-such-command-lil",
                                  "first_iteration": 0, "last_iteration": 2,
                                  "count": 3}], "the RunResult's step notes")
    res = t.lil("inspect", "spin")
    check("command not found: no-such-command-lil" in res.out, "inspect's slots")
    t.write("x.sh", "echo hi\n")
    os.chmod(t.path("x.sh"), 0o644)
    t.spec(NOTFOUND.replace("id: spin", "id: spin3"), name="s3.yaml",
           CMD=t.path("x.sh"))
    res = t.run(verb="run", spec=t.path("s3.yaml"))
    eq(res.json["step_notes"][0]["note"], "not executable: " + t.path("x.sh"),
       "exit 126 in words")


def recover_hint(err):
    """The words of the recover command the second Ctrl-C names (up to its
    --retry), as the shell reads them."""
    m = re.search(r"decide it with `(.*?) --retry \|", err)
    return shlex.split(m.group(1)) if m else err


@test
def ctrl_c_says_what_happens(t):
    t.spec(SLOW, CMD="sleep 3", LIMIT=1)
    p = t.spawn("run", t.spec_path)
    t.wait_for(started(t), "the effect to start", proc=p)
    p.send_signal(signal.SIGINT)
    time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    res = t.finish(p, timeout=5)
    eq(res.rc, 130, "exit status after a second SIGINT")
    check("stopping after the current effect (Ctrl-C again to abandon it)" in res.err, "the first Ctrl-C")
    check("abandoned shell work of iteration 0" in res.err, "the second names the effect")
    eq(recover_hint(res.err), ["lil", "--dir", t.store, "recover", t.spec_path],
       "and how to recover it, in the store it is in")
    p = t.spawn("run", t.spec_path, "--json")
    expect(t.finish(p), 2, status="uncertain")
    # another run of the spec (--run-id): the hint names it
    t.write("side.txt", "")
    p = t.spawn("run", t.spec_path, "--run-id", "other")
    t.wait_for(started(t), "the effect of run other to start", proc=p)
    p.send_signal(signal.SIGINT)
    time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    res = t.finish(p, timeout=5)
    eq(res.rc, 130, "exit status after a second SIGINT")
    eq(recover_hint(res.err),
       ["lil", "--dir", t.store, "recover", t.spec_path, "--run-id", "other"],
       "the hint names the run")


@test
def wake_time_is_a_local_date(t):
    t.spec("""
        loopspec: "0.1"
        id: nap
        pattern: react
        state:
          vars:
            n: {type: int, init: 0}
        body:
          - id: rest
            kind: sleep
            for: 1h
          - id: bump
            kind: shell
            cmd: "true"
            on_done: {incr: n}
        terminate: {signal: state-predicate, until: "${state.n >= 1}"}
        caps: {max_iterations: 3}
    """)
    res = t.lil("run", t.spec_path, env={"TZ": "Asia/Kolkata"})
    eq(res.rc, 4, "a parked run")
    line = [ln for ln in res.out.splitlines() if "wakes at" in ln][0]
    check(re.search(r"wakes at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+05:30 ", line),
          "a local ISO 8601 date with its offset: %r" % line)


if __name__ == "__main__":
    loopt.main()

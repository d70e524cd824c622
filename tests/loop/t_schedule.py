#!/usr/bin/env python3
"""t_schedule.py -- schedules of cron loops through the lil binary
(docs/loops.md, "Schedules"): `lil schedule add|ls|rm|run|install` and the
slots `lil tick` fires, with the clock given as --now.

What is checked: a slot fires once -- again with a second tick at the same
time, with two ticks racing, after a missed tick -- by the catch-up policy
(all, latest, none; the flag over the spec's schedule.catch_up); the run
of a slot is "<id>@<slot>", its shell step runs in the directory the
schedule was added from, with the schedule's inputs; a changed spec file
is refused until it is added again; `schedule run` fires and ends cleanly
on SIGTERM; `schedule install` prints and writes the ticker's units.
"""

import json
import os
import shlex
import signal
import sys
import time

import loopt
from loopt import check, eq, test

CRON = """
    loopspec: "0.1"
    id: nightly
    pattern: cron
    schedule: {mode: cron, cron: "@CRON@"@EXTRA@}
    inputs:
      who: {type: string, default: "nobody"}
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: hello
        kind: shell
        cmd: "echo fired-${inputs.who} >> @SIDE@"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 1}"}
    caps: {max_iterations: 3}
"""


def cron_spec(t, cron="*/5 * * * *", extra=""):
    return t.spec(CRON, CRON=cron, EXTRA=extra)


def add(t, *args, now="2026-12-02T14:01Z"):
    res = t.lil("schedule", "add", t.spec_path, "--now", now, *args)
    loopt.no_missing_verb(res)
    eq(res.rc, 0, "lil schedule add exit status (stderr: %s)" % res.err)
    return res


def tick(t, now, code=0):
    res = t.lil("tick", "--now", now, "--json")
    eq(res.rc, code, "lil tick --now %s exit status (stderr: %s)" % (now, res.err))
    return json.loads(res.out)["runs"]


def fired(runs):
    return [r["run"] for r in runs if r["action"] == "fired"]


@test
def slot_fires_once(t):
    cron_spec(t)
    add(t)
    eq(fired(tick(t, "2026-12-02T14:04Z")), [], "nothing due before the first slot")
    runs = tick(t, "2026-12-02T14:05Z")
    eq(fired(runs), ["nightly@2026-12-02T14:05Z"], "the 14:05 slot fires")
    eq(runs[0]["status"], "completed", "its run's status")
    eq(t.side(), ["fired-nobody"], "side file")
    eq(fired(tick(t, "2026-12-02T14:05Z")), [], "a second tick at 14:05")
    eq(fired(tick(t, "2026-12-02T14:09Z")), [], "a tick before the next slot")
    eq(t.side(), ["fired-nobody"], "side file after three more ticks")
    check(t.has_run("nightly@2026-12-02T14:05Z"), "the slot's run is in the store")
    res = t.lil("schedule", "ls", "--json", "--now", "2026-12-02T14:09Z")
    doc = json.loads(res.out)
    eq([(d["id"], d["last_fired"], d["next"]) for d in doc],
       [("nightly", "2026-12-02T14:05Z", "2026-12-02T14:10Z")], "schedule ls")


@test
def catch_up_policies(t):
    cron_spec(t)
    add(t)  # latest by default
    eq(fired(tick(t, "2026-12-02T14:32Z")), ["nightly@2026-12-02T14:30Z"], "latest")
    add(t, "--replace", "--catch-up", "all")
    eq(fired(tick(t, "2026-12-02T14:47Z")),
       ["nightly@2026-12-02T14:35Z", "nightly@2026-12-02T14:40Z",
        "nightly@2026-12-02T14:45Z"], "all: every slot missed since the mark")
    add(t, "--replace", "--catch-up", "none")
    eq(fired(tick(t, "2026-12-02T14:57Z")), [], "none: 14:55 was missed")
    eq(fired(tick(t, "2026-12-02T15:00:30Z")), ["nightly@2026-12-02T15:00Z"],
       "none: the current minute's slot")
    eq(len(t.side()), 5, "one shell effect per fired slot")


@test
def catch_up_from_spec(t):
    cron_spec(t, extra=", catch_up: all")
    add(t)
    eq(len(fired(tick(t, "2026-12-02T14:16Z"))), 3, "the spec's catch_up: all")
    t.spec(CRON, CRON="*/5 * * * *", EXTRA=", catch_up: sometimes", valid=False)
    res = t.lil("validate", t.spec_path)
    eq(res.rc, 1, "a bad schedule.catch_up is an error")
    check("bad-catch-up" in res.out, "validate names bad-catch-up: %s" % res.out)


@test
def racing_ticks_fire_each_slot_once(t):
    cron_spec(t, cron="* * * * *")
    t.spec(CRON.replace('cmd: "echo', 'cmd: "sleep 0.3; echo'), CRON="* * * * *",
           EXTRA="")
    add(t, "--catch-up", "all")
    procs = [t.spawn("tick", "--now", "2026-12-02T14:06Z", "--json") for _ in range(3)]
    results = [t.finish(p) for p in procs]
    for r in results:
        eq(r.rc, 0, "each racing tick's exit status (stderr: %s)" % r.err)
    all_fired = sum((fired(json.loads(r.out)["runs"]) for r in results), [])
    want = ["nightly@2026-12-02T14:%02dZ" % m for m in range(2, 7)]
    eq(sorted(all_fired), want, "each slot fired by exactly one tick")
    eq(len(t.side()), 5, "one shell effect per slot")
    eq(fired(tick(t, "2026-12-02T14:06Z")), [], "nothing left to fire")


@test
def runs_where_added_with_inputs(t):
    cron_spec(t)
    t.write("in.json", '{"who": "ops"}')
    add(t, "--inputs", "in.json")
    os.mkdir(t.path("elsewhere"))
    res = loopt.subprocess.run(
        [loopt.LIL, "--dir", t.store, "tick", "--now", "2026-12-02T14:05Z"],
        cwd=t.path("elsewhere"), env=t.env, capture_output=True, text=True)
    eq(res.returncode, 0, "tick from another directory (stderr: %s)" % res.stderr)
    eq(t.side(), ["fired-ops"], "the schedule's inputs")


@test
def changed_spec_is_refused(t):
    cron_spec(t)
    add(t)
    t.spec(CRON.replace("fired-", "changed-"), CRON="*/5 * * * *", EXTRA="")
    runs = tick(t, "2026-12-02T14:05Z", code=1)
    eq([r["action"] for r in runs], ["refused"], "a changed spec is refused")
    eq(t.side(), [], "nothing ran")
    add(t, "--replace")
    eq(fired(tick(t, "2026-12-02T14:10Z")), ["nightly@2026-12-02T14:10Z"],
       "fires once added again")
    eq(t.side(), ["changed-nobody"], "the new spec ran")


@test
def add_rm_errors(t):
    t.spec("""
        loopspec: "0.1"
        id: manual
        pattern: react
        state: {vars: {n: {type: int, init: 0}}}
        body: [{id: a, kind: shell, cmd: "true", on_done: {incr: n}}]
        terminate: {signal: state-predicate, until: "${state.n >= 1}"}
        caps: {max_iterations: 3}
    """, name="manual.yaml")
    res = t.lil("schedule", "add", t.path("manual.yaml"))
    eq(res.rc, 1, "a spec without a cron schedule is refused")
    check("schedule.mode manual" in res.err, "says why: %s" % res.err)
    cron_spec(t)
    add(t)
    res = t.lil("schedule", "add", t.spec_path)
    eq(res.rc, 1, "adding it twice without --replace")
    eq(t.lil("schedule", "add", t.spec_path, "--catch-up", "some").rc, 64,
       "a bad --catch-up")
    eq(t.lil("schedule", "frob").rc, 64, "an unknown action")
    eq(t.lil("schedule", "rm", t.spec_path).rc, 0, "rm SPEC")
    eq(t.lil("schedule", "rm", "nightly").rc, 1, "rm of a schedule that is gone")
    eq(fired(tick(t, "2026-12-02T14:05Z")), [], "a removed schedule fires nothing")


@test
def schedule_run_fires_and_stops(t):
    cron_spec(t, cron="* * * * * *")  # every second
    res = t.lil("schedule", "add", t.spec_path)
    eq(res.rc, 0, "add (stderr: %s)" % res.err)
    p = t.spawn("schedule", "run")
    t.wait_for(lambda: len(t.side()) >= 2, "two slots fired", timeout=15, proc=p)
    p.send_signal(signal.SIGTERM)
    res = t.finish(p)
    eq(res.rc, 0, "schedule run ends cleanly on SIGTERM (stderr: %s)" % res.err)
    check("stopped" in res.out, "says it stopped: %s" % res.out)
    res = t.lil("ls", "--json")
    runs = [r["id"] for r in res.json["runs"] if r["id"].startswith("nightly@")]
    check(len(runs) >= 2, "one run per slot: %s" % runs)


@test
def install_prints_and_writes(t):
    res = t.lil("schedule", "install")
    eq(res.rc, 0, "install exit status")
    # the store as one word of the crontab's shell and of the unit's
    # ExecStart (a PostgreSQL URI's '?' and '&' quoted)
    unit_store = t.store if shlex.quote(t.store) == t.store else '"%s"' % t.store
    check(" tick --dir %s\n" % shlex.quote(t.store) in res.out and "OnCalendar=" in res.out,
          "crontab line and units: %s" % res.out)
    check("ExecStart=" in res.out and " tick --dir %s\n" % unit_store in res.out,
          "the unit's line: %s" % res.out)
    units = ("--unit-dir", t.path("units"))
    eq(t.lil("schedule", "install", "--write", *units).rc, 0, "install --write")
    unit = t.path("units", "lil-tick.service")
    with open(unit, encoding="utf-8") as f:
        check("tick --dir %s\n" % unit_store in f.read(), "the service runs tick")
    eq(t.lil("schedule", "install", "--write", *units).rc, 0, "again: same files")
    with open(unit, "a", encoding="utf-8") as f:
        f.write("# mine\n")
    eq(t.lil("schedule", "install", "--write", *units).rc, 1,
       "a different file there is not replaced")


if __name__ == "__main__":
    loopt.main()

#!/usr/bin/env python3
"""t_workers.py -- `lil submit` and `lil worker` against the test server
(tests/pg; docs/postgres.md, "Workers"): the queue's states, a run reaching
the worker that holds it (stop) or going back to the queue (approve,
recover, resume), parked runs claimed when due, a worker that drains on
SIGTERM, the bad input of the new verbs, and the campaigns:

  - 4 workers, 200 queued runs: every run completes, every effect ran
    exactly once;
  - workers SIGKILLed at random (>= 100 kills; --slow: 1000): the runs of a
    dead worker are taken over at once (its backend is gone), an effect in
    flight makes its run uncertain (never run again by itself), and after
    the operator's recoveries every run completed with each effect run
    exactly once;
  - a worker SIGSTOPped past its lease while its effect runs, and between
    two effects: another worker takes the run over; the first, SIGCONTed,
    is fenced -- it journals nothing more (not the outcome of the effect it
    had started) and starts no effect.

Usage: t_workers.py LIL [--slow] [TEST...]; the server is the suite's
(LIL_TEST_PG), each test a schema of its own.
"""

import json
import os
import random
import signal
import sys
import time

import workert as w
from workert import check, eq, fail, test

SLOW = "--slow" in sys.argv
if SLOW:
    sys.argv.remove("--slow")

# The lease of the fencing tests: short, so that a paused worker loses its
# runs soon; long enough that a loaded machine renews in time.
LEASE = {"LIL_PG_LEASE_MS": "1500"}


# ---------------------------------------------------------------------------
# The verbs


@test
def submit_then_worker_runs_it(t):
    spec = w.spec(t, 3)
    res = t.lil("submit", spec, "--run-id", "r1", "--input", "tag=r1")
    eq(res.rc, 0, "submit's exit status")
    check("queued run 'r1'" in res.out, "submit names the run: %r" % res.out)
    res = t.lil("submit", spec, "--run-id", "r2", "--input", "tag=r2", "--json")
    eq(res.json, {"run": "r2", "status": "queued"}, "submit --json")
    eq(w.states(t), {"r1": "queued", "r2": "queued"}, "queue after submit")
    check(t.side() == [], "nothing ran at submit")
    out = w.drain(t)
    eq(sorted((o["run"], o["state"], o["status"], o["iteration"], o["epoch"],
               o["attempt"], o["takeover"]) for o in out),
       [("r1", "completed", "completed", 3, 1, 1, False),
        ("r2", "completed", "completed", 3, 1, 1, False)], "what the worker did")
    w.check_exactly_once(t, ["r1", "r2"], 3)
    row = w.row(t, "r1")
    eq((row["state"], row["epoch"], row["attempts"], row["holder_pid"]),
       ("completed", "1", "1", ""), "r1's row: one claim, lease let go")
    # the journal: the start record (journaled by the worker), three effects
    recs = t.log("r1")
    eq([r.type for r in recs if r.type in ("intent", "run-done")],
       ["intent"] * 3 + ["run-done"], "r1's journal")
    start = w.loopt.step_rec(recs, "loop")
    eq(start.p["inputs"], {"tag": "r1"}, "the inputs given at submit")
    # nothing left: --once and --idle-exit end at once; text output
    res = t.lil("worker", "--once")
    eq((res.rc, res.out), (0, ""), "a worker with nothing to do")


@test
def worker_text_output_and_concurrency(t):
    spec = w.spec(t, 2)
    w.submit(t, spec, ["a", "b", "c", "d"])
    res = t.lil("worker", "--concurrency", "3", "--idle-exit", "0.3", "--poll-ms", "20")
    eq(res.rc, 0, "worker's exit status")
    claims = sorted(x for x in res.out.splitlines() if ": claimed (" in x)
    got = sorted(x for x in res.out.splitlines() if ": claimed (" not in x)
    eq(claims, ["run %s: claimed (epoch 1, attempt 1)" % rid for rid in "abcd"],
       "one line per claim")
    eq(len(got), 4, "one line per run handled: %r" % got)
    for rid, line in zip("abcd", got):
        check(line.startswith("run %s: completed at iteration 2 (epoch 1, attempt 1)"
                              % rid), "text line %r" % line)
    out = res.out.splitlines()
    for rid in "abcd":  # each run's claim comes before its end
        check(out.index("run %s: claimed (epoch 1, attempt 1)" % rid) <
              [i for i, x in enumerate(out) if x.startswith("run %s: completed" % rid)][0],
              "the claim of %s first: %r" % (rid, out))
    w.check_exactly_once(t, list("abcd"), 2)


@test
def bad_input_of_the_new_verbs(t):
    spec = w.spec(t, 1)
    d = t.path("files")
    # a store directory keeps no queue: refused before it is made, naming
    # what to use
    for verb in (("worker",), ("workers",), ("submit", spec)):
        res = t.lil("--dir", d, *verb)
        w.loopt.expect_usage(res, verb[0])
        check("PostgreSQL store" in res.err and "postgresql://" in res.err,
              "names what to use: %r" % res.err)
        check(not os.path.exists(d), "no store directory made")
    # an invalid spec: its diagnostics, nothing queued
    bad = t.spec("loopspec: \"0.1\"\nid: bad\nbody: 7\n", name="bad.yaml", valid=False)
    res = t.lil("submit", bad)
    eq(res.rc, 1, "submit of an invalid spec")
    check("bad.yaml:" in res.err and "not a valid loop spec" in res.err,
          "its diagnostics: %r" % res.err)
    eq(w.states(t), {}, "nothing queued")
    # inputs: a missing required one, a mistyped one, an unknown one
    res = t.lil("submit", spec, "--run-id", "x")
    eq(res.rc, 1, "a required input missing")
    check("tag" in res.err, "names the input: %r" % res.err)
    int_spec = t.spec(w.SPEC.replace("type: string", "type: int"),
                      name="int.yaml", ITERS=1, PAUSE="", NAP="")
    res = t.lil("submit", int_spec, "--run-id", "x", "--input", "tag=five")
    eq(res.rc, 1, "a mistyped input")
    check("tag" in res.err and "five" in res.err, "names input and value: %r" % res.err)
    res = t.lil("submit", spec, "--run-id", "x", "--input", "tag=x", "--input", "no=1")
    eq(res.rc, 1, "an unknown input")
    check("no" in res.err, "names the input: %r" % res.err)
    eq(w.states(t), {}, "still nothing queued")
    # a run id that exists (queued, or a run made by `lil run`)
    eq(t.lil("submit", spec, "--run-id", "x", "--input", "tag=x").rc, 0, "first submit")
    res = t.lil("submit", spec, "--run-id", "x", "--input", "tag=x")
    eq(res.rc, 1, "submit of a run id that exists")
    check("run x exists" in res.err and "--run-id" in res.err, "says so: %r" % res.err)
    eq(t.run("--run-id", "mine", "--input", "tag=mine", spec=spec).rc, 0, "lil run")
    res = t.lil("submit", spec, "--run-id", "mine", "--input", "tag=mine")
    eq(res.rc, 1, "submit of a run `lil run` made")
    check("run mine exists" in res.err, "says so: %r" % res.err)
    eq(w.states(t), {"x": "queued", "mine": ""}, "a run of `lil run` is not queued")
    # a queued run that no worker started is the workers': its start has the
    # inputs it was submitted with
    for verb, args in (("run", ("--input", "tag=other")), ("resume", ()),
                       ("approve", ("--reason", "r"))):
        res = t.lil(verb, spec, "--run-id", "x", *args)
        eq(res.rc, 1, "lil %s of a queued run not started" % verb)
        check("has not started" in res.err, "says so: %r" % res.err)
    eq([r.type for r in t.log("x")], ["begin"], "x's journal: its first record only")
    # usage
    for args in (("--concurrency", "0"), ("--concurrency", "65"), ("--idle-exit", "-1"),
                 ("--poll-ms", "x"), ("--name", ""), ("--frobnicate",), ("extra",)):
        w.loopt.expect_usage(t.lil("worker", *args), "worker")
    w.loopt.expect_usage(t.lil("submit"), "submit")
    w.loopt.expect_usage(t.lil("submit", spec, "--sync", "sometimes"), "submit")
    w.loopt.expect_usage(t.lil("submit", spec, "--wait"), "submit")
    # a store that cannot be reached: exit 1, the server's words
    res = t.lil("--dir", "postgresql:///x?host=/nonexistent-lil-dir", "worker")
    eq(res.rc, 1, "worker on a server that is not there")
    check("/nonexistent-lil-dir" in res.err, "names it: %r" % res.err)


# ---------------------------------------------------------------------------
# Paused, stopped, parked, uncertain: reaching the run wherever it is


GATE = """
loopspec: "0.1"
id: gate
pattern: react
state:
  vars:
    n: {type: int, init: 0}
body:
  - id: bump
    kind: shell
    cmd: "echo gate ${state.n} >> @SIDE@"
    on_done:
      incr: n
  - id: ask
    kind: breakpoint
    when: "${state.n == 1}"
    ask: "go on?"
terminate:
  signal: state-predicate
  until: "${state.n >= 3}"
caps:
  max_iterations: 10
"""


@test
def approve_sends_a_paused_run_back_to_the_queue(t):
    spec = t.spec(GATE)
    eq(t.lil("submit", spec).rc, 0, "submit")
    out = w.drain(t)
    eq([(o["run"], o["state"]) for o in out], [("gate", "paused")], "paused")
    check("go on?" in out[0]["message"], "the pause's reason: %r" % out[0])
    eq(w.row(t, "gate")["holder_pid"], "", "a paused run is held by no one")
    eq(w.drain(t), [], "a paused run is not claimed")
    res = t.run("--reason", "looks fine", verb="approve")
    w.loopt.expect(res, 4, status="waiting", queued=True)
    eq(w.states(t), {"gate": "queued"}, "approve queues it")
    check(t.side() == ["gate 0"], "approve ran nothing here: %r" % t.side())
    res = t.lil("approve", spec, "--reason", "again")
    eq(res.rc, 1, "approving a run that is not paused")
    out = w.drain(t)
    eq([(o["run"], o["state"]) for o in out], [("gate", "completed")], "completed")
    eq(t.side(), ["gate 0", "gate 1", "gate 2"], "each effect once")
    approvals = [r for r in t.log("gate")
                 if isinstance(r.p, dict) and r.p.get("reason") == "looks fine"]
    eq(len(approvals), 1, "the approval journaled once")


LONG = """
loopspec: "0.1"
id: long
pattern: react
state:
  vars:
    n: {type: int, init: 0}
body:
  - id: bump
    kind: shell
    cmd: "sleep 0.05; echo long ${state.n} >> @SIDE@"
    on_done:
      incr: n
terminate:
  signal: state-predicate
  until: "${state.n >= 30}"
caps:
  max_iterations: 60
"""


@test
def stop_reaches_the_worker_that_holds_the_run(t):
    spec = t.spec(LONG)
    eq(t.lil("submit", spec).rc, 0, "submit")
    p = w.worker(t)
    t.wait_for(lambda: len(t.side()) >= 2, "two iterations", proc=p)
    res = t.stop("--reason", "enough")
    eq(res.rc, 0, "lil stop")
    t.wait_for(lambda: w.states(t).get("long") == "stopped", "stopped", proc=p,
               timeout=20)
    w.kill(p, signal.SIGTERM)
    res = t.finish(p)
    eq(res.rc, 0, "the worker drains and exits")
    got = w.lines(res)
    eq([(o["run"], o["state"]) for o in got], [("long", "stopped")], "stopped")
    check("enough" in got[0]["message"], "the stop's reason: %r" % got[0])
    done = len(t.side())
    check(done < 30, "stopped before the end (%d)" % done)
    # resume: back to the queue; a worker goes on from where it stopped
    res = t.run(verb="resume", spec=spec)
    w.loopt.expect(res, 4, status="waiting", queued=True)
    out = w.drain(t)
    eq([(o["run"], o["state"]) for o in out], [("long", "completed")], "completed")
    eq(t.side(), ["long %d" % i for i in range(30)], "each effect once, in order")


NAP = """
loopspec: "0.1"
id: nap
pattern: react
state:
  vars:
    n: {type: int, init: 0}
body:
  - id: bump
    kind: shell
    cmd: "echo nap ${state.n} >> @SIDE@"
    on_done:
      incr: n
  - id: rest
    kind: sleep
    for: "@FOR@"
    when: "${state.n == 1}"
terminate:
  signal: state-predicate
  until: "${state.n >= 2}"
caps:
  max_iterations: 10
"""


@test
def parked_runs_are_claimed_when_due(t):
    spec = t.spec(NAP, FOR="2s")
    eq(t.lil("submit", spec).rc, 0, "submit")
    out = w.drain(t)
    eq([(o["run"], o["state"]) for o in out], [("nap", "parked")], "parked")
    wake = out[0]["wakeAt"]
    check(wake > time.time() * 1000, "wakeAt in the future: %r" % out[0])
    check(w.row(t, "nap")["has_wake"] == "true", "wake_at in the queue")
    eq(w.drain(t), [], "not claimed before its wake time")
    p = w.worker(t)
    t.wait_for(lambda: w.states(t)["nap"] == "completed", "completed", proc=p,
               timeout=20)
    w.kill(p, signal.SIGTERM)
    got = w.lines(t.finish(p))
    eq([(o["run"], o["state"]) for o in got], [("nap", "completed")], "claimed when due")
    check(time.time() * 1000 >= wake, "not before its wake time")
    eq(t.side(), ["nap 0", "nap 1"], "each effect once")


@test
def stop_of_a_parked_run_is_honoured_at_once(t):
    spec = t.spec(NAP, FOR="1h")
    eq(t.lil("submit", spec).rc, 0, "submit")
    eq([o["state"] for o in w.drain(t)], ["parked"], "parked for an hour")
    eq(t.stop("--reason", "not today").rc, 0, "lil stop")
    eq(w.states(t), {"nap": "queued"}, "a stop queues a waiting run")
    out = w.drain(t)
    eq([(o["run"], o["state"]) for o in out], [("nap", "stopped")], "stopped now")


@test
def sigterm_hands_the_run_back(t):
    spec = t.spec(LONG)
    eq(t.lil("submit", spec).rc, 0, "submit")
    p = w.worker(t)
    t.wait_for(lambda: len(t.side()) >= 2, "two iterations", proc=p)
    w.kill(p, signal.SIGTERM)
    res = t.finish(p, timeout=20)
    eq(res.rc, 0, "a drained worker exits 0")
    got = w.lines(res)
    eq([(o["run"], o["state"], o["status"]) for o in got],
       [("long", "queued", "waiting")], "handed back")
    st = w.row(t, "long")
    eq((st["state"], st["holder_pid"]), ("queued", ""), "queued, held by no one")
    out = w.drain(t)
    eq([(o["run"], o["state"]) for o in out], [("long", "completed")], "completed")
    eq(t.side(), ["long %d" % i for i in range(30)], "each effect once")


@test
def a_dead_workers_run_is_taken_over_and_recovered(t):
    spec = w.spec(t, 3, pause=1.0)
    w.submit(t, spec, ["k"])
    p = w.worker(t)
    t.wait_for(lambda: w.row(t, "k")["holder_pid"] != "", "claimed", proc=p)
    time.sleep(0.3)  # inside the first effect's sleep
    w.kill(p, signal.SIGKILL)
    t.finish(p)
    out = w.drain_until(t, "the takeover")  # its backend is gone: claimable
    eq([(o["run"], o["state"], o["takeover"]) for o in out], [("k", "uncertain", True)],
       "taken over: the effect in flight is uncertain, not run again")
    eq(w.row(t, "k")["epoch"], "2", "a new epoch")
    eq(w.drain(t), [], "an uncertain run is not claimed again")
    time.sleep(1.0)  # the killed worker's effect finishes on its own
    decided = w.settle(t, spec, ["k"])
    eq(dict(decided), {"assume-done": 1}, "the side file said it ran")
    w.check_exactly_once(t, ["k"], 3)


# ---------------------------------------------------------------------------
# Fencing


def fenced_after_stop(t, pause, nap, stop_when, what):
    """A worker claims run f and is SIGSTOPped when stop_when() holds; its
    lease runs out; a second worker takes f over; the first is SIGCONTed
    and must be fenced.  Returns (spec, first worker's lines, second's)."""
    spec = w.spec(t, 4, pause=pause, nap=nap)
    w.submit(t, spec, ["f"])
    a = w.worker(t, "--once", env=LEASE)
    t.wait_for(stop_when, what, proc=a, timeout=20)
    w.kill(a, signal.SIGSTOP)
    try:
        time.sleep(2.2)  # past its lease: no renewal while stopped
        b_out = w.drain(t, env=LEASE)
    finally:
        w.kill(a, signal.SIGCONT)
    a_out = w.lines(t.finish(a, timeout=30))
    return spec, a_out, b_out


@test
def a_paused_worker_is_fenced_during_its_effect(t):
    # stopped while its first effect sleeps: the effect finishes meanwhile
    # (it runs in a process group of its own), its outcome arrives after
    # the takeover and must not be journaled by the paused worker
    spec, a_out, b_out = fenced_after_stop(
        t, 1.0, None, lambda: any(r.type == "intent" for r in t.log("f")),
        "the first effect's intent")
    eq([(o["run"], o["state"], o["takeover"]) for o in b_out],
       [("f", "uncertain", True)], "the second worker finds the effect in doubt")
    eq([(o["run"], o["state"]) for o in a_out], [("f", "lost")], "the first is fenced")
    check("fenced" in a_out[0]["message"], "says so: %r" % a_out[0])
    recs = t.log("f")
    eq([r.key for r in recs if r.is_effect_outcome()], [],
       "the paused worker journaled no outcome")
    eq(w.executions(t)[("f", 0)], 1, "the effect ran once")
    w.settle(t, spec, ["f"])
    w.check_exactly_once(t, ["f"], 4)


@test
def a_paused_worker_is_fenced_between_effects(t):
    # stopped in the sleep after its first effect: the second worker goes
    # on with the run; the first, woken, appends nothing and starts no effect
    spec, a_out, b_out = fenced_after_stop(
        t, 0.0, "800ms", lambda: any(r.key == "0.1" for r in t.log("f")),
        "the sleep after the first effect")
    eq([(o["run"], o["takeover"]) for o in b_out], [("f", True)], "taken over")
    eq([(o["run"], o["state"]) for o in a_out], [("f", "lost")], "the first is fenced")
    w.settle(t, spec, ["f"])
    w.check_exactly_once(t, ["f"], 4)
    epochs = [r.p.get("pid") for r in t.log("f") if r.type == "open"]
    check(len(epochs) >= 2, "two holders opened it: %r" % epochs)


@test
def tick_leaves_queued_runs_to_the_workers(t):
    spec = t.spec(NAP, FOR="2s")
    eq(t.lil("submit", spec).rc, 0, "submit")
    eq([(o["run"], o["state"]) for o in w.drain(t)], [("nap", "parked")], "parked")
    t.wait_for(lambda: w.row(t, "nap")["state"] == "parked" and
               time.time() * 1000 > w.drain_wake(t, "nap"), "due", timeout=10)
    res = t.lil("tick", "--json")
    eq(res.rc, 0, "tick (stderr: %s)" % res.err)
    eq([(r["run"], r["action"]) for r in res.json["runs"]], [("nap", "skipped")],
       "a queued run is the workers'")
    check("queue" in res.json["runs"][0]["reason"], "says why: %r" % res.json)
    eq(w.states(t)["nap"], "parked", "tick left it parked")
    eq([(o["run"], o["state"]) for o in w.drain(t)], [("nap", "completed")],
       "a worker claims it")


# ---------------------------------------------------------------------------
# What operators see: `lil ls` and `lil workers`


def ls_rows(t):
    """run id -> (status, queue object) of `lil ls --json`."""
    res = t.lil("ls", "--json")
    eq(res.rc, 0, "lil ls --json (stderr: %s)" % res.err)
    return {r["id"]: (r["status"], r.get("queue")) for r in res.json["runs"]}


def workers_of(t):
    """`lil workers --json`'s workers."""
    res = t.lil("workers", "--json")
    eq(res.rc, 0, "lil workers --json (stderr: %s)" % res.err)
    return res.json["workers"]


@test
def ls_and_workers_show_the_queue(t):
    w.submit(t, w.spec(t, 1, name="one.yaml"), ["first"])
    eq([(o["run"], o["state"]) for o in w.drain(t)], [("first", "completed")], "first")
    long_spec = t.spec(LONG.replace("sleep 0.05", "sleep 0.3"))
    nap_spec = t.spec(NAP, FOR="1h", name="nap.yaml")
    eq(t.lil("submit", long_spec).rc, 0, "submit long")
    eq(t.lil("submit", nap_spec).rc, 0, "submit nap")
    rows = ls_rows(t)
    eq(rows["first"], ("completed", {"state": "completed", "worker": w.OWNER_ANY,
                                     "held": False, "attempts": 1, "wake_at_ms": None,
                                     "error": None}), "an ended run: its own status")
    eq(rows["long"][0], "queued", "a submitted run is queued, not running")
    eq(rows["long"][1], {"state": "queued", "worker": None, "held": False,
                         "attempts": 0, "wake_at_ms": None, "error": None}, "its queue")
    eq(workers_of(t), [], "no worker yet")
    res = t.lil("ls")
    check("WORKER" in res.out.splitlines()[0], "a WORKER column: %r" % res.out)
    # nap parks for an hour; long is claimed and held while it runs
    p = w.worker(t, "--name", "ops-1", "--concurrency", "2")
    t.wait_for(lambda: len([x for x in t.side() if x.startswith("long")]) >= 2,
               "long runs", proc=p)
    rows = ls_rows(t)
    eq((rows["long"][0], rows["long"][1]["worker"], rows["long"][1]["held"]),
       ("claimed", "ops-1", True), "long is claimed by ops-1")
    t.wait_for(lambda: ls_rows(t)["nap"][0] == "parked", "nap parked", proc=p)
    check(ls_rows(t)["nap"][1]["wake_at_ms"] > time.time() * 1000, "its wake time")
    text = [x for x in t.lil("ls").out.splitlines() if x.startswith("long ")]
    check(text and " claimed " in text[0] and " ops-1 " in text[0],
          "text: status and worker: %r" % text)
    ws = workers_of(t)
    eq(len(ws), 1, "one worker process: %r" % ws)
    eq((ws[0]["name"], ws[0]["state"], ws[0]["pid"], ws[0]["threads"], ws[0]["runs"]),
       ("ops-1", "live", p.pid, 2, ["long"]), "the worker, its threads and its run")
    check(ws[0]["age_ms"] < ws[0]["lease_ms"], "a fresh heartbeat: %r" % ws[0])
    text = t.lil("workers").out.splitlines()
    check(len(text) == 2 and text[1].startswith("ops-1 ") and " live " in text[1]
          and text[1].rstrip().endswith("long"), "text: %r" % text)
    w.kill(p, signal.SIGTERM)
    eq(t.finish(p).rc, 0, "the worker drains")
    eq(workers_of(t), [], "a worker that exits leaves the registry")
    rows = ls_rows(t)
    eq((rows["long"][0], rows["long"][1]["state"]), ("queued", "queued"),
       "handed back: queued again")


@test
def a_dead_worker_is_listed_lost(t):
    spec = t.spec(LONG)
    eq(t.lil("submit", spec).rc, 0, "submit")
    p = w.worker(t, "--name", "doomed", env=LEASE)
    t.wait_for(lambda: len(t.side()) >= 1, "the run started", proc=p)
    check([x["state"] for x in workers_of(t)] == ["live"], "live while it runs")
    w.kill(p, signal.SIGKILL)
    t.finish(p)
    # its lease (1.5 s) passes without a heartbeat: lost, its run still named
    t.wait_for(lambda: [x["state"] for x in workers_of(t)] == ["lost"], "lost",
               timeout=20)
    ws = workers_of(t)
    eq((ws[0]["name"], ws[0]["runs"]), ("doomed", ["long"]), "the run it held")
    check(ws[0]["age_ms"] >= ws[0]["lease_ms"], "older than its lease: %r" % ws[0])
    check(" lost " in t.lil("workers").out, "text says lost")
    eq(ls_rows(t)["long"][1]["held"], False, "its run's lease is gone")
    # a row an hour silent goes when the next worker registers
    w.sql(t, "UPDATE @.workers SET heartbeat = now() - interval '2 hours'")
    out = w.drain(t)
    # killed in an effect or between two: uncertain or completed
    eq([(o["run"], o["takeover"]) for o in out], [("long", True)], "taken over")
    check(out[0]["state"] in ("completed", "uncertain"), "its end: %r" % out[0])
    eq(workers_of(t), [], "the dead worker's row expired")


@test
def worker_lines_are_claims_and_ends(t):
    spec = w.spec(t, 1)
    w.submit(t, spec, ["e1"])
    res = t.lil("worker", "--json", "--idle-exit", "0", "--name", "ev")
    eq(res.rc, 0, "worker")
    evs = w.events(res)  # each line checked against worker-event.schema.json
    eq([(o["event"], o["run"], o["epoch"], o["attempt"]) for o in evs],
       [("claim", "e1", 1, 1), ("end", "e1", 1, 1)], "a claim, then its end")
    eq(evs[1]["state"], "completed", "the end's state")
    check(evs[0]["time"].endswith("Z"), "a time in UTC: %r" % evs[0])


# ---------------------------------------------------------------------------
# Campaigns


@test
def four_workers_two_hundred_runs(t):
    n_runs = 400 if SLOW else 200
    ids = ["c%03d" % i for i in range(n_runs)]
    spec = w.spec(t, 2)
    t0 = time.monotonic()
    w.submit(t, spec, ids, parallel=8)
    t1 = time.monotonic()
    procs = [w.worker(t, "--idle-exit", "1") for _ in range(4)]
    got = []
    for p in procs:
        res = t.finish(p, timeout=600)
        eq(res.rc, 0, "worker's exit status")
        got.append(w.lines(res))
    t2 = time.monotonic()
    print("  %d runs: submitted in %.1fs, run in %.1fs by 4 workers (%s)"
          % (n_runs, t1 - t0, t2 - t1, "/".join(str(len(g)) for g in got)))
    eq(sorted(o["run"] for g in got for o in g), ids, "each run handled once")
    check(all(o["state"] == "completed" and o["epoch"] == 1 for g in got for o in g),
          "completed at the first claim")
    check(sum(1 for g in got if g) >= 2, "the work was shared: %r" % [len(g) for g in got])
    w.check_exactly_once(t, ids, 2)
    w.check_journals(t, ids)


@test
def workers_sigkilled_at_random(t):
    kills_wanted = 1000 if SLOW else 100
    n_runs = 400 if SLOW else 60
    iters = 6
    seed = int(os.environ.get("T_SEED", time.time()))
    rnd = random.Random(seed)
    print("  seed %d, %d kills" % (seed, kills_wanted))
    ids = ["k%03d" % i for i in range(n_runs)]
    spec = w.spec(t, iters, pause=0.02)
    w.submit(t, spec, ids, parallel=8)
    procs = [w.worker(t) for _ in range(4)]
    kills = 0
    while kills < kills_wanted:
        time.sleep(rnd.uniform(0.03, 0.12))
        i = rnd.randrange(len(procs))
        w.kill(procs[i], signal.SIGKILL)
        t.finish(procs[i])
        kills += 1
        procs[i] = w.worker(t)
        if kills % 10 == 0 and sum(1 for s in w.states(t).values()
                                   if s not in w.TERMINAL + ("uncertain",)) < 20:
            more = ["x%04d-%d" % (kills, j) for j in range(20)]  # work for the kills
            w.submit(t, spec, more, parallel=8)
            ids += more
    for p in procs:
        w.kill(p, signal.SIGTERM)
        eq(t.finish(p, timeout=60).rc, 0, "a worker drained")
    time.sleep(0.3)  # effects of killed workers finish on their own
    st = w.states(t)
    uncertain = sum(1 for s in st.values() if s == "uncertain")
    decided = w.settle(t, spec, ids)
    print("  %d kills; %d runs; %d uncertain after them; decided %r"
          % (kills, len(ids), uncertain, dict(decided)))
    w.check_exactly_once(t, ids, iters)
    w.check_journals(t, ids)


if __name__ == "__main__":
    w.main()

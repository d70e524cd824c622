#!/usr/bin/env python3
"""workert.py -- what the tests of `lil submit` and `lil worker` share
(tests/pg/t_workers.py, t_workers_faults.py).  Python 3, standard library
only, on top of tests/loop/loopt.py (a Case: a directory, a store that is a
schema of the test server, `lil` commands and their results).

The runs of these tests are loops whose shell effects append "TAG N" to the
case's side file, TAG being the run's input `tag` (its run id) and N the
iteration (the state's n, which the effect's on_done increments): a line is
one execution of one effect.  So the side file alone says how many times
each effect ran, whatever happened to the workers and the server:

  - a run that completed must show each of its effects exactly once;
  - a run left uncertain shows the effect in doubt at most once; settle()
    decides it as an operator would -- assume-done when the side file shows
    it ran, retry when it does not -- and lets the workers finish the run.

The queue's states are read from the server with psql (the schema of the
case's store).  Workers are `lil worker --json` processes of the case
(spawned, ended by their own pid).
"""

import collections
import os
import random
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "loop"))
# every case's store is a schema of the server at LIL_TEST_PG (loopt.Case)
os.environ["LIL_TEST_STORE"] = "pg"
import loopt  # noqa: E402
from loopt import check, eq, fail, test  # noqa: E402,F401

# A loop of ITERS iterations, one shell effect each: "TAG N" into the side
# file, after PAUSE (a sleep inside the effect: room for a kill to land).
SPEC = """
loopspec: "0.1"
id: w
pattern: react
inputs:
  tag: {type: string, required: true}
state:
  vars:
    n: {type: int, init: 0}
body:
  - id: bump
    kind: shell
    cmd: "@PAUSE@echo ${inputs.tag} ${state.n} >> @SIDE@"
    on_done:
      incr: n
@NAP@terminate:
  signal: state-predicate
  until: "${state.n >= @ITERS@}"
caps:
  max_iterations: 100
"""

TERMINAL = ("completed", "failed", "stopped", "error")


def spec(case, iters, pause=0.0, nap=None, name="loop.yaml"):
    """Write the test loop: iters iterations, an effect sleeping pause s,
    and after it, when nap is given ("800ms"), a sleep step in-process."""
    nap_step = ('  - id: nap\n    kind: sleep\n    for: "%s"\n' % nap) if nap else ""
    return case.spec(SPEC, name=name, ITERS=iters, NAP=nap_step,
                     PAUSE="sleep %g; " % pause if pause else "")


# ---------------------------------------------------------------------------
# The server


def _split(store):
    """(libpq URI without schema=, schema) of a store location."""
    m = re.search(r"[?&]schema=([a-z0-9_]+)", store)
    if not m:
        fail("no schema in %s" % store)
    uri = store[:m.start()] + store[m.end():]
    if "?" not in uri and "&" in uri:
        uri = uri.replace("&", "?", 1)
    return uri, m.group(1)


def sql(case, query):
    """Rows of query ('@' stands for the case's schema) as lists of text."""
    uri, schema = _split(case.store)
    p = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-F", "|", "-d", uri, "-c",
                        query.replace("@", '"%s"' % schema)],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        fail("psql: %s\n%s" % (query, p.stderr))
    return [line.split("|") for line in p.stdout.splitlines() if line]


def states(case):
    """run id -> its queue state."""
    return {r[0]: r[1] for r in sql(case, "SELECT run_id, state FROM @.runs")}


def row(case, run_id):
    """The queue's columns of one run as a dict."""
    cols = ["state", "lease_epoch", "attempts", "claimed_by", "last_error",
            "wake_at IS NOT NULL", "holder_pid"]
    rows = sql(case, "SELECT %s FROM @.runs WHERE run_id = '%s'"
               % (", ".join("coalesce((%s)::text, '')" % c for c in cols), run_id))
    if not rows:
        fail("no run %s in the queue" % run_id)
    return dict(zip(["state", "epoch", "attempts", "claimed_by", "last_error",
                     "has_wake", "holder_pid"], rows[0]))


def drain_wake(case, run_id):
    """The wake time of a queued run, epoch ms (0 when it has none)."""
    rows = sql(case, "SELECT coalesce((extract(epoch FROM wake_at) * 1000)::bigint, 0)"
               " FROM @.runs WHERE run_id = '%s'" % run_id)
    return int(rows[0][0]) if rows else 0


def terminate_backends(case, where="backend_type = 'client backend'"):
    """pg_terminate_backend of the sessions where says (not psql's own)."""
    uri, _ = _split(case.store)
    q = ("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE %s "
         "AND pid <> pg_backend_pid()" % where)
    p = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-d", uri, "-c", q],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        fail("psql: %s\n%s" % (q, p.stderr))
    return int(p.stdout.strip() or 0)


# ---------------------------------------------------------------------------
# Submitting and working


def submit(case, spec_path, run_ids, parallel=4):
    """`lil submit SPEC --run-id ID --input tag=ID` for each id, a few at
    once; every one must queue."""
    pending = list(run_ids)
    running = []
    while pending or running:
        while pending and len(running) < parallel:
            rid = pending.pop(0)
            running.append((rid, case.spawn("submit", spec_path, "--run-id", rid,
                                            "--input", "tag=" + rid, "--json")))
        rid, p = running.pop(0)
        res = case.finish(p, timeout=60)
        if res.rc != 0:
            fail("lil submit %s: exit %s\n%s" % (rid, res.rc, res.describe()))


def worker(case, *args, env=None):
    """A `lil worker --json --poll-ms 50 ARGS` process of the case."""
    return case.spawn("worker", "--json", "--poll-ms", "50", *args, env=env)


class _Any:
    """Equal to any string (a worker's default name names its pid)."""

    def __eq__(self, other):
        return isinstance(other, str)

    def __repr__(self):
        return "<any name>"


OWNER_ANY = _Any()


def events(res):
    """Every JSON object a finished worker printed: claims and ends."""
    import json
    out = []
    for line in res.out.splitlines():
        line = line.strip()
        if line:
            out.append(json.loads(line))
    return out


def lines(res):
    """The runs a finished worker handled: its "end" lines, each after the
    "claim" line of the same run and epoch."""
    out, claimed = [], set()
    for o in events(res):
        key = (o["run"], o["epoch"])
        if o["event"] == "claim":
            check(key not in claimed, "one claim line per claim: %r" % (o,))
            claimed.add(key)
        else:
            eq(o["event"], "end", "a worker's line is a claim or an end")
            check(key in claimed, "the end of %r follows its claim" % (key,))
            claimed.discard(key)
            out.append(o)
    return out


def drain(case, env=None, timeout=300, concurrency=1):
    """`lil worker --idle-exit 0` until nothing is runnable; its lines."""
    res = case.lil("worker", "--json", "--poll-ms", "50", "--idle-exit", "0",
                   "--concurrency", str(concurrency), env=env, timeout=timeout)
    if res.rc != 0:
        fail("lil worker: exit %s\n%s" % (res.rc, res.describe()))
    return lines(res)


def drain_until(case, what, env=None, timeout=10.0):
    """drain() again until it handles a run (a dead worker's backend may take
    a moment to go): its lines."""
    end = time.monotonic() + timeout
    while True:
        out = drain(case, env=env)
        if out:
            return out
        if time.monotonic() > end:
            fail("timed out after %ss waiting for %s" % (timeout, what))
        time.sleep(0.05)


# ---------------------------------------------------------------------------
# The side file


def executions(case):
    """(tag, n) -> how many times that effect ran."""
    c = collections.Counter()
    for line in case.side():
        parts = line.split()
        if len(parts) == 2:
            c[(parts[0], int(parts[1]))] += 1
        else:
            fail("a side line that no effect writes: %r" % line)
    return c


def uncertain_iteration(case, run_id):
    """The iteration of run_id's effect in doubt (lil inspect --json)."""
    res = case.lil("inspect", run_id, "--json")
    if res.rc not in (0, 2) or not isinstance(res.json, dict):
        fail("lil inspect %s: exit %s" % (run_id, res.rc))
    unc = (res.json.get("loop") or {}).get("uncertain")
    if not unc:
        fail("run %s is uncertain in the queue, not in its journal" % run_id)
    return unc["iteration"]


def recover(case, spec_path, run_id):
    """Decide run_id's effect in doubt from the side file; 'assume-done' or
    'retry'.  The run goes back to the queue (exit 4)."""
    it = uncertain_iteration(case, run_id)
    ran = executions(case)[(run_id, it)]
    if ran > 1:
        fail("effect %d of run %s ran %d times before its recovery" % (it, run_id, ran))
    if ran == 1:
        how = ("--assume-done", "--result-json", '{"stdout":"","code":0}')
    else:
        how = ("--retry",)
    res = case.lil("recover", spec_path, "--run-id", run_id, *how,
                   "--reason", "the side file says", "--json")
    if res.rc != 4 or not (res.json or {}).get("queued"):
        fail("lil recover %s: exit %s, want 4 and queued\n%s"
             % (run_id, res.rc, res.describe()))
    return how[0][2:]


def settle(case, spec_path, run_ids, env=None, rounds=20):
    """Drain the queue with a worker, recover what is uncertain, again,
    until every run has ended; returns {"retry": n, "assume-done": n}."""
    decided = collections.Counter()
    for _ in range(rounds):
        drain(case, env=env, concurrency=4)
        st = states(case)
        open_ = [r for r in run_ids if st.get(r) not in TERMINAL]
        if not open_:
            return decided
        waiting = False
        for rid in open_:
            if st.get(rid) == "uncertain":
                decided[recover(case, spec_path, rid)] += 1
            else:
                waiting = True  # held under a lease that has yet to run out
        if waiting:
            time.sleep(0.5)
    fail("runs that did not end: %r" % {r: s for r, s in states(case).items()
                                         if s not in TERMINAL})


def check_exactly_once(case, run_ids, iters):
    """Every run completed, each effect ran once, nothing else ran."""
    st = states(case)
    not_done = {r: st.get(r) for r in run_ids if st.get(r) != "completed"}
    if not_done:
        fail("runs that did not complete: %r" % not_done)
    ex = executions(case)
    doubles = {k: v for k, v in ex.items() if v > 1}
    missing = [(r, n) for r in run_ids for n in range(iters) if ex[(r, n)] == 0]
    strays = [k for k in ex if k[0] not in run_ids or not 0 <= k[1] < iters]
    if doubles or missing or strays:
        fail("effects run twice: %r; never: %r; unknown: %r"
             % (doubles, missing[:20], strays[:20]))


def check_journals(case, run_ids, sample=10):
    """`lil check` of some runs: intact."""
    for rid in random.sample(list(run_ids), min(sample, len(run_ids))):
        res = case.lil("check", rid)
        if res.rc != 0:
            fail("lil check %s: exit %s\n%s" % (rid, res.rc, res.describe()))


def kill(p, sig):
    """Signal a spawned process by its pid (nothing when it has ended)."""
    if p.poll() is None:
        os.kill(p.pid, sig)


def main():
    loopt.main()

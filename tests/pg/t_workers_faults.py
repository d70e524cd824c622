#!/usr/bin/env python3
"""t_workers_faults.py -- `lil worker` under server faults: 4 workers run
queued loop runs while the PostgreSQL server is restarted (pg_ctl restart
-m fast, and -m immediate: a crash of the server, WAL recovery) and while
their connections are ended (pg_terminate_backend).  The workers live
through it: a run whose commit was cut is poisoned and recorded (or left
running) as the server allows, claims fail until the server is back, and
the runs are claimed again afterwards.  Then, for each kind of fault:

  - 0 double executions: every run completed and each of its effects ran
    exactly once (the side file; workert.py);
  - 0 lost completed steps: an effect is in doubt only where a fault cut
    its worker between its intent and its outcome -- at most one per
    worker and fault -- and every journal checks intact.

The test starts a server of its own (tests/pg/pgserver.sh, LIL_PGSERVER):
restarting the suite's server would break the tests running beside it.
Default: 2 faults of each kind; --slow (label slow): 10.
"""

import atexit
import os
import random
import signal
import subprocess
import sys
import time

SLOW = "--slow" in sys.argv
if SLOW:
    sys.argv.remove("--slow")

SERVER_DIR = "/tmp/lil-pgw-%d" % os.getpid()
PGSERVER = os.environ.get("LIL_PGSERVER")


def server(action, *args):
    p = subprocess.run(["bash", PGSERVER, action, SERVER_DIR] + list(args),
                       capture_output=True, text=True, timeout=180)
    if p.returncode != 0:
        sys.exit("pgserver.sh %s: %s%s" % (action, p.stdout, p.stderr))
    return p.stdout.strip()


if not PGSERVER:
    sys.exit("LIL_PGSERVER is not set (tests/pg/CMakeLists.txt sets it)")
os.environ["LIL_TEST_PG"] = server("start")
atexit.register(lambda: subprocess.run(["bash", PGSERVER, "stop", SERVER_DIR],
                                       capture_output=True))

import workert as w  # noqa: E402  (after LIL_TEST_PG: loopt's cases read it)
from workert import check, eq, test  # noqa: E402

N_FAULTS = 10 if SLOW else 2
N_WORKERS = 4


def restart(mode):
    def fault(t):
        server("restart", mode)
    return fault


def terminate(t):
    w.terminate_backends(t)


def campaign(t, fault, name):
    seed = int(os.environ.get("T_SEED", time.time()))
    rnd = random.Random(seed)
    n_runs, iters = (120, 6) if SLOW else (40, 5)
    ids = ["%s%03d" % (name, i) for i in range(n_runs)]
    spec = w.spec(t, iters, pause=0.02)
    w.submit(t, spec, ids, parallel=8)
    procs = [w.worker(t) for _ in range(N_WORKERS)]
    for k in range(N_FAULTS):
        time.sleep(rnd.uniform(0.3, 0.9))
        fault(t)
        for p in procs:
            check(p.poll() is None, "a worker lived through fault %d" % k)
    # let the workers finish what they can, then hand back and stop
    end = time.monotonic() + 120
    while time.monotonic() < end:
        st = w.states(t)
        if all(s in w.TERMINAL + ("uncertain",) for s in st.values()):
            break
        time.sleep(0.2)
    for p in procs:
        w.kill(p, signal.SIGTERM)
        eq(t.finish(p, timeout=60).rc, 0, "a worker drained and exited 0")
    time.sleep(0.2)
    decided = w.settle(t, spec, ids)
    in_doubt = sum(decided.values())
    print("  seed %d: %d faults (%s); %d runs; %d effects in doubt after them (%r)"
          % (seed, N_FAULTS, name, n_runs, in_doubt, dict(decided)))
    check(in_doubt <= N_FAULTS * N_WORKERS,
          "%d effects in doubt: more than a worker's one in flight per fault" % in_doubt)
    w.check_exactly_once(t, ids, iters)
    w.check_journals(t, ids, sample=n_runs)


@test
def server_restarted_fast(t):
    campaign(t, restart("fast"), "f")


@test
def server_restarted_immediate(t):
    campaign(t, restart("immediate"), "i")


@test
def connections_terminated(t):
    campaign(t, terminate, "t")


if __name__ == "__main__":
    w.main()

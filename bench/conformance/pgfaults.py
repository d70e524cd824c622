"""pgfaults.py -- the faults that need a PostgreSQL server: a server of the
benchmark's own (tests/pg/pgserver.sh: a unix socket, fsync on) in a short
directory under /tmp, stopped at the end.

  pgstop    lil from C on the PostgreSQL store and DBOS on a PostgreSQL
            system database, the server stopped with `pg_ctl stop -m
            immediate` mid-run and started again (pgserver.sh restart
            immediate); a life that ends without completing is started again
  sigstop   the loop face queued (`lil submit`) and run by `lil worker`
            processes with a 1 s lease (LIL_PG_LEASE_MS): worker A is
            stopped (SIGSTOP) at a random moment of its work, worker B takes
            the run over once A's lease has run out, and A is continued
            (SIGCONT) while B works: A must write nothing and start no
            effect (fencing); an effect A had in flight makes the run
            uncertain, decided by the operator as for the other faults
            (`lil recover`, which queues the run again for B)

Without the server's programs the rows say they did not run.
"""

import json
import os
import signal
import subprocess
import tempfile
import time

import analyze
import registry
import summary
import trial

LEASE_MS = 1000


class PG:
    def __init__(self, root):
        self.script = os.path.join(root, "tests", "pg", "pgserver.sh")
        self.dir = tempfile.mkdtemp(prefix="lil-conf-pg.", dir="/tmp")
        r = subprocess.run(["bash", self.script, "start", self.dir], capture_output=True,
                           text=True, check=False)
        self.url = r.stdout.strip() if r.returncode == 0 else None
        self.error = r.stderr.strip().splitlines()[-1:] if r.returncode else []

    def restart_immediate(self):
        subprocess.run(["bash", self.script, "restart", self.dir, "immediate"],
                       capture_output=True, check=False)

    def stop(self):
        subprocess.run(["bash", self.script, "stop", self.dir], capture_output=True,
                       check=False)


def _lil(ctx, env, *args):
    return subprocess.run([ctx.lil, "--json"] + list(args), env=env, capture_output=True,
                          text=True, check=False)


class WorkerTrial:
    """One run through two `lil worker` processes, the first stopped past
    its lease."""

    def __init__(self, b, eng, run, steps, t_work):
        self.b, self.ctx, self.rec = b, b.ctx, b.srv.rec
        self.eng, self.run, self.steps, self.t_work = eng, run, steps, t_work
        self.env = dict(eng.env(self.ctx, run, steps), LIL_PG_LEASE_MS=str(LEASE_MS))
        self.out = trial.record(run)

    def _worker(self):
        self.out["lives"] += 1
        log = open(os.path.join(self.ctx.scratch, "engines.log"), "ab")
        p = subprocess.Popen([self.ctx.lil, "worker", "--idle-exit", "3"], env=self.env,
                             stdout=log, stderr=log, start_new_session=True)
        log.close()
        return p

    def _inspect(self):
        r = _lil(self.ctx, self.env, "inspect", self.run)
        try:
            return json.loads(r.stdout)
        except ValueError:
            return {}

    def _recover(self, facts):
        slot = (facts.get("uncertain") or ["0.0"])[0]
        it, s = (int(x) for x in str(slot).split(".")[:2])
        step = 2 * it + s
        self.rec.settle()
        with self.rec.lock:
            receipt = self.rec.applied.get((self.run, step))
        self.out["uncertain"] += 1
        self.out["assumed" if receipt else "retried"] += 1
        how = (["--assume-done", "--result-json", self.eng.assumed(receipt)] if receipt
               else ["--retry"])
        _lil(self.ctx, self.env, "recover", registry.SPEC, "--run-id", self.run, *how,
             "--reason", "the operator looked the effect up in the ledger",
             "--actor", "conformance")

    def go(self, rng):
        r = _lil(self.ctx, self.env, "submit", registry.SPEC,
                 *self.eng.inputs(self.ctx, self.run, self.steps)[2:], "--run-id", self.run)
        if r.returncode != 0:
            self.out["notes"].append("lil submit failed")
            return self.out
        t0 = time.monotonic()
        a = self._worker()
        while self.rec.arrival_after(t0) is None and a.poll() is None:
            time.sleep(0.002)
        time.sleep(rng.uniform(0, self.t_work))
        self.out["faults"] += 1
        self.out["inside" if self.rec.busy() else "between"] += 1
        os.killpg(a.pid, signal.SIGSTOP)
        b = self._worker()
        t_b = time.monotonic()
        continued = False
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if not continued and self.rec.arrival_after(t_b) is not None:
                time.sleep(rng.uniform(0, self.t_work / 2))
                os.killpg(a.pid, signal.SIGCONT)
                continued = True
            facts = self._inspect()
            status = (facts.get("loop") or {}).get("status")
            if status == "completed":
                self.out["tags"] = facts["loop"]["state"]["tags"]
                break
            if status == "uncertain":
                self._recover(facts)
            if b.poll() is not None:
                b = self._worker()
            time.sleep(0.05)
        if not continued:
            os.killpg(a.pid, signal.SIGCONT)
        for p in (a, b):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            p.wait()
        if self.out["tags"] is None:
            self.out["notes"].append("the pipeline did not complete")
        return self.out


def _sigstop_campaign(b, eng, steps, t_work, target):
    trials, measures = [], []
    t_end = time.monotonic() + b.a.budget
    while len(trials) < target and time.monotonic() < t_end:
        run = b.new_run(eng)
        out = WorkerTrial(b, eng, run, steps, t_work).go(b.rng)
        calls, effects = b.srv.rec.snapshot(run)
        trials.append(out)
        measures.append(analyze.trial(calls, effects, out["tags"], steps))
    c = summary.cell(eng, "sigstop", steps, trials, measures)
    b.cells.append(c)


def run(a, b, ctx, want, prepare_venvs):
    engines = [e for e in registry.pg_engines() if want(e.name)]
    workers = want("lil-worker")
    if not engines and not workers:
        return
    pg = PG(ctx.root)
    if not pg.url:
        b.skipped.append("the PostgreSQL faults: no server could be started "
                         f"(tests/pg/pgserver.sh: {' '.join(pg.error)})")
        return
    try:
        ctx.pg_url = pg.url
        subprocess.run([ctx.lil, "--dir", pg.url, "db", "init"], capture_output=True,
                       check=False)
        hooks = {"pgstop": pg.restart_immediate}
        for e in prepare_venvs(a, ctx, engines, b.skipped):
            b.engine(e, ("pgstop",), hooks)
        if workers:
            eng = registry.worker_engine()
            for steps in a.steps:
                times = b.calibrate(eng, steps)
                if times is None:
                    b.skipped.append(f"{eng.label}, N = {steps}: no run without faults")
                    continue
                _sigstop_campaign(b, eng, steps, times[1], max(5, a.target // 4))
    finally:
        pg.stop()

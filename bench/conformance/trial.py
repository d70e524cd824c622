"""trial.py -- one trial: a pipeline run to completion under a fault.

A trial starts the engine (a *life*), and a fault strikes the life at a
uniformly random moment, up to a number of faults per trial; then the
engine is started again, until a life completes the pipeline.  One fault
in four is drawn in [0, T] after the life's start (T: how long a whole
life took this engine without faults: start-up, replay and work), the
others in [0, W] after the life's first request (W: how long the
pipeline's requests took without faults), so that most land while the
engine works on the pipeline, inside steps and between them.  A life that
makes no request (it replays to the end, or reports uncertain effects at
once) is struck only by the first kind.  What a fault does:

  sigkill     SIGKILL to the life's process group
  powercut    SIGKILL, then the power cut of the test harness (lil_c cut:
              the writes no sync covered are dropped, torn or garbled)
  pgstop      the PostgreSQL server stopped with `pg_ctl stop -m
              immediate` and started again; the life is left to cope, and
              started again if it ends without completing

A journal the engine's open refuses as damaged (lil after a power cut
that kept a later unsynced write and lost an earlier one) is repaired by
the operator with `lil check --repair`, as lil's docs say, and counted.
A life that reports uncertain effects hands them to the operator: it looks
each effect up in the ledger by what it is (run and step), and records
assume-done with the ledger's receipt when the ledger applied it, else
retry (an uncertain LLM call is retried); it looks only once the servers
have answered every request they received (a killed process's request may
still be in flight at the ledger).  The life is classified at the
fault as *inside a step* (a request of the workload was in flight at the
servers) or *between steps*.  The trial's record holds every life, the
faults, the decisions and the time from each restart to its first request
(resume latency).
"""

import os
import signal
import subprocess
import time


def record(run):
    """A trial's record, empty: what summary.cell reads of every trial."""
    return {"run": run, "faults": 0, "inside": 0, "between": 0, "uncertain": 0,
            "assumed": 0, "retried": 0, "errors": 0, "repaired": 0, "lives": 0,
            "cut": {"unsynced": 0, "dropped": 0, "torn": 0, "garbled": 0},
            "resume_ms": [], "tags": None, "notes": []}


class Trial:
    def __init__(self, engine, ctx, rec, run, steps, fault, rng, t_full, max_faults,
                 hooks=None, life_timeout=120.0, t_work=None):
        self.e, self.ctx, self.rec = engine, ctx, rec
        self.run, self.steps, self.fault, self.rng = run, steps, fault, rng
        self.t_full, self.max_faults = t_full, max_faults
        self.t_work = t_work if t_work is not None else t_full
        self.hooks = hooks or {}
        self.life_timeout = life_timeout
        self.out = record(run)
        self.spans = []  # (start, end) of every life

    # -- a life --------------------------------------------------------------
    def _spawn(self, argv):
        log = open(os.path.join(self.ctx.scratch, "engines.log"), "ab")
        p = subprocess.Popen(argv, env=self.e.env(self.ctx, self.run, self.steps),
                             stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        log.close()
        return p

    def _kill(self, p):
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def _life(self, argv, faulty):
        """Run one life; returns (exit code, stdout, faulted)."""
        self.out["lives"] += 1
        t0 = time.monotonic()
        p = self._spawn(argv)
        fault_at, work_at = self._fault_moment(t0, faulty)
        limit = t0 + self.life_timeout
        faulted = False
        while True:
            if work_at is not None:  # waiting for the life's first request
                first = self.rec.arrival_after(t0)
                if first is not None:
                    fault_at, work_at = first + work_at, None
            wake = min(fault_at, limit) if fault_at is not None else limit
            if work_at is not None:
                wake = min(wake, time.monotonic() + 0.002)
            try:
                out, _ = p.communicate(timeout=max(0.0, wake - time.monotonic()))
                break
            except subprocess.TimeoutExpired:
                if fault_at is not None and time.monotonic() >= fault_at:
                    fault_at, faulted = None, True
                    self._fault(p)
                elif time.monotonic() >= limit:
                    self.out["notes"].append("a life exceeded its time limit: killed")
                    self._kill(p)
                    limit = float("inf")
        self.spans.append((t0, time.monotonic()))
        return p.returncode, out.decode(errors="replace"), faulted

    def _fault_moment(self, t0, faulty):
        """(absolute moment, None), or (None, delay after the life's first
        request): one fault in four is drawn from the life's start (start-up
        and replay included), the others from its first request (its work
        on the pipeline), uniformly over the span the calibration saw."""
        if not faulty:
            return None, None
        if self.rng.random() < 0.25:
            return t0 + self.rng.uniform(0, self.t_full), None
        return None, self.rng.uniform(0, self.t_work)

    def _fault(self, p):
        self.out["faults"] += 1
        self.out["inside" if self.rec.busy() else "between"] += 1
        if self.fault == "pgstop":
            self.hooks["pgstop"]()
            return
        self._kill(p)
        p.wait()
        if self.fault == "powercut":
            seed = str(self.rng.getrandbits(63))
            r = subprocess.run([self.ctx.lil_c, "cut", self.e.pclog(self.ctx, self.run), seed],
                               capture_output=True, text=True, check=False)
            self._count_cut(r.stdout)

    def _count_cut(self, text):
        """Add what the cut undid (lil_c cut's CUT line: the writes no sync
        covered, and how many of them it dropped, tore or garbled)."""
        words = dict(w.split("=", 1) for w in text.split()[1:] if "=" in w)
        for k in ("unsynced", "dropped", "torn", "garbled"):
            self.out["cut"][k] += int(words.get(k, 0))

    # -- the operator --------------------------------------------------------
    def _decide(self, ident):
        step = self.e.step_of(ident)
        self.rec.settle()
        with self.rec.lock:
            receipt = self.rec.applied.get((self.run, step))
        how = "assume_done" if receipt else "retry"
        self.out["assumed" if receipt else "retried"] += 1
        return how, receipt

    def _resume_latencies(self):
        """Restart to first request, for every life after the first that
        made one (its requests are all recorded once the trial is over)."""
        time.sleep(0.1)
        for t0, t1 in self.spans[1:]:
            first = self.rec.first_after(t0)
            if first is not None and first <= t1:
                self.out["resume_ms"].append((first - t0) * 1e3)

    # -- the trial -----------------------------------------------------------
    def go(self):
        self._go()
        self._resume_latencies()
        return self.out

    def _go(self):
        argv = self.e.run_argv(self.ctx, self.run, self.steps)
        deadline = time.monotonic() + max(60.0, 40 * self.t_full)
        while time.monotonic() < deadline:
            faulty = self.out["faults"] < self.max_faults
            code, out, faulted = self._life(argv, faulty)
            argv = self.e.run_argv(self.ctx, self.run, self.steps)
            if faulted and self.fault != "pgstop":
                continue
            kind, payload = self.e.parse(code, out)
            if kind == "done":
                self.out["tags"] = payload
                return
            if kind == "uncertain":
                self.out["uncertain"] += len(payload)
                ident = payload[0]
                how, receipt = self._decide(ident)
                argv = self.e.resolve_argv(self.ctx, self.run, self.steps, ident, how, receipt)
                if not self.e.recover_runs:
                    self._life(argv, False)
                    argv = self.e.run_argv(self.ctx, self.run, self.steps)
                continue
            if kind == "damaged":
                self.out["repaired"] += 1
                subprocess.run(self.e.repair_argv(self.ctx, self.run), capture_output=True,
                               check=False)
                continue
            if not faulted:
                self.out["errors"] += 1
                self.out["notes"].append(payload)
                if self.out["errors"] > 20:
                    break
                time.sleep(0.2)
        self.out["notes"].append("the pipeline did not complete")

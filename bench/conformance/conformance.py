"""conformance.py -- the crash-conformance benchmark (docs/conformance.md):
one workload, several engines, real faults, what happened counted outside
the engines.

  python3 bench/conformance/conformance.py --build build/release
        [--quick] [--only ENGINE]... [--steps 20,200] [--faults N]
        [--json FILE] [--md FILE] [--seed S] [--no-pg] [--check-lil]

bench/run.sh --only conformance runs it after building the release preset.
For each engine and pipeline length: rounds without faults beside the
engine's floor (time per step, disk bytes per step; the longest round is
T, the span of the fault moments), then trials under SIGKILL until the
faults reach the target: 100 at each of the two lengths, 200 an engine
(--quick: 10 and 20); for lil also power cuts (from C, Python and the
loop runner), and with a PostgreSQL server of its own
(tests/pg/pgserver.sh) the server stopped mid-run for lil and DBOS and a
lil worker stopped past its lease.  The peers come from venvs scripts/pyenv.sh makes (the package
index is needed the first time); an engine that cannot run here is listed
as not run, with the reason.  The table goes to stdout (and --md), every
number to --json.  --check-lil exits 1 unless every lil row shows no step
lost, no effect applied twice, and every trial correct (the ctest).
"""

import argparse
import glob
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import analyze
import conditions
import pgfaults
import registry
import report
import servers
import summary
from trial import Trial

LLM_DELAY, LEDGER_DELAY = 0.010, 0.003


def log(msg):
    print(f"== conformance: {msg}", file=sys.stderr, flush=True)


def dir_bytes(path):
    if path.startswith("sqlite:///"):
        base = path[len("sqlite:///"):]
        return sum(os.path.getsize(base + s) for s in ("", "-wal", "-journal", "-shm")
                   if os.path.exists(base + s))
    if not os.path.isdir(path):
        return None
    total = 0
    for b, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(b, f)) for f in files
                     if not f.endswith(".pclog"))
    return total


class Bench:
    def __init__(self, a, ctx, srv):
        self.a, self.ctx, self.srv = a, ctx, srv
        self.rng = random.Random(a.seed)
        self.cells, self.costs, self.skipped = [], [], []
        self.serial = 0

    def new_run(self, engine):
        self.serial += 1
        return f"{engine.name}-{self.serial}"

    def once(self, engine, steps):
        """One life without faults: (span of its requests in s, its run id,
        the whole life in s); None when it did not complete."""
        run = self.new_run(engine)
        t0 = time.monotonic()
        out = Trial(engine, self.ctx, self.srv.rec, run, steps, "none", self.rng, 1.0, 0,
                    life_timeout=600).go()
        wall = time.monotonic() - t0
        calls, effects = self.srv.rec.snapshot(run)
        if out["tags"] is None or not calls:
            return None
        reqs = calls + effects
        return max(r["t1"] for r in reqs) - min(r["t0"] for r in reqs), run, wall

    def calibrate(self, engine, steps):
        """Rounds beside the floor; returns (T, W) in s -- the longest life
        and the longest span of requests -- or None."""
        floor = registry.floors()[engine.lang]
        rounds = 3 if self.a.quick else 8
        spans, fspans, walls, disk = [], [], [], None
        for k in range(rounds):
            got, fgot = self.once(engine, steps), self.once(floor, steps)
            if got is None or fgot is None:
                return None
            spans.append(got[0])
            fspans.append(fgot[0])
            walls.append(got[2])
            if k == 0 and engine.store != "pg":
                disk = dir_bytes(engine.state(self.ctx, got[1]))
        if engine.name != "plain" and engine.cost:
            self.costs.append(summary.overhead(engine, steps, spans, fspans, disk))
        return max(walls), max(spans)

    def campaign(self, engine, steps, fault, times, target, hooks=None):
        trials, measures = [], []
        faults, t_end = 0, time.monotonic() + self.a.budget
        while faults < target and time.monotonic() < t_end:
            run = self.new_run(engine)
            out = Trial(engine, self.ctx, self.srv.rec, run, steps, fault, self.rng, times[0],
                        self.a.faults_per_trial, hooks=hooks, t_work=times[1]).go()
            calls, effects = self.srv.rec.snapshot(run)
            trials.append(out)
            measures.append(analyze.trial(calls, effects, out["tags"], steps))
            faults += out["faults"]
        if faults < target:
            trials[-1]["notes"].append(f"time budget reached at {faults} faults")
        c = summary.cell(engine, fault, steps, trials, measures)
        self.cells.append(c)
        log(f"{engine.name} {fault} N={steps}: {c['trials']} trials, {c['faults']} faults, "
            f"{c['correct_pct']} % correct, lost {c['lost']}, duplicated {c['duplicated']}")
        return c

    def engine(self, engine, faults=("sigkill",), hooks=None):
        for steps in self.a.steps:
            log(f"{engine.name}: N={steps}, rounds without faults")
            times = self.calibrate(engine, steps)
            if times is None:
                self.skipped.append(f"{engine.label}, N = {steps}: the pipeline did not "
                                    "complete without faults (see engines.log)")
                continue
            for fault in faults:
                self.campaign(engine, steps, fault, times, self.a.target, hooks)


def prepare_venvs(a, ctx, engines, skipped):
    ok = []
    for e in engines:
        if e.name == "lil-py" and not glob.glob(os.path.join(ctx.build, "bindings", "python",
                                                             "lil", "_lil*.so")):
            skipped.append(f"{e.label}: the module is not built here (no Python headers, "
                           "or a sanitizer build)")
            continue
        if e.venv and e.venv not in ctx.pythons:
            log(f"venv of {e.venv} (scripts/pyenv.sh)")
            r = subprocess.run(["bash", os.path.join(ctx.root, "scripts", "pyenv.sh"),
                                os.path.join(ctx.root, e.venv)], capture_output=True, text=True,
                               check=False)
            ctx.pythons[e.venv] = r.stdout.strip() if r.returncode == 0 else None
            if r.returncode != 0:
                sys.stderr.write(r.stderr)
        if e.venv and not ctx.pythons.get(e.venv):
            skipped.append(f"{e.label}: its venv could not be made (scripts/pyenv.sh "
                           f"{e.venv}: is the package index reachable?)")
        else:
            ok.append(e)
    return ok


def args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--steps", default="20,200")
    ap.add_argument("--faults", type=int, default=None,
                    help="faults per engine, fault and length (100; --quick 10)")
    ap.add_argument("--faults-per-trial", type=int, default=3)
    ap.add_argument("--budget", type=float, default=None, help="s per campaign")
    ap.add_argument("--json")
    ap.add_argument("--md")
    ap.add_argument("--seed", type=int, default=20261203)
    ap.add_argument("--no-pg", action="store_true")
    ap.add_argument("--check-lil", action="store_true")
    a = ap.parse_args()
    a.steps = [int(x) for x in a.steps.split(",")]
    a.target = a.faults if a.faults is not None else (10 if a.quick else 100)
    a.budget = a.budget if a.budget is not None else (300.0 if a.quick else 3600.0)
    return a


def check_lil(cells):
    bad = [c for c in cells if c["engine"].startswith("lil")
           and (c["lost"] or c["duplicated"] or c["correct"] != c["trials"] or not c["trials"])]
    for c in bad:
        print(f"FAIL {c['engine']} {c['fault']} N={c['steps']}: lost {c['lost']}, "
              f"duplicated {c['duplicated']}, correct {c['correct']}/{c['trials']}",
              file=sys.stderr)
    lil = [c for c in cells if c["engine"].startswith("lil")]
    print(f"{len(lil) - len(bad)} passed, {len(bad)} failed")
    return 1 if bad or not lil else 0


def main():
    a = args()
    root = os.path.dirname(os.path.dirname(registry.HERE))
    scratch = tempfile.mkdtemp(prefix="conformance.", dir=os.path.abspath(a.build))
    srv = servers.Servers(LLM_DELAY, LEDGER_DELAY)
    ctx = registry.Ctx(root=root, build=os.path.abspath(a.build), scratch=scratch,
                       llm_url=srv.llm_url, ledger_url=srv.ledger_url)
    machine = conditions.machine(scratch)
    b = Bench(a, ctx, srv)
    want = lambda n: not a.only or any(n == o or n.startswith(o + "-") for o in a.only)  # noqa
    try:
        engines = prepare_venvs(a, ctx, [e for e in registry.all_engines() if want(e.name)],
                                b.skipped)
        for e in engines:
            b.engine(e)
        pc = subprocess.run([ctx.lil_c, "cut", os.devnull, "0"], capture_output=True,
                            check=False).returncode
        for e in registry.powercut_engines():
            if not want(e.name):
                continue
            if pc == 64:
                b.skipped.append(f"{e.label}, power cuts: built without the tests")
                continue
            if e.lang == "python" and not glob.glob(os.path.join(
                    registry.PyPowercutEngine.module_dir(ctx), "_lil*.so")):
                b.skipped.append(f"{e.label}, power cuts: its module is not built here "
                                 "(no Python headers)")
                continue
            b.engine(e, ("powercut",))
        if not a.no_pg:
            pgfaults.run(a, b, ctx, want, prepare_venvs)
    finally:
        srv.close()
        machine["load_end"] = conditions.loadavg()
        shutil.rmtree(scratch, ignore_errors=True)
    result = {"mode": "quick" if a.quick else "full", "machine": machine,
              "command": " ".join(["python3", "bench/conformance/conformance.py"]
                                  + sys.argv[1:]),
              "llm_delay_ms": LLM_DELAY * 1e3, "ledger_delay_ms": LEDGER_DELAY * 1e3,
              "faults_per_trial": a.faults_per_trial, "steps": a.steps,
              "cells": b.cells, "costs": b.costs, "skipped": b.skipped}
    sys.stdout.write(report.write(result, a.json, a.md))
    return check_lil(b.cells) if a.check_lil else 0


if __name__ == "__main__":
    sys.exit(main())

"""bench_letitloop.py --dir DIR --steps N[,N...] [--budget S] -- lil and
letitloop 0.7.0 side by side, in one process (bench_letitloop.c runs it with
the python of the venv of bindings/python/requirements/letitloop.txt and
prints the rows).

The workflow is letitloop's README's: ``@durable(goal_id, wal_dir)`` around
N calls of ``step(name, fn)``, each returning a 200-character str, with a
distinct name per step (letitloop's identity is the name alone).  Both
libraries at their default durability: lil sync="full" (one fdatasync per
step), letitloop one fsync of its WAL and one of its journal per step.

  durable   the first call: N new steps, then an exception ends the call
            before the function returns (a crash after the last step), so
            the run stays open
  replay    the second call: the N steps come from the journal, then the
            function returns

letitloop's write path grows with the square of the steps (every step
rewrites the whole map of step outputs), so each of its calls has a time
budget (--budget, seconds): past it, the call stops after the step in
progress and the row says how many steps it reached, and the ratio is a
lower bound ("≥").

Prints lines ``ROW<TAB>what<TAB>result<TAB>target`` for bench_letitloop.c.
"""

import argparse
import os
import shutil
import sys
import time

import letitloop
import lil

PAYLOAD = "p" * 200


class _Crash(Exception):
    """Ends the first call after its last step, as a crash would."""


def payload():
    return PAYLOAD


def workflow(durable, step, goal, wal_dir, n, budget):
    """The workflow (letitloop's shape) and its state: steps done, a flag
    that makes the first call end with _Crash."""
    state = {"crash": True, "done": 0}

    @durable(goal, wal_dir)
    def wf():
        deadline = time.monotonic() + budget
        for i in range(n if state["crash"] else state["done"]):
            step(f"s{i}", payload)
            state["done"] = i + 1
            if time.monotonic() > deadline:
                break
        if state["crash"]:
            raise _Crash
        return state["done"]

    return wf, state


def dir_bytes(path):
    total = 0
    for base, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(base, f)) for f in files)
    return total


def measure(name, durable, step, root, n, budget):
    """(durable s, replay s, steps reached, bytes on disk)."""
    wal_dir = os.path.join(root, f"{name}-{n}")
    wf, state = workflow(durable, step, f"bench-{n}", wal_dir, n, budget)
    t0 = time.perf_counter()
    try:
        wf()
    except _Crash:
        pass
    t_durable = time.perf_counter() - t0
    reached = state["done"]
    state["crash"] = False
    t0 = time.perf_counter()
    wf()
    t_replay = time.perf_counter() - t0
    size = dir_bytes(wal_dir)
    shutil.rmtree(wal_dir, ignore_errors=True)
    return t_durable, t_replay, reached, size


def rows(n, lil_m, ll_m):
    """The result rows of one count of steps."""
    ld, lr, _, lbytes = lil_m
    td, tr, reached, tbytes = ll_m
    partial = reached < n
    per_lil = ld / n
    per_ll = td / reached
    bound = "≥ " if partial else ""
    what = f"{n:,} steps"
    yield (f"{what}, durable: lil / letitloop",
           f"{ld:.3f} s ({per_lil * 1e3:.3f} ms/step, {lbytes / 1e6:.2f} MB) / "
           + (f"stopped after {td:.1f} s at step {reached:,} " if partial else f"{td:.3f} s ")
           + f"({per_ll * 1e3:.3f} ms/step, {tbytes / 1e6:.2f} MB): "
           + f"lil {bound}{(td / reached * n) / ld if partial else td / ld:.1f}× faster", "")
    yield (f"{what}, replay: lil / letitloop",
           f"{lr:.3f} s / {tr:.3f} s" + (f" ({reached:,} steps)" if partial else "")
           + f": lil {bound}{(tr / reached * n) / lr if partial else tr / lr:.1f}× faster", "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--steps", default="1000,10000")
    ap.add_argument("--budget", type=float, default=120.0)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    print(f"ROW\tversions\tlil {lil.__version__}, letitloop "
          f"{getattr(letitloop, '__version__', '0.7.0')}, Python "
          f"{sys.version.split()[0]}\t", flush=True)
    for n in (int(x) for x in a.steps.split(",")):
        print(f"== letitloop: {n} steps (lil, then letitloop)", file=sys.stderr, flush=True)
        lil_m = measure("lil", lil.durable, lil.step, a.dir, n, float("inf"))
        ll_m = measure("letitloop", letitloop.durable, letitloop.step, a.dir, n, a.budget)
        for what, result, target in rows(n, lil_m, ll_m):
            print(f"ROW\t{what}\t{result}\t{target}", flush=True)


if __name__ == "__main__":
    main()

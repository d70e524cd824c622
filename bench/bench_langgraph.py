"""bench_langgraph.py --dir DIR --steps N --history M -- the LangGraph
benchmark's Python side (bench_langgraph.c runs it with the python of the
venv of bindings/python/requirements/langgraph.txt and prints the rows).

The graph: one node that adds 1 to a counter and loops back until the
counter is N, so each super-step is one checkpoint (put) and one task's
writes (put_writes), with durability="sync" (the checkpoint is saved
before the next step starts).  The same graph runs with
lil.adapters.langgraph.LilSaver (sync full, lil's default, and normal) and
with langgraph-checkpoint-sqlite's SqliteSaver (a file database, WAL, as
SqliteSaver sets it up; synchronous as the sqlite3 module opens it: FULL,
so a commit is fdatasync'd), on the same disk.

Prints one JSON object:
  step_us_<saver>      wall µs per super-step (a checkpoint and its writes)
  resume_ms_<saver>    a new saver (a new process's first call) reading
                       the latest state of a thread of M checkpoints:
                       graph.get_state, median of 5
  sqlite_synchronous   PRAGMA synchronous of SqliteSaver's connection
"""

import argparse
import json
import os
import sqlite3
import statistics
import time
from typing import TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph

from lil.adapters.langgraph import LilSaver


class State(TypedDict):
    n: int
    limit: int
    note: str


def build():
    def work(state):
        return {"n": state["n"] + 1}

    g = StateGraph(State)
    g.add_node("work", work)
    g.add_edge(START, "work")
    g.add_conditional_edges("work", lambda s: "work" if s["n"] < s["limit"] else END)
    return g


GRAPH = build()
NOTE = "x" * 200  # a state of some size, unchanged from step to step


def sqlite_saver(path):
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    return saver, conn.close


def lil_saver(store, sync):
    def make(path):
        saver = LilSaver(os.path.join(path, store), sync=sync)
        return saver, saver.close
    return make


SAVERS = {
    "lil_full": lil_saver("full", "full"),
    "lil_normal": lil_saver("normal", "normal"),
    "sqlite": lambda path: sqlite_saver(os.path.join(path, "lg.sqlite")),
}


def run_graph(make, path, thread, steps):
    """Wall seconds to run the graph `steps` super-steps on a new thread."""
    saver, close = make(path)
    try:
        graph = GRAPH.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": thread}, "recursion_limit": steps + 10}
        t0 = time.perf_counter()
        out = graph.invoke({"n": 0, "limit": steps, "note": NOTE}, config,
                           durability="sync")
        wall = time.perf_counter() - t0
        assert out["n"] == steps, out
        return wall
    finally:
        close()


def resume(make, path, thread, steps):
    """Median seconds for a new saver to read the thread's latest state."""
    times = []
    for _ in range(5):
        saver, close = make(path)
        try:
            graph = GRAPH.compile(checkpointer=saver)
            t0 = time.perf_counter()
            snap = graph.get_state({"configurable": {"thread_id": thread}})
            times.append(time.perf_counter() - t0)
            assert snap.values["n"] == steps, snap.values
        finally:
            close()
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--history", type=int, default=1000)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    out = {}
    for name, make in SAVERS.items():
        run_graph(make, a.dir, "warm-up", 5)
        out[f"step_us_{name}"] = run_graph(make, a.dir, "steps", a.steps) / a.steps * 1e6
        run_graph(make, a.dir, "history", a.history)
        out[f"resume_ms_{name}"] = resume(make, a.dir, "history", a.history) * 1e3
    conn = sqlite3.connect(os.path.join(a.dir, "lg.sqlite"))
    out["sqlite_synchronous"] = conn.execute("PRAGMA synchronous").fetchone()[0]
    conn.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()

"""A LangGraph graph checkpointed by lil.adapters.langgraph.LilSaver,
SIGKILLed and run again.

The graph (GRAPH below, run in a child process) is four nodes in a line,
n1 -> n2 -> n3 -> n4 (or, "fan", n2 and n3 side by side after n1).  Each
node appends "start nK" to a side file when it starts and "end nK" when it
returns, and adds 10**(K-1) to the state's total and its name to the
state's list (both summed by reducers), so the final state shows a node
counted twice.  The child starts the graph when the thread has no
checkpoint, else resumes it (invoke(None): a finished thread runs nothing).
Resuming needs no look at state.next: killed after a node's writes were
saved and before its super-step's checkpoint, next is empty although the
graph has not finished.

- killed inside n3 (n3 says it is ready, the test kills it): run again,
  the graph resumes at n3; n1 and n2 never start again; the state is right.
- time travel: get_state_history lists the checkpoints; invoking from the
  checkpoint before n3 runs n3 and n4 again, not n1 and n2.
- fan: killed inside n3 after n2 returned and its writes were journaled,
  the graph runs n3 again and not n2.
- killed at random moments (LIL_LG_CRASH_KILLS times, 5 by default): the
  nodes' starts never go back (a node whose successor started never runs
  again; only the node in flight may run twice) and the final state is
  right.

Runs with the python of scripts/pyenv.sh bindings/python/requirements/
langgraph.txt (bindings/python/CMakeLists.txt).
"""

import json
import os
import random
import signal
import time
import unittest

from helpers import LilCase

import lil
from lil.adapters.langgraph import LilSaver

NODES = ["n1", "n2", "n3", "n4"]
TOTAL = 1111  # 1 + 10 + 100 + 1000: every node counted once
KILLS = int(os.environ.get("LIL_LG_CRASH_KILLS", "5"))

GRAPH = r"""
import json, operator, os, random, sys, time
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph

from lil.adapters.langgraph import LilSaver

store, thread, side, hold, nap, shape = sys.argv[1:7]
nap = float(nap)


def note(line):
    fd = os.open(side, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.write(fd, (line + "\n").encode())
    os.close(fd)


class State(TypedDict):
    visited: Annotated[list, operator.add]
    total: Annotated[int, operator.add]


def node(name, add):
    def run(state):
        note(f"start {name}")
        if name == hold:
            note(f"ready {name}")
            time.sleep(120)  # the test kills the process here
        time.sleep(random.uniform(0, nap))
        note(f"end {name}")
        return {"visited": [name], "total": add}
    return run


builder = StateGraph(State)
for k, name in enumerate(["n1", "n2", "n3", "n4"]):
    builder.add_node(name, node(name, 10 ** k))
if shape == "line":
    edges = [(START, "n1"), ("n1", "n2"), ("n2", "n3"), ("n3", "n4"), ("n4", END)]
else:  # "fan": n2 and n3 in one super-step
    edges = [(START, "n1"), ("n1", "n2"), ("n1", "n3"), (["n2", "n3"], "n4"), ("n4", END)]
for a, b in edges:
    builder.add_edge(a, b)

with LilSaver(store) as saver:
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": thread}}
    if graph.get_state(config).created_at is None:  # no checkpoint: a new thread
        out = graph.invoke({"visited": [], "total": 0}, config, durability="sync")
    else:  # resume; on a finished thread nothing runs and the state comes back
        out = graph.invoke(None, config, durability="sync")
print(json.dumps(out))
"""


class GraphCase(LilCase):
    thread = "crash-thread"
    shape = "line"

    def run_graph(self, hold="-", nap=0.0):
        return self.run_py(GRAPH, self.dir, self.thread, self.side, hold, nap, self.shape,
                           timeout=120)

    def spawn_graph(self, hold="-", nap=0.0):
        return self.spawn_py(GRAPH, self.dir, self.thread, self.side, hold, nap, self.shape)

    def starts(self):
        return [line.split()[1] for line in self.lines() if line.startswith("start ")]

    def wait_for(self, line, proc):
        while line not in self.lines():
            if proc.poll() is not None:
                self.fail(f"the graph exited {proc.returncode} before {line!r}: "
                          f"{proc.communicate()}")
            time.sleep(0.01)

    def kill(self, proc):
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        self.assertEqual(proc.returncode, -signal.SIGKILL)

    def assert_final(self, state):
        self.assertEqual(state["visited"], NODES)
        self.assertEqual(state["total"], TOTAL)

    def assert_journal_intact(self):
        st = lil._core.get_store(self.dir)
        report = st.check(LilSaver(self.dir).run_id(self.thread))
        self.assertTrue(report["intact"], report)


class KilledInNode3Test(GraphCase):
    def test_resumes_after_the_last_checkpoint(self):
        proc = self.spawn_graph(hold="n3")
        self.wait_for("ready n3", proc)
        self.kill(proc)
        self.assertEqual(self.starts(), ["n1", "n2", "n3"])

        out = self.run_graph()
        self.assert_final(json.loads(out.stdout))
        # n1 and n2 ran once; n3, in flight when killed, ran again (at least once)
        self.assertEqual(self.starts(), ["n1", "n2", "n3", "n3", "n4"])
        self.assertEqual(self.lines().count("end n3"), 1)

        out = self.run_graph()  # finished: the state, nothing runs
        self.assert_final(json.loads(out.stdout))
        self.assertEqual(self.starts(), ["n1", "n2", "n3", "n3", "n4"])
        self.assert_journal_intact()

    def test_time_travel(self):
        self.run_graph()
        self.assertEqual(self.starts(), NODES)
        with LilSaver(self.dir) as saver:
            config = {"configurable": {"thread_id": self.thread}}
            history = list(saver.list(config))
            # input, start, n1, n2, n3, n4: newest first
            steps = [t.metadata["step"] for t in history]
            self.assertEqual(steps, [4, 3, 2, 1, 0, -1])
            before_n3 = history[2]
            self.assertEqual(before_n3.checkpoint["channel_values"]["visited"], ["n1", "n2"])

        graph = _compile_here(self.dir, self.side)
        states = list(graph.get_state_history(config))
        self.assertEqual(len(states), 6)
        fork_from = next(s for s in states if s.next == ("n3",))
        self.assertEqual(fork_from.values, {"visited": ["n1", "n2"], "total": 11})
        out = graph.invoke(None, fork_from.config, durability="sync")
        graph.checkpointer.close()
        self.assert_final(out)
        # replayed from before n3: n3 and n4 ran again, n1 and n2 did not
        self.assertEqual(self.starts(), NODES + ["n3", "n4"])

        graph = _compile_here(self.dir, self.side)
        states = list(graph.get_state_history(config))
        # the fork added three checkpoints: a copy of the one it started
        # from (source "fork"), then n3's and n4's
        self.assertEqual([(s.metadata["source"], s.metadata["step"]) for s in states[:3]],
                         [("loop", 5), ("loop", 4), ("fork", 3)])
        self.assertEqual(len(states), 9)
        latest = graph.get_state(config)
        self.assertEqual(latest.values, {"visited": NODES, "total": TOTAL})
        chain = []
        cfg = latest.config
        while cfg is not None:
            snap = graph.get_state(cfg)
            chain.append(snap.config["configurable"]["checkpoint_id"])
            cfg = snap.parent_config
        self.assertIn(fork_from.config["configurable"]["checkpoint_id"], chain)
        self.assertEqual(len(chain), 7)  # the 4 up to the fork point, its copy, n3, n4
        graph.checkpointer.close()


class KilledBesideAFinishedBranchTest(GraphCase):
    """n2 and n3 run in one super-step; killed while n3 runs and after n2
    returned and its writes were journaled, the graph runs n3 again, not
    n2: the writes of a finished task are kept (put_writes)."""
    shape = "fan"

    def n2_writes_journaled(self):
        st = lil._core.get_store(self.dir)
        run_id = LilSaver(self.dir).run_id(self.thread)
        if not st.exists(run_id):
            return False
        run = st.open_run(run_id, flags=lil._lil.OPEN_READONLY | lil._lil.OPEN_EXISTING)
        try:
            return any(r["key"].startswith("writes ") and
                       json.loads(r["payload"])["path"].endswith("n2")
                       for r in run.records() if r["type"] == "step")
        finally:
            run.close()

    def test_finished_branch_not_run_again(self):
        proc = self.spawn_graph(hold="n3")
        self.wait_for("ready n3", proc)
        while not self.n2_writes_journaled():
            self.assertIsNone(proc.poll(), "the graph exited before n2's writes")
            time.sleep(0.01)
        self.kill(proc)
        self.assertEqual(sorted(self.starts()), ["n1", "n2", "n3"])

        out = self.run_graph()
        self.assert_final(json.loads(out.stdout))
        self.assertEqual(self.starts().count("n2"), 1)
        self.assertEqual(self.starts().count("n3"), 2)
        self.assertEqual(self.starts()[-1], "n4")
        self.assert_journal_intact()


def _compile_here(store, side):
    """The same graph as GRAPH, in this process (its nodes note nothing: a
    replay that ran n1 or n2 here would show in the state's total)."""
    import operator
    from typing import Annotated, TypedDict

    from langgraph.graph import END, START, StateGraph

    class State(TypedDict):
        visited: Annotated[list, operator.add]
        total: Annotated[int, operator.add]

    def node(name, add):
        def run(state):
            with open(side, "a") as f:
                f.write(f"start {name}\nend {name}\n")
            return {"visited": [name], "total": add}
        return run

    builder = StateGraph(State)
    prev = START
    for k, name in enumerate(NODES):
        builder.add_node(name, node(name, 10 ** k))
        builder.add_edge(prev, name)
        prev = name
    builder.add_edge(prev, END)
    return builder.compile(checkpointer=LilSaver(store))


class RandomKillsTest(GraphCase):
    def test_killed_at_random_moments(self):
        seed = int(os.environ.get("LIL_LG_CRASH_SEED", "0")) or random.randrange(1 << 30)
        rng = random.Random(seed)
        # how long a whole run takes here: kills land anywhere in it
        t0 = time.monotonic()
        self.run_graph(nap=0.05)
        span = time.monotonic() - t0
        kills, rounds = 0, 0
        while kills < KILLS:
            rounds += 1
            self.thread = f"random-{rounds}"
            self.side = os.path.join(self.tmp, f"side-{rounds}.log")
            kills += self.kill_until_done(rng, span)
            with self.subTest(seed=seed, round=rounds):
                self.assert_round(kills)

    def kill_until_done(self, rng, span):
        """Run the graph, killing it at random moments (up to 3 times) until
        a run ends by itself; returns the number of kills."""
        kills = 0
        while True:
            proc = self.spawn_graph(nap=0.05)
            if kills < 3:
                time.sleep(rng.uniform(0.0, span))
                proc.send_signal(signal.SIGKILL)  # nothing when it has ended
            out, err = proc.communicate()
            if proc.returncode == -signal.SIGKILL:
                kills += 1
                continue
            self.assertEqual(proc.returncode, 0, err)
            self.assert_final(json.loads(out))
            return kills

    def assert_round(self, kills):
        out = self.run_graph()
        self.assert_final(json.loads(out.stdout))
        starts = [NODES.index(n) for n in self.starts()]
        self.assertEqual(starts, sorted(starts), "a node ran again after its successor")
        self.assertEqual(sorted(set(starts)), [0, 1, 2, 3])
        self.assertLessEqual(len(starts), len(NODES) + kills)
        self.assert_journal_intact()


if __name__ == "__main__":
    unittest.main()

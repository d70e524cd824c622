"""test_workflow.py -- @durable: each goal is its own run (goal_id partitions
storage); a completed workflow returns its journaled result without running
its body; fresh=True / fn.fresh() start a new run and supersede a running
one; goal ids that are not valid run ids are mapped without collisions;
nested workflows restore their parent; a run is held by one process at a
time and the hold dies with the process; an exception in the body leaves
the run resumable."""

import os
import signal
import time
import unittest

from helpers import LilCase, lil


class WorkflowTest(LilCase):
    def test_goal_id_partitions_storage(self):
        def make(goal, value):
            @lil.durable(goal_id=goal, dir=self.dir)
            def wf():
                return lil.step("fetch", self.counter(f"{goal}-fetch", value))
            return wf

        self.assertEqual(make("a", 1)(), 1)
        self.assertEqual(make("b", 2)(), 2)  # not a's cached "fetch"
        self.assertEqual(self.lines(), ["a-fetch", "b-fetch"])
        self.assertEqual(sorted(lil._core.get_store(self.dir).run_ids()), ["a", "b"])

    def test_default_goal_is_module_and_qualname(self):
        class A:
            @staticmethod
            @lil.durable(dir=self.dir)
            def run():
                return lil.current().goal_id

        class B:
            @staticmethod
            @lil.durable(dir=self.dir)
            def run():
                return lil.current().goal_id

        a, b = A.run(), B.run()
        self.assertNotEqual(a, b)
        self.assertTrue(a.startswith("test_workflow.WorkflowTest."))

    def test_completed_workflow_is_not_run_again(self):
        @lil.durable(goal_id="once", dir=self.dir)
        def wf(x):
            self.record("body")
            return {"x": x, "step": lil.step("s", self.counter("s", (1, 2)))}

        first = wf(5)
        self.assertEqual(first, {"x": 5, "step": (1, 2)})
        self.assertEqual(wf(5), first)
        self.assertEqual(wf(99), first)  # the journaled result, whatever the args
        self.assertEqual(self.lines(), ["body", "s"])
        st = lil.status("once", dir=self.dir)
        self.assertEqual((st.state, st.result, st.run_id), ("completed", first, "once"))

    def test_fresh_runs(self):
        @lil.durable(goal_id="f", dir=self.dir)
        def wf(n):
            self.record(f"body{n}")
            return lil.step("s", lambda: n)

        self.assertEqual(wf(1), 1)
        self.assertEqual(wf.fresh(2), 2)
        self.assertEqual(wf(3), 2)  # the newest run is the goal's run
        self.assertEqual(lil.status("f", dir=self.dir).run_id, "f~2")

        @lil.durable(goal_id="f", dir=self.dir, fresh=True)
        def always(n):
            return lil.step("s", lambda: n)

        self.assertEqual(always(4), 4)
        self.assertEqual(always(5), 5)
        self.assertEqual(lil.status("f", dir=self.dir).run_id, "f~4")
        self.assertEqual(self.lines(), ["body1", "body2"])

    def test_fresh_supersedes_a_running_run(self):
        @lil.durable(goal_id="sup", dir=self.dir)
        def wf(fail):
            lil.step("a", self.counter("a"))
            if fail:
                raise RuntimeError("later")
            return "done"

        with self.assertRaises(RuntimeError):
            wf(True)
        self.assertEqual(lil.status("sup", dir=self.dir).state, "running")
        self.assertEqual(wf.fresh(False), "done")
        self.assertEqual(self.lines(), ["a", "a"])  # the fresh run ran it again
        st = lil._core.get_store(self.dir)
        old = st.open_run("sup", 0, lil._lil.OPEN_READONLY)
        self.assertEqual(old.status(), lil._lil.RUN_FAILED)
        with self.assertRaises(lil.Error) as cm:
            old.result()
        self.assertIn("superseded by run sup~2", str(cm.exception))
        old.close()

    def test_goal_id_callable_and_odd_goal_ids(self):
        @lil.durable(goal_id=lambda order, **kw: f"orders/{order}", dir=self.dir)
        def ship(order, note=""):
            return lil.step("label", lambda: f"label-{order}")

        self.assertEqual(ship(1), "label-1")
        self.assertEqual(ship(2, note="x"), "label-2")
        ids = {lil.status(f"orders/{n}", dir=self.dir).run_id for n in (1, 2)}
        self.assertEqual(len(ids), 2)
        for rid in ids:
            self.assertTrue(rid.startswith("orders_"), rid)
            self.assertNotIn("/", rid)
        # a goal named like an epoch does not collide with the epoch
        mk = lambda g: lil.durable(goal_id=g, dir=self.dir)(lambda: lil.current().run_id)  # noqa: E731
        self.assertEqual(mk("x")(), "x")
        self.assertNotEqual(mk("x~2")(), "x~2")
        long_goal = "L" * 500
        rid = mk(long_goal)()
        self.assertLessEqual(len(rid), 200)
        self.assertNotEqual(rid, mk("L" * 499)())
        self.assertEqual(mk(12345)(), "12345")

    def test_nested_workflows_restore_their_parent(self):
        @lil.durable(goal_id="inner", dir=self.dir)
        def inner():
            return [lil.current().goal_id, lil.step("i", lambda: "in")]

        @lil.durable(goal_id="outer", dir=self.dir)
        def outer():
            a = lil.step("a", lambda: 1)
            got = inner()
            self.assertEqual(lil.current().goal_id, "outer")
            b = lil.step("b", lambda: 2)
            return [a, got, b]

        self.assertEqual(outer(), [1, ["inner", "in"], 2])
        self.assertIsNone(lil.current())
        self.assertEqual([k for k, _ in self.steps("outer")], ["a", "b"])

    def test_one_holder_at_a_time(self):
        @lil.durable(goal_id="held", dir=self.dir)
        def wf():
            return same()

        @lil.durable(goal_id="held", dir=self.dir)
        def same():
            return 1

        with self.assertRaises(lil.RunLockedError):
            wf()
        child = self.spawn_py("""
            import sys, time, lil
            @lil.durable(goal_id="held", dir=sys.argv[1])
            def wf():
                print("holding", flush=True)
                time.sleep(60)
            wf()
        """, self.dir)
        try:
            self.assertEqual(child.stdout.readline().strip(), "holding")
            with self.assertRaises(lil.RunLockedError) as cm:
                same()
            self.assertEqual(cm.exception.status, "LIL_E_LOCKED")
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
            child.stdout.close()
            child.stderr.close()
        self.assertEqual(same(), 1)  # the lock died with its process

    def test_body_exception_leaves_the_run_resumable(self):
        @lil.durable(goal_id="r", dir=self.dir)
        def wf(n):
            a = lil.step("a", self.counter("a", n))
            if n == 0:
                raise ValueError("boom")
            return a

        with self.assertRaises(ValueError):
            wf(0)
        self.assertEqual(lil.status("r", dir=self.dir).state, "running")
        self.assertEqual(wf(1), 0)  # a was journaled with 0
        self.assertEqual(self.lines(), ["a"])

    def test_unencodable_result_does_not_complete(self):
        @lil.durable(goal_id="res", dir=self.dir)
        def wf():
            lil.step("a", lambda: 1)
            return object()

        with self.assertRaises(lil.DurableSerializationError) as cm:
            wf()
        self.assertIn("workflow 'res'", str(cm.exception))
        self.assertEqual(lil.status("res", dir=self.dir).state, "running")

    def test_dirs(self):
        os.environ["LIL_DIR"] = os.path.join(self.tmp, "envdir")
        try:
            @lil.durable("pos")
            def wf():
                return lil.current().store_dir
            self.assertEqual(wf(), os.path.join(self.tmp, "envdir"))
        finally:
            del os.environ["LIL_DIR"]

        @lil.durable(goal_id="w", wal_dir="rel")
        def rel():
            return lil.current().store_dir
        self.assertEqual(rel(), os.path.join(self.tmp, "rel"))
        self.assertIsNone(lil.status("nothing", dir=self.dir))

    def test_workflow_object(self):
        @lil.durable(goal_id="obj", dir=self.dir)
        def wf():
            w = lil.current()
            lil.step("a", lambda: 1)
            return [w.goal_id, w.run_id, w.info()["steps_done"], repr(w)]

        goal, run_id, done, text = wf()
        self.assertEqual((goal, run_id, done), ("obj", "obj", 1))
        self.assertIn("obj", text)


if __name__ == "__main__":
    unittest.main()

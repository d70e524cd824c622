"""test_threads.py -- steps from worker threads: a thread bound to the
workflow (Workflow.bind, Workflow.wrap, Workflow.step) runs steps, in
parallel with the others (every thread is inside its step function at
once) and with shared syncs in sync mode full; an unbound thread is told
to bind; a run does not close under a step still running in a thread."""

import concurrent.futures
import gc
import threading
import unittest

from helpers import LilCase, lil


class ThreadTest(LilCase):
    def test_bound_threads_run_steps_in_parallel(self):
        n = 8
        barrier = threading.Barrier(n, timeout=20)

        def work(i):
            barrier.wait()  # every thread inside a step at once
            return i * 10

        @lil.durable(goal_id="p", dir=self.dir, sync="full")
        def wf():
            w = lil.current()
            out = [None] * n

            def thread_main(i):
                with w.bind():
                    out[i] = [lil.step(f"t{i}-{k}", work if k == 0 else (lambda i=i: i), i)
                              for k in range(20)]
            threads = [threading.Thread(target=thread_main, args=(i,)) for i in range(n)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return out

        want = [[i * 10] + [i] * 19 for i in range(n)]
        self.assertEqual(wf(), want)
        self.assertEqual(len(self.steps("p")), n * 20)
        self.assertEqual(wf(), want)  # completed: the journaled result

    def test_replay_from_threads(self):
        @lil.durable(goal_id="r", dir=self.dir)
        def wf(stop):
            w = lil.current()
            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                got = list(pool.map(w.wrap(lambda i: lil.step(f"s{i}", self.counter(f"s{i}", i))),
                                    range(16)))
            if stop:
                raise RuntimeError("stop")
            return got

        with self.assertRaises(RuntimeError):
            wf(True)
        self.assertEqual(wf(False), list(range(16)))
        self.assertEqual(sorted(self.lines()), sorted(f"s{i}" for i in range(16)))

    def test_unbound_thread_is_told_to_bind(self):
        errors = []

        @lil.durable(goal_id="u", dir=self.dir)
        def wf():
            w = lil.current()

            def unbound():
                try:
                    lil.step("x", lambda: 1)
                except RuntimeError as e:
                    errors.append(str(e))
                errors.append(w.step("y", lambda: 2))  # the method needs no binding
            t = threading.Thread(target=unbound)
            t.start()
            t.join()
            return 0

        wf()
        self.assertIn("bind it", errors[0])
        self.assertEqual(errors[1], 2)

    def test_workflow_methods(self):
        import asyncio

        @lil.durable(goal_id="m", dir=self.dir)
        def wf():
            w = lil.current()
            out = [w.step("a", lambda: 1), w.effect("b", lambda x: x, 2)]

            async def both():
                return [await w.async_step("c", lambda: 3),
                        await w.async_effect("d", lambda: 4)]
            return out + asyncio.run(both())

        self.assertEqual(wf(), [1, 2, 3, 4])
        self.assertEqual(self.steps("m"), [("a", "step"), ("b", "intent"), ("b", "step"),
                                           ("c", "step"), ("d", "intent"), ("d", "step")])

    def test_run_does_not_close_under_a_running_step(self):
        inside, release = threading.Event(), threading.Event()
        holder = {}

        @lil.durable(goal_id="c", dir=self.dir)
        def wf():
            w = lil.current()

            def slow():
                inside.set()
                release.wait(20)
                return "late"
            t = threading.Thread(target=lambda: holder.setdefault("v", w.step("slow", slow)))
            t.start()
            inside.wait(20)
            holder["t"] = t
            return "body done"

        with self.assertRaises(RuntimeError) as cm:
            wf()
        self.assertIn("still in progress", str(cm.exception))
        release.set()
        holder["t"].join()
        self.assertEqual(holder["v"], "late")
        gc.collect()  # the run closes when its last reference goes
        self.assertEqual(lil.status("c", dir=self.dir).state, "completed")
        self.assertIn(("slow", "step"), self.steps("c"))


if __name__ == "__main__":
    unittest.main()

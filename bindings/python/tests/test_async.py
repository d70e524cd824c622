"""test_async.py -- durable_async and async_step: distinct steps of one
workflow run concurrently under asyncio.gather (all of them at once, not
one after another); identities follow the order of the calls, so repeated
names replay to the same values; replayed steps return without awaiting;
cancellation journals nothing; workflows gathered together stay apart;
side-effect steps and synced commits (sync=full) go to threads."""

import asyncio
import random
import unittest

from helpers import LilCase, lil


class AsyncTest(LilCase):
    def run_async(self, coro):
        return asyncio.run(asyncio.wait_for(coro, 60))

    def test_async_steps_replay(self):
        calls = []

        async def fetch(x):
            calls.append(x)
            await asyncio.sleep(0)
            return {"x": x}

        @lil.durable_async(goal_id="a", dir=self.dir)
        async def wf(stop):
            a = await lil.async_step("fetch", fetch, 1)
            b = await lil.async_step("sync-fn", lambda: (calls.append(2), (2,))[1])
            c = lil.step("plain", lambda: 3)
            if stop:
                raise RuntimeError("stop")
            return [a, b, c]

        with self.assertRaises(RuntimeError):
            self.run_async(wf(True))
        self.assertEqual(self.run_async(wf(False)), [{"x": 1}, (2,), 3])
        self.assertEqual(calls, [1, 2])

    def test_gather_runs_distinct_steps_together(self):
        n = 200
        started = 0
        all_in = asyncio.Event()

        async def work(i):
            nonlocal started
            started += 1
            if started == n:
                all_in.set()
            await asyncio.wait_for(all_in.wait(), 20)  # every step is in flight at once
            return i * i

        @lil.durable(goal_id="g", dir=self.dir, sync="full")
        async def wf():
            return await asyncio.gather(*(lil.async_step(f"s{i}", work, i) for i in range(n)))

        self.assertEqual(self.run_async(wf()), [i * i for i in range(n)])
        self.assertEqual(len(self.steps("g")), n)

    def test_repeated_names_in_gather_replay_in_call_order(self):
        rnd = random.Random(3)
        delays = [rnd.random() / 100 for _ in range(50)]

        async def work(i):
            await asyncio.sleep(delays[i])  # finish in another order
            return i

        async def body(stop):
            out = await asyncio.gather(*(lil.async_step("s", work, i) for i in range(50)))
            if stop:
                raise RuntimeError("stop")
            return out

        wf = lil.durable_async(goal_id="r", dir=self.dir)(body)
        with self.assertRaises(RuntimeError):
            self.run_async(wf(True))
        recs = self.steps("r")
        self.assertEqual(sorted(k for k, _ in recs),
                         sorted(["s"] + [f"s#{i}" for i in range(2, 51)]))

        async def never(i):
            raise AssertionError("replayed steps must not run")

        wf2 = lil.durable_async(goal_id="r", dir=self.dir)(
            lambda stop: _gather_same(never, 50))
        self.assertEqual(self.run_async(wf2(False)), list(range(50)))

    def test_gathered_workflows_stay_apart(self):
        async def body(k):
            await asyncio.sleep(0.01)
            v = await lil.async_step("v", lambda: k)
            await asyncio.sleep(0.01)
            return [lil.current().goal_id, v]

        wf = lil.durable_async(goal_id=lambda k: f"w{k}", dir=self.dir)(body)

        async def main():
            return await asyncio.gather(wf(1), wf(2), wf(3))

        self.assertEqual(self.run_async(main()), [["w1", 1], ["w2", 2], ["w3", 3]])

    def test_cancelled_step_journals_nothing(self):
        gate = asyncio.Event

        async def body(cancel):
            if cancel:
                ev = gate()
                t = asyncio.ensure_future(lil.async_step("slow", ev.wait))
                await asyncio.sleep(0.01)
                t.cancel()
                with self.assertRaises(asyncio.CancelledError):
                    await t
                raise RuntimeError("stop")
            return await lil.async_step("slow", lambda: "ran")

        wf = lil.durable_async(goal_id="c", dir=self.dir)(body)
        with self.assertRaises(RuntimeError):
            self.run_async(wf(True))
        self.assertEqual(self.steps("c"), [])
        self.assertEqual(self.run_async(wf(False)), "ran")

    def test_failures_replay(self):
        async def boom():
            raise LookupError("gone")

        async def body(n):
            try:
                await lil.async_step("b", boom if n == 0 else None)
            except LookupError as e:
                r = ["caught", str(e)]
            if n == 0:
                raise RuntimeError("stop")
            return r

        wf = lil.durable(goal_id="f", dir=self.dir)(body)  # durable on a coroutine
        with self.assertRaises(RuntimeError):
            self.run_async(wf(0))
        self.assertEqual(self.run_async(wf(1)), ["caught", "gone"])

    def test_async_effects_full_sync(self):
        async def send(i):
            await asyncio.sleep(0.001)
            self.record(f"send{i}")
            return i

        @lil.durable_async(goal_id="e", dir=self.dir, sync="full")
        async def wf():
            same = await asyncio.gather(*(lil.async_effect("send", send, i) for i in range(10)))
            other = await asyncio.gather(*(lil.async_effect(f"n{i}", send, i) for i in range(10)))
            return same + other

        self.assertEqual(self.run_async(wf()), list(range(10)) * 2)
        recs = self.records("e")
        intents = [r["key"] for r in recs if r["type"] == "intent"]
        self.assertEqual(len(intents), 20)
        self.assertEqual(len(self.lines()), 20)

    def test_to_thread_inherits_the_workflow(self):
        @lil.durable_async(goal_id="t", dir=self.dir)
        async def wf():
            def in_thread(i):
                return lil.step(f"t{i}", lambda: i + 1)
            return await asyncio.gather(*(asyncio.to_thread(in_thread, i) for i in range(5)))

        self.assertEqual(self.run_async(wf()), [1, 2, 3, 4, 5])

    def test_outside_a_workflow(self):
        with self.assertRaises(RuntimeError):
            self.run_async(lil.async_step("x", lambda: 1))


async def _gather_same(fn, n):
    return await asyncio.gather(*(lil.async_step("s", fn, i) for i in range(n)))


if __name__ == "__main__":
    unittest.main()

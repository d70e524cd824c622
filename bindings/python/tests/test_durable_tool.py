"""test_durable_tool.py -- lil.durable_tool on plain and async functions:
the identity rule (tool name, argument digest, occurrence), replay without
running, recorded failures, effect=True after a SIGKILL, the wrapper's
signature, names lil would refuse, and a call outside a workflow."""

import asyncio
import inspect
import signal

from helpers import LilCase, lil
from lil import _tool


class DurableTool(LilCase):
    def tool(self, **options):
        @lil.durable_tool(**options)
        def add(a: int, b: int = 0) -> int:
            """Adds."""
            self.record(f"add {a} {b} {lil.current_step().identity}")
            return a + b
        return add

    def workflow(self, body, goal="tools"):
        @lil.durable(goal_id=goal, dir=self.dir)
        def wf(fail):
            result = body()
            if fail:
                raise RuntimeError("stop before the end")
            return result
        return wf

    def test_runs_once_per_identity_and_replays(self):
        add = self.tool()
        wf = self.workflow(lambda: [add(1, 2), add(1, 2), add(3), add(b=2, a=1)])
        with self.assertRaises(RuntimeError):
            wf(True)
        digest = _tool.call_digest((1, 2), {})
        self.assertEqual(self.lines(), [
            f"add 1 2 tool:add:{digest}", f"add 1 2 tool:add:{digest}#2",
            f"add 3 0 tool:add:{_tool.call_digest((3,), {})}",
            f"add 1 2 tool:add:{_tool.call_digest((), {'a': 1, 'b': 2})}"])
        self.assertEqual(wf(False), [3, 3, 3, 3])
        self.assertEqual(len(self.lines()), 4)  # the replay ran nothing

    def test_digest_ignores_keyword_order(self):
        self.assertEqual(_tool.call_digest((), {"a": 1, "b": {"x": 1, "y": 2}}),
                         _tool.call_digest((), {"b": {"y": 2, "x": 1}, "a": 1}))
        self.assertNotEqual(_tool.call_digest((1,), {}), _tool.call_digest((2,), {}))
        self.assertNotEqual(_tool.call_digest((1,), {}), _tool.call_digest(("1",), {}))

    def test_other_arguments_are_other_work(self):
        add = self.tool()
        with self.assertRaises(RuntimeError):
            self.workflow(lambda: add(1, 2))(True)
        self.assertEqual(self.workflow(lambda: add(5, 5))(False), 10)
        self.assertEqual([line.split()[:3] for line in self.lines()],
                         [["add", "1", "2"], ["add", "5", "5"]])

    def test_a_recorded_failure_raises_without_running(self):
        @lil.durable_tool
        def boom(x):
            self.record("boom")
            raise ValueError(f"bad {x}")

        def body():
            try:
                boom(1)
            except ValueError as e:
                return str(e)
        wf = self.workflow(body)
        with self.assertRaises(RuntimeError):
            wf(True)
        self.assertEqual(wf(False), "bad 1")
        self.assertEqual(self.lines(), ["boom"])

    def test_async_tool(self):
        @lil.durable_tool(name="fetch")
        async def fetch(url):
            self.record(f"fetch {url}")
            await asyncio.sleep(0)
            return {"url": url}

        @lil.durable_async(goal_id="atools", dir=self.dir)
        async def wf():
            return await asyncio.gather(fetch("a"), fetch("b"), fetch("a"))

        self.assertTrue(inspect.iscoroutinefunction(fetch))
        first = asyncio.run(wf())
        self.assertEqual(first, [{"url": "a"}, {"url": "b"}, {"url": "a"}])
        self.assertEqual(sorted(self.lines()), ["fetch a", "fetch a", "fetch b"])
        self.assertEqual(asyncio.run(wf()), first)
        self.assertEqual(len(self.lines()), 3)

    def test_wrapper_keeps_what_frameworks_read(self):
        add = self.tool()
        self.assertEqual(add.__name__, "add")
        self.assertEqual(add.__doc__, "Adds.")
        self.assertEqual(str(inspect.signature(add)), "(a: int, b: int = 0) -> int")
        self.assertEqual(add.lil_tool_name, "add")
        self.assertEqual(self.tool(name="sum").lil_tool_name, "sum")

    def test_names_lil_refuses_are_replaced(self):
        self.assertEqual(_tool.step_name("tool", "a#b\nc", "0" * 16), f"tool:a_b_c:{'0' * 16}")
        self.assertEqual(len(_tool.step_name("tool", "x" * 500, "0" * 16)), 5 + 120 + 17)
        tool = lil.durable_tool(name="say#1")(lambda: "hi")
        self.assertEqual(self.workflow(tool)(False), "hi")

    def test_outside_a_workflow(self):
        add = self.tool()
        with self.assertRaisesRegex(RuntimeError, "outside a @durable workflow"):
            add(1, 2)
        self.assertEqual(self.lines(), [])
        with self.assertRaises(TypeError):
            lil.durable_tool(42)

    KILLED_EFFECT = """
        import os, signal, sys
        import lil
        from helpers import append_line

        @lil.durable_tool(effect=True)
        def pay(cents):
            append_line(sys.argv[2], f"pay {cents}")
            os.kill(os.getpid(), signal.SIGKILL)

        @lil.durable(goal_id="pay", dir=sys.argv[1])
        def wf():
            return pay(100)

        wf()
    """

    def test_effect_tool_killed_is_uncertain(self):
        p = self.run_py(self.KILLED_EFFECT, self.dir, self.side, check=False)
        self.assertEqual(p.returncode, -signal.SIGKILL, p.stderr)
        self.assertEqual(self.lines(), ["pay 100"])
        p = self.run_py(self.KILLED_EFFECT, self.dir, self.side, check=False)
        self.assertIn("UncertainStepError", p.stderr)
        self.assertEqual(self.lines(), ["pay 100"])  # not run again silently
        name = _tool.step_name("tool", "pay", _tool.call_digest((100,), {}))
        lil.resolve("pay", name, "assume_done", result="paid", reason="the bank has it",
                    dir=self.dir)

        @lil.durable(goal_id="pay", dir=self.dir)
        def wf():
            return lil.durable_tool(name="pay", effect=True)(lambda cents: "again")(100)
        self.assertEqual(wf(), "paid")


class AdaptersImportLazily(LilCase):
    def test_no_framework_is_imported(self):
        p = self.run_py("""
            import sys
            import lil
            import lil.adapters.autogen, lil.adapters.crewai, lil.adapters.smolagents
            print(sorted(m for m in sys.modules
                         if m.split(".")[0] in ("smolagents", "autogen_agentchat",
                                                "autogen_core", "autogen_ext", "crewai")))
        """)
        self.assertEqual(p.stdout.strip(), "[]")

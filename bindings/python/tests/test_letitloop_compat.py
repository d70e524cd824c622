"""test_letitloop_compat.py -- a letitloop program's names, keywords and
words work against ``import lil``: ``durable(goal_id, wal_dir)``,
``step``/``async_step`` outside a workflow (letitloop's phrases,
LETITLOOP_LENIENT), ``DurableSerializationError`` ("non-serializable",
the class's qualname), ``atomic_marker(marker_id, run_dir)`` by position and
keyword, markers of any length, the token gate's ``prompt_chars=``,
``chars=``, ``StreamGuard`` and ``check_usage_authoritative``,
``LivenessSupervisor`` (exit statuses, ``restart_count``,
``rapid_failure_count``, ``CircuitBreakerError``) with a real SIGKILL, the
immediate ``supervise(fn, *args)``, the ``EXIT_*`` constants and
``ProcessGuard``.  letitloop's own test suite runs against lil in
python_letitloop_upstream."""

import asyncio
import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
import unittest
import warnings

from helpers import HERE, LilCase, lil


def _wait_dead(pid, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not lil.pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


class WordsTest(LilCase):
    def test_durable_goal_and_wal_dir_by_position(self):
        @lil.durable("invoice", self.dir)
        def flow(x):
            a = lil.step("double", self.counter("double", x * 2))
            return lil.step("add_ten", self.counter("add", a + 10))

        self.assertEqual(flow(5), 20)
        self.assertEqual(flow(5), 20)
        self.assertEqual(self.lines(), ["double", "add"])
        self.assertTrue(os.path.exists(os.path.join(self.dir, "invoice.lil")))
        with self.assertRaises(lil.UsageError):
            lil.durable("g", self.dir, dir=self.dir)

    def test_outside_a_workflow(self):
        os.environ.pop("LIL_LENIENT", None)
        with self.assertRaises(RuntimeError) as cm:
            lil.step("orphan_step", lambda: 1)
        msg = str(cm.exception)
        self.assertIn("step('orphan_step') called outside a @durable context", msg)
        self.assertIn("outside a @durable workflow", msg)
        self.assertIn("LETITLOOP_LENIENT=1", msg)
        with self.assertRaises(RuntimeError) as cm:
            asyncio.run(lil.async_step("orphan", self._async_double, 1))
        self.assertIn("called outside a @durable_async context", str(cm.exception))
        os.environ["LETITLOOP_LENIENT"] = "1"
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                self.assertEqual(lil.step("lenient", lambda a, b: a + b, 10, 20), 30)
                self.assertEqual(asyncio.run(lil.async_step("a", self._async_double, 4)), 8)
            self.assertIn("non-durably", str(w[0].message))
        finally:
            del os.environ["LETITLOOP_LENIENT"]

    @staticmethod
    async def _async_double(x):
        return 2 * x

    def test_non_serializable(self):
        @lil.durable(goal_id="bad", wal_dir=self.dir)
        def bad():
            return lil.step("lock_step", threading.Lock)

        with self.assertRaises(lil.DurableSerializationError) as cm:
            bad()
        self.assertIsInstance(cm.exception, TypeError)
        self.assertIn("returned non-serializable object", str(cm.exception))

        @lil.durable(goal_id="local", dir=self.dir)
        def local():
            @dataclasses.dataclass
            class Point:
                x: int
            return lil.step("p", Point, 1)

        with self.assertRaises(lil.DurableSerializationError) as cm:
            local()
        msg = str(cm.exception)
        self.assertIn("local.<locals>.Point", msg)
        self.assertNotIn("type type", msg)


class MarkerTest(LilCase):
    def test_positional_and_keyword(self):
        with lil.atomic_marker("charge_card_123", self.dir) as should_run:
            self.assertTrue(should_run)
            self.record("charge")
        with lil.atomic_marker(marker_id="charge_card_123", run_dir=self.dir) as should_run:
            self.assertFalse(should_run)
        self.assertEqual(self.lines(), ["charge"])
        with self.assertRaises(lil.UsageError):
            lil.atomic_marker("a", marker_id="b")
        with self.assertRaises(lil.UsageError):
            lil.atomic_marker("a", self.dir, dir=self.dir)

    def test_readme_pattern_in_a_workflow(self):
        @lil.durable(goal_id="payment", wal_dir=self.dir)
        def pay():
            with lil.atomic_marker("slack_notification") as should_execute:
                if should_execute:
                    lil.step("notify", self.counter("notify"))

        pay()
        pay()
        self.assertEqual(self.lines(), ["notify"])

    def test_a_block_that_raises_runs_again(self):
        with self.assertRaises(ValueError):
            with lil.atomic_marker("payment_tx", run_dir=self.dir) as should_run:
                self.assertTrue(should_run)
                raise ValueError("network")
        with lil.atomic_marker("payment_tx", run_dir=self.dir) as should_run:
            self.assertTrue(should_run)
        with lil.atomic_marker("payment_tx", run_dir=self.dir) as should_run:
            self.assertFalse(should_run)

    def test_names_of_any_length(self):
        base = "x" * 300
        names = [base + "a", base + "b", "y" * 5000, "with#hash", "tab\tname"]
        for n in names:
            with lil.atomic_marker(n, self.dir) as m:
                self.assertTrue(m, n[:20])
        code = """
            import sys, lil
            for n in sys.argv[2:]:
                with lil.atomic_marker(n, sys.argv[1]) as m:
                    print(bool(m))
        """
        p = self.run_py(code, self.dir, *[n for n in names if "\t" not in n])
        self.assertEqual(p.stdout.split(), ["False"] * 4)

        @lil.durable(goal_id="g" * 180, dir=self.dir)
        def flow():
            with lil.atomic_marker("z" * 190) as m:
                return bool(m)

        self.assertTrue(flow())
        # a name that fits keeps its name: reset finds it by that name
        with lil.atomic_marker("short-name", self.dir):
            pass
        self.assertTrue(lil.reset_marker("short-name", dir=self.dir))
        self.assertEqual(lil._marker._marker_name("short-name", True), "short-name")
        hashed = lil._marker._marker_name(base + "a", True)
        self.assertEqual(hashed, lil._marker._marker_name(base + "a", True))
        self.assertNotEqual(hashed, lil._marker._marker_name(base + "b", True))
        self.assertLessEqual(len(hashed), 200)


class TokenWordsTest(LilCase):
    def test_keywords(self):
        self.assertEqual(lil.approx_tokens(chars=100), 34)
        self.assertEqual(lil.preflight(prompt_chars=3000, max_tokens=1000,
                                       caller="test"), 2000)
        with self.assertRaises(lil.TokenGateError) as cm:
            lil.preflight(prompt_chars=lil.HARD_CAP_TOTAL * 4, max_tokens=100)
        self.assertIn("TOKEN GATE: pre-flight refusal", str(cm.exception))
        with self.assertRaises(TypeError):
            lil.preflight("text", prompt_chars=4)
        self.assertEqual(lil.EXIT_GATE, 3)

    def test_stream_guard_and_usage(self):
        ledger = os.path.join(self.tmp, "ledger.jsonl")
        guard = lil.StreamGuard(prompt_chars=300, caller="stream", model="m", ledger=ledger)
        self.assertFalse(guard.exceeded)
        guard.add("hello world")
        self.assertFalse(guard.exceeded)
        guard.add("x" * (lil.HARD_CAP_TOTAL * 3))
        self.assertTrue(guard.exceeded)
        guard.report()
        ok = {"prompt_tokens": 100, "completion_tokens": 200, "total_tokens": 300}
        self.assertFalse(lil.check_usage_authoritative(ok, est_prompt=100, caller="t"))
        over = {"total_tokens": 1_100_000}
        self.assertTrue(lil.check_usage_authoritative(over, est_prompt=5, ledger=ledger))
        kinds = [line.split('"kind": "')[1].split('"')[0] for line in self.lines_of(ledger)]
        self.assertEqual(kinds, ["stream_aborted", "usage_over_cap"])

    @staticmethod
    def lines_of(path):
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()


class LivenessTest(LilCase):
    def script(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_constants(self):
        self.assertEqual((lil.EXIT_CLEAN, lil.EXIT_SIGINT, lil.EXIT_SIGKILL, lil.EXIT_SIGSEGV,
                          lil.EXIT_SIGTERM), (0, 130, 137, 139, 143))
        self.assertEqual((lil.EXIT_RESTARTS, lil.EXIT_CRASH_LOOP, lil.EXIT_SAME_STEP),
                         (80, 81, 82))

    def test_clean_exit(self):
        path = self.script("clean.py", "import os, sys\n"
                           "print(os.environ['LETITLOOP_SUPERVISED'], os.getcwd())\n")
        sub = os.path.join(self.tmp, "sub")
        os.mkdir(sub)
        out = self.run_py(f"""
            import sys, lil
            sup = lil.LivenessSupervisor([sys.executable, {path!r}], cwd={sub!r},
                                         max_restarts=3, silent=True)
            code = sup.run()
            print("code", code, sup.restart_count, flush=True)
        """).stdout
        self.assertIn("code 0 0", out)
        self.assertIn(f"1 {sub}", out)

    def test_sigkill_then_resume(self):
        wal = os.path.join(self.tmp, "wal")
        side = self.side
        path = self.script("job.py", f"""
import os, signal, sys
sys.path[:0] = [{os.path.dirname(HERE)!r}, {HERE!r}]
import lil
from helpers import append_line

@lil.durable(goal_id="sup_goal", wal_dir={wal!r})
def job():
    lil.step("step_1", lambda: append_line({side!r}, "step_1") or 1)
    if os.environ["LIL_ATTEMPT"] == "1":
        os.kill(os.getpid(), signal.SIGKILL)
    lil.step("step_2", lambda: append_line({side!r}, "step_2") or 2)
    return "success"

job()
""")
        events = []
        sup = lil.LivenessSupervisor([sys.executable, path], max_restarts=3, backoff=0.1,
                                     healthy_threshold_sec=0.01, silent=True,
                                     on_event=events.append)
        self.assertEqual(sup.run(), 0)
        self.assertEqual(sup.restart_count, 1)
        self.assertEqual(self.lines(), ["step_1", "step_2"])
        deaths = [e for e in events if e["kind"] == "death"]
        self.assertEqual([d["signal"] for d in deaths], [signal.SIGKILL])
        self.assertIn("done", [e["kind"] for e in events])

    def test_circuit_breaker_and_restart_limit(self):
        path = self.script("broken.py", "import sys; sys.exit(1)\n")
        sup = lil.LivenessSupervisor([sys.executable, path], max_restarts=10, backoff=0.05,
                                     healthy_threshold_sec=5.0, max_rapid_failures=3,
                                     silent=True)
        with self.assertRaises(lil.CircuitBreakerError) as cm:
            sup.run()
        self.assertIsInstance(cm.exception, RuntimeError)
        self.assertIn("Circuit breaker tripped", str(cm.exception))
        self.assertGreaterEqual(sup.rapid_failure_count, 3)
        sup = lil.LivenessSupervisor([sys.executable, path], max_restarts=2, backoff=0.05,
                                     silent=True)
        self.assertEqual(sup.run(), lil.EXIT_RESTARTS)
        self.assertEqual(sup.restart_count, 2)
        with self.assertRaises(FileNotFoundError):
            lil.LivenessSupervisor(["no-such-program-here"]).run()

    def test_supervise_immediate_form(self):
        p = self.run_py(f"""
            import os, signal, lil
            def work(a, b):
                if os.environ["LIL_ATTEMPT"] == "1":
                    os.kill(os.getpid(), signal.SIGKILL)
                print("result", a + b, flush=True)
            lil.supervise(work, 2, 3, max_restarts=2, backoff=0.05,
                          healthy_threshold_sec=0.01)
        """)
        self.assertIn("result 5", p.stdout)


class ProcessGuardTest(LilCase):
    GRANDCHILD = """
import os, signal, subprocess, sys, time
gc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(gc.pid))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
signal.signal(signal.SIGTERM, signal.SIG_IGN)
time.sleep(60)
"""

    def test_sweep_ends_the_tree(self):
        pid_file = os.path.join(self.tmp, "gc.pid")
        guard = lil.ProcessGuard()
        parent = guard.spawn([sys.executable, "-c", self.GRANDCHILD, pid_file])
        deadline = time.monotonic() + 20
        while not os.path.exists(pid_file) and time.monotonic() < deadline:
            time.sleep(0.05)
        with open(pid_file) as f:
            gc_pid = int(f.read())
        self.assertTrue(lil.pid_alive(parent.pid))
        guard.sweep(timeout=10)
        self.assertTrue(_wait_dead(parent.pid))
        self.assertTrue(_wait_dead(gc_pid))

    def test_context_manager_and_helpers(self):
        with self.assertRaises(ValueError):
            with lil.ProcessGuard() as guard:
                sleeper = guard.spawn([sys.executable, "-c", "import time; time.sleep(30)"])
                raise ValueError("boom")
        self.assertTrue(_wait_dead(sleeper.pid))
        for bad in (None, -1, 0):
            self.assertFalse(lil.pid_alive(bad))
        done = subprocess.Popen([sys.executable, "-c", "pass"])
        done.wait()
        lil.kill_process_tree(done.pid)
        self.assertFalse(lil.pid_alive(done.pid))
        self.assertIsInstance(lil.DEFAULT_GUARD, lil.ProcessGuard)
        g = lil.ProcessGuard()
        for _ in range(5):
            p = subprocess.Popen([sys.executable, "-c", "pass"])
            p.wait()
            g.register(p)
        live = g.spawn([sys.executable, "-c", "import time; time.sleep(10)"])
        self.assertEqual(len(g._procs), 1)
        g.sweep(timeout=5)
        self.assertEqual(len(g._procs), 0)
        self.assertTrue(_wait_dead(live.pid))

    def test_signal_handlers(self):
        self.assertTrue(lil.install_signal_handlers())
        try:
            self.assertFalse(lil.install_signal_handlers())
            self.assertIsNot(signal.getsignal(signal.SIGTERM), signal.SIG_DFL)
        finally:
            lil.uninstall_signal_handlers()
        self.assertEqual(signal.getsignal(signal.SIGTERM), signal.SIG_DFL)
        p = self.run_py("""
            import os, signal, subprocess, sys, time, lil
            guard = lil.ProcessGuard()
            child = guard.spawn([sys.executable, "-c", "import time; time.sleep(60)"])
            print(child.pid, flush=True)
            lil.install_signal_handlers(guard)
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(30)
        """, check=False)
        self.assertEqual(p.returncode, -signal.SIGTERM)
        self.assertTrue(_wait_dead(int(p.stdout.split()[0])))


if __name__ == "__main__":
    unittest.main()

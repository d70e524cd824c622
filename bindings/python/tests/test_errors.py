"""test_errors.py -- lil's statuses become the package's exceptions (each
with its status name and lil's message), the classes letitloop programs
catch keep their names and bases, and the names a letitloop program
imports exist: `from lil import durable, step, atomic_marker, ...`."""

import os
import unittest

from helpers import LilCase, lil


class ErrorTest(LilCase):
    def test_letitloop_names(self):
        from lil import (CircuitBreakerError, DurableSerializationError,  # noqa: F401
                         NonDeterministicReplayError, RunLockedError, UncertainStepError,
                         approx_tokens, async_step, atomic_marker, durable, durable_async,
                         preflight, step, supervise)
        self.assertTrue(issubclass(DurableSerializationError, TypeError))
        self.assertTrue(issubclass(CircuitBreakerError, RuntimeError))
        self.assertTrue(issubclass(lil.TokenGateError, RuntimeError))
        self.assertTrue(issubclass(lil.UsageError, ValueError))
        self.assertTrue(issubclass(lil.JournalIOError, OSError))
        self.assertTrue(issubclass(lil.NotFoundError, LookupError))
        self.assertIs(lil.NondeterminismError, NonDeterministicReplayError)
        for name in lil.__all__:
            self.assertTrue(hasattr(lil, name), name)
        for cls in (DurableSerializationError, NonDeterministicReplayError, RunLockedError,
                    UncertainStepError, CircuitBreakerError, lil.StepFailed):
            self.assertTrue(issubclass(cls, lil.Error), cls)

    def test_damaged_journal(self):
        @lil.durable(goal_id="d", dir=self.dir)
        def wf(stop):
            for i in range(20):
                lil.step(f"s{i}", lambda i=i: "x" * 100)
            if stop:
                raise RuntimeError("stop")

        with self.assertRaises(RuntimeError):
            wf(True)
        path = os.path.join(self.dir, "d.lil")
        with open(path, "r+b") as f:
            data = f.read()
            at = [i for i in range(len(data)) if data.startswith(b"x" * 100, i)]
            mid = at[len(at) // 2]  # a step record in the middle of the journal
            f.seek(mid + 5)
            f.write(b"Y")
        with self.assertRaises(lil.CorruptJournalError) as cm:
            wf(True)
        self.assertEqual(cm.exception.status, "LIL_E_CORRUPT")
        self.assertIn("d", str(cm.exception))

    def test_wrong_key(self):
        code = """
            import sys, lil
            @lil.durable(goal_id="k", dir=sys.argv[1])
            def wf():
                return lil.step("a", lambda: 1)
            print(wf())
        """
        p = self.run_py(code, self.dir, env={"LIL_JOURNAL_KEY": "secret"})
        self.assertEqual(p.stdout.strip(), "1")
        with self.assertRaises(lil.JournalKeyError):
            lil.status("k", dir=self.dir)

    def test_not_found_and_ended(self):
        with self.assertRaises(lil.NotFoundError):
            lil.resolve("nobody", "x", "retry", reason="r", dir=self.dir)

        @lil.durable(goal_id="e", dir=self.dir)
        def wf():
            lil.step("a", lambda: 1)
            return 2

        wf()
        with self.assertRaises(lil.NotFoundError):
            lil.resolve("e", "a", "retry", reason="not uncertain", dir=self.dir)

        @lil.durable(goal_id="e2", dir=self.dir)
        def ended():
            lil.current()._run.complete("1")
            lil.step("late", lambda: 1)

        with self.assertRaises(lil.RunEndedError) as cm:
            ended()
        self.assertEqual(cm.exception.status, "LIL_E_DONE")
        with self.assertRaises(lil.UsageError):
            lil.resolve("e", "a", "maybe", reason="r", dir=self.dir)


if __name__ == "__main__":
    unittest.main()

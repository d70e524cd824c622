"""test_steps.py -- lil.step and lil.effect: a journaled step does not run
again; identity is name + occurrence; a step that raises is journaled
failed and raises the same exception again on replay (or StepFailed when
its class cannot be found without importing); KeyboardInterrupt, lil's own
errors and values the codec refuses journal nothing; a side-effect step
killed while it runs leaves the workflow uncertain until resolved (retry,
assume_done, abort), and a replay with other arguments is refused."""

import os
import signal
import subprocess
import sys
import time
import unittest
import warnings

from helpers import LilCase, lil, read_lines


class ShippingError(Exception):
    def __init__(self, code, detail):
        super().__init__(code, detail)
        self.code = code
        self.detail = detail


class NeedsKeyword(Exception):
    def __init__(self, *, reason):
        super().__init__(reason)


class StepTest(LilCase):
    def wf(self, body, goal="g", **kw):
        return lil.durable(goal_id=goal, dir=self.dir, **kw)(body)

    def test_completed_step_does_not_run_again(self):
        def body(fail):
            a = lil.step("a", self.counter("a", 1))
            b = lil.step("b", self.counter("b", [a, 2]))
            if fail:
                raise RuntimeError("crash after b")
            return lil.step("c", self.counter("c", {"b": b}))

        wf = self.wf(body)
        with self.assertRaises(RuntimeError):
            wf(True)
        self.assertEqual(wf(False), {"b": [1, 2]})
        self.assertEqual(self.lines(), ["a", "b", "c"])
        self.assertEqual(self.steps("g"), [("a", "step"), ("b", "step"), ("c", "step")])

    def test_identity_is_name_and_occurrence(self):
        def body():
            ids = []
            for i in range(3):
                lil.step("s", lambda i=i: ids.append(lil.current_step().identity) or i)
            return ids

        self.assertEqual(self.wf(body)(), ["s", "s#2", "s#3"])
        self.assertEqual([k for k, _ in self.steps("g")], ["s", "s#2", "s#3"])

    def test_failure_is_journaled_and_raised_again(self):
        attempts = []

        def ship():
            attempts.append(1)
            raise ShippingError(42, {"why": "no stock"})

        def body():
            try:
                lil.step("ship", ship)
            except ShippingError as e:
                return ["caught", e.code, e.detail, getattr(e, "lil_replayed", False)]

        wf = self.wf(body)
        self.assertEqual(wf.fresh(), ["caught", 42, {"why": "no stock"}, False])

        def body2():
            with self.assertRaises(ShippingError) as cm:
                lil.step("ship", ship)
            e = cm.exception
            self.assertTrue(e.lil_replayed)
            self.assertIn("failed in an earlier run", "".join(e.__notes__))
            return [e.code, e.detail]

        # the first run completed; a fresh run of another goal replays nothing,
        # so replay the failure in a run that has not completed
        goal2 = self.wf(lambda: (lil.step("ship", ship), 1)[1], goal="g2")
        with self.assertRaises(ShippingError):
            goal2()
        self.assertEqual(self.wf(body2, goal="g2")(), [42, {"why": "no stock"}])
        self.assertEqual(len(attempts), 2)  # once per goal, never on replay
        self.assertEqual(self.steps("g2"), [("ship", "step-failed")])

    def test_builtin_exceptions_and_long_messages(self):
        long = "é" * 700 + "end"
        cases = [KeyError("k"), ValueError("bad", 3), ZeroDivisionError(long),
                 NeedsKeyword(reason="x")]

        def body(replay):
            out = []
            for i, exc in enumerate(cases):
                def fn(exc=exc):
                    if replay:
                        raise AssertionError("ran on replay")
                    raise exc
                try:
                    lil.step(f"f{i}", fn)
                except Exception as e:  # noqa: BLE001
                    out.append((type(e).__name__, str(e), e.args))
            if not replay:
                raise RuntimeError("stop")
            return out

        wf = self.wf(body)
        with self.assertRaises(RuntimeError):
            wf(False)
        got = wf(True)
        self.assertEqual(got[0], ("KeyError", "'k'", ("k",)))
        self.assertEqual(got[1], ("ValueError", "('bad', 3)", ("bad", 3)))
        self.assertEqual(got[2][0], "ZeroDivisionError")
        self.assertTrue(got[2][1].startswith("é" * 100))  # past lil's 200-byte message
        # a class that cannot be built from its args or message: StepFailed
        self.assertEqual(got[3][0], "StepFailed")
        self.assertIn("NeedsKeyword: x", got[3][1])

    def test_unknown_exception_class_is_step_failed(self):
        code = """
            import sys, lil
            class Private(Exception):
                pass
            @lil.durable(goal_id="p", dir=sys.argv[1])
            def wf():
                lil.step("x", lambda: (_ for _ in ()).throw(Private("secret stuff")))
            try:
                wf()
            except Private:
                print("raised Private")
        """
        p = self.run_py(code, self.dir)
        self.assertIn("raised Private", p.stdout)

        def body():
            lil.step("x", lambda: self.fail("ran again"))

        with self.assertRaises(lil.StepFailed) as cm:
            self.wf(body, goal="p")()
        self.assertEqual(cm.exception.type_name, "__main__.Private")
        self.assertEqual(cm.exception.message, "secret stuff")
        self.assertIn("Private: secret stuff", str(cm.exception))

    def test_interrupts_and_lil_errors_journal_nothing(self):
        def body(n):
            if n == 0:
                lil.step("k", lambda: (_ for _ in ()).throw(KeyboardInterrupt()))
            if n == 1:
                lil.step("k", lambda: lil.step("bad#name", lambda: 1))
            if n == 2:
                async def coro():
                    return 1
                lil.step("k", coro)
            return lil.step("k", self.counter("k"))

        wf = self.wf(body)
        with self.assertRaises(KeyboardInterrupt):
            wf(0)
        with self.assertRaises(lil.UsageError):
            wf(1)
        with self.assertRaises(TypeError):
            wf(2)
        self.assertEqual(self.steps("g"), [])
        self.assertEqual(wf(3), "k")
        self.assertEqual(self.steps("g"), [("k", "step")])

    def test_bad_names(self):
        def body(name):
            return lil.step(name, lambda: 1)

        wf = self.wf(body)
        for name in ("", "a#b", "tab\there", "x" * 201):
            with self.subTest(name=name[:10]):
                with self.assertRaises(lil.UsageError) as cm:
                    wf(name)
                self.assertIsInstance(cm.exception, ValueError)
        with self.assertRaises(TypeError):
            wf(3)
        self.assertEqual(wf("x" * 200), 1)

    def test_outside_a_workflow(self):
        with self.assertRaises(RuntimeError) as cm:
            lil.step("loose", lambda: 1)
        self.assertIn("outside a @durable workflow", str(cm.exception))
        self.assertIsNone(lil.current())
        self.assertIsNone(lil.current_step())
        os.environ["LIL_LENIENT"] = "1"
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                self.assertEqual(lil.step("loose", lambda x: x + 1, 1), 2)
            self.assertIn("non-durably", str(w[0].message))
        finally:
            del os.environ["LIL_LENIENT"]

    def test_current_step(self):
        seen = []

        def body():
            lil.step("a", lambda: seen.append(lil.current_step()))
            return seen[0].identity, seen[0].attempt, seen[0].idempotency_key

        ident, attempt, key = self.wf(body)()
        self.assertEqual((ident, attempt), ("a", 1))
        self.assertRegex(key, r"^lil-[0-9a-f]{32}$")

    def test_effect_arguments_are_compared(self):
        def body(amount, plain=False):
            if plain:
                return lil.step("pay", lambda: 0)
            return lil.effect("pay", lambda a: self.counter("pay", a)(), amount)

        wf = self.wf(body)
        self.assertEqual(wf.fresh(100), 100)
        # same goal, run completed: start again without completing, then diverge
        wf2 = self.wf(lambda a, stop: (lil.effect("pay", self.counter("pay"), a),
                                       stop and (_ for _ in ()).throw(RuntimeError()))[0],
                      goal="e2")
        with self.assertRaises(RuntimeError):
            wf2(100, True)
        with self.assertRaises(lil.NonDeterministicReplayError):
            wf2(200, True)
        wf3 = self.wf(lambda: lil.step("pay", lambda: 0), goal="e2")
        with self.assertRaises(lil.NonDeterministicReplayError):
            wf3()
        self.assertEqual(wf2(100, False), "pay")
        self.assertEqual(self.lines(), ["pay", "pay"])  # goal g, then goal e2 once
        self.assertEqual(self.steps("e2"), [("pay", "intent"), ("pay", "step")])

    KILLED_EFFECT = """
        import os, signal, sys, lil
        @lil.durable(goal_id="pay", dir=sys.argv[1])
        def wf():
            lil.step("before", lambda: 1)
            def charge(n):
                with open(sys.argv[2], "a") as f:
                    f.write(f"charge {lil.current_step().idempotency_key}\\n")
                os.kill(os.getpid(), signal.SIGKILL)
            return lil.effect("charge", charge, 5)
        wf()
    """

    def killed_effect(self):
        p = self.run_py(self.KILLED_EFFECT, self.dir, self.side, check=False)
        self.assertEqual(p.returncode, -signal.SIGKILL, p.stderr)
        st = lil.status("pay", dir=self.dir)
        self.assertEqual(st.state, "uncertain")
        self.assertEqual(st.uncertain, ["charge"])

    def pay_again(self, charge):
        return self.wf(lambda: (lil.step("before", lambda: self.fail("replayed")),
                                lil.effect("charge", charge, 5))[1], goal="pay")()

    def test_killed_effect_is_uncertain_then_retried(self):
        self.killed_effect()
        with self.assertRaises(lil.UncertainStepError) as cm:
            self.pay_again(lambda n: self.fail("must not run"))
        self.assertIn("'charge'", str(cm.exception))
        lil.resolve("pay", "charge", "retry", reason="the card was not charged", dir=self.dir)
        info = []

        def charge(n):
            s = lil.current_step()
            info.append((s.attempt, s.idempotency_key))
            return "charged"

        self.assertEqual(self.pay_again(charge), "charged")
        first_key = read_lines(self.side)[0].split()[1]
        self.assertEqual(info, [(2, first_key)])  # same key: the remote side dedupes

    def test_killed_effect_assumed_done(self):
        self.killed_effect()
        lil.resolve("pay", "charge", "assume_done", result={"receipt": 7},
                    reason="the bank says it went through", dir=self.dir)
        self.assertEqual(self.pay_again(lambda n: self.fail("must not run")), {"receipt": 7})

    def cli_resolve(self, *flags):
        """`lil resolve` (the package's command) of the goal pay's effect."""
        run_id = lil.status("pay", dir=self.dir).run_id
        p = subprocess.run([sys.executable, "-m", "lil", "resolve", run_id, "charge",
                            *flags, "--reason", "the bank says so", "--dir", self.dir],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_killed_effect_assumed_done_by_the_cli(self):
        self.killed_effect()
        self.cli_resolve("--assume-done", "--result", '{"receipt": 7}')
        self.assertEqual(self.pay_again(lambda n: self.fail("must not run")), {"receipt": 7})

    def test_killed_effect_assumed_done_by_the_cli_without_result(self):
        self.killed_effect()
        self.cli_resolve("--assume-done")
        for _ in range(2):  # the same clear error on every replay
            with self.assertRaises(lil.DurableSerializationError) as cm:
                self.pay_again(lambda n: self.fail("must not run"))
            self.assertIn("step 'charge' was resolved as done without a result",
                          str(cm.exception))
            self.assertIn("--result JSON", str(cm.exception))
        self.assertEqual(read_lines(self.side)[0].split()[0], "charge")
        self.assertEqual(len(read_lines(self.side)), 1)

    def test_killed_effect_aborted(self):
        self.killed_effect()
        lil.resolve("pay", "charge", "abort", reason="give up", actor="ops", dir=self.dir)
        with self.assertRaises(lil.WorkflowFailedError):
            self.pay_again(lambda n: self.fail("must not run"))
        self.assertEqual(lil.status("pay", dir=self.dir).state, "stopped")

    def test_effect_that_raises_is_failed_not_uncertain(self):
        def body():
            with self.assertRaises(ValueError):
                lil.effect("send", lambda: (_ for _ in ()).throw(ValueError("refused")))
            return "ok"

        self.assertEqual(self.wf(body)(), "ok")
        self.assertEqual(self.steps("g"), [("send", "intent"), ("send", "step-failed")])

    def test_unencodable_effect_result_leaves_it_uncertain(self):
        def body():
            return lil.effect("send", lambda: object())

        with self.assertRaises(lil.DurableSerializationError):
            self.wf(body)()
        self.assertEqual(lil.status("g", dir=self.dir).state, "uncertain")

    def test_sync_modes(self):
        for mode in ("full", "normal", "off"):
            wf = self.wf(lambda: [lil.step("a", lambda: 1) for _ in range(3)],
                         goal=f"m-{mode}", sync=mode)
            self.assertEqual(wf(), [1, 1, 1])
            self.assertEqual(lil.status(f"m-{mode}", dir=self.dir).state, "completed")
        with self.assertRaises(lil.UsageError):
            self.wf(lambda: 1, sync="sometimes")


if __name__ == "__main__":
    unittest.main()

"""test_supervise.py -- @lil.supervise on lil_supervise: a workflow killed
twice (SIGKILL) is restarted and resumes from its journal, every step once,
the code before the call once and the code after it in the last child; the
supervisor reports each start and death (with the run and the step) and
exits with the child's status; it gives up on a crash loop with 81 (where
letitloop raised CircuitBreakerError, logged as such), after the restart
limit with 80; restart="on-crash" passes an exit code on; supervising
inside a workflow and bad options are refused."""

import os
import signal
import unittest

from helpers import LilCase, lil

SCRIPT = """
import os, signal, sys, lil
side = sys.argv[1]
def rec(line):
    with open(side, "a") as f:
        f.write(line + "\\n")
rec("before")
@lil.supervise(backoff=0.05, on_event=lambda e: rec(f"event {e['kind']} {e['run_id']} {e['step']}"))
@lil.durable(goal_id="sv", dir="st")
def main(n):
    attempt = int(os.environ["LIL_ATTEMPT"])
    for i in range(n):
        lil.step(f"s{i}", lambda i=i: rec(f"step {i} attempt {attempt}") or i)
        if i == attempt and i < 3:
            os.kill(os.getpid(), signal.SIGKILL)
    return "done"
rec(f"after {main(5)} {os.environ['LIL_SUPERVISED']}")
"""

FAILING = """
import sys, lil
@lil.supervise(backoff=0, {opts})
def main():
    sys.exit({code})
main()
"""


class SuperviseTest(LilCase):
    def test_killed_workflow_is_restarted_and_resumes(self):
        p = self.run_py(SCRIPT, self.side)
        self.assertEqual(p.returncode, 0)
        lines = self.lines()
        self.assertEqual(lines.count("before"), 1)
        steps = [line for line in lines if line.startswith("step")]
        self.assertEqual(steps, ["step 0 attempt 1", "step 1 attempt 1", "step 2 attempt 2",
                                 "step 3 attempt 3", "step 4 attempt 3"])
        self.assertEqual([line for line in lines if line.startswith("after")],
                         ["after done 1"])  # in the last child only
        events = [line for line in lines if line.startswith("event")]
        self.assertEqual([e.split()[1] for e in events],
                         ["start", "death", "backoff", "start", "death", "backoff", "start",
                          "done", "exit"])
        self.assertEqual(events[1], "event death sv s1")
        self.assertEqual(events[4], "event death sv s2")
        self.assertIn("was killed by SIGKILL", p.stderr)  # logged at WARNING
        self.assertNotIn("exited with 0", p.stderr)  # an end, not a death: INFO

    def test_crash_loop_gives_up(self):
        for opts in ("crash_loop=(3, 5.0)", "max_rapid_failures=3, healthy_threshold_sec=5.0"):
            with self.subTest(opts=opts):
                p = self.run_py(FAILING.format(opts=opts, code=1), check=False)
                self.assertEqual(p.returncode, lil._lil.SUPERVISE_EXIT_CRASH_LOOP, p.stderr)
                self.assertIn("CircuitBreakerError", p.stderr)

    def test_restart_limit(self):
        p = self.run_py(FAILING.format(opts="max_restarts=2", code=1), check=False)
        self.assertEqual(p.returncode, lil._lil.SUPERVISE_EXIT_RESTARTS, p.stderr)
        self.assertEqual(p.stderr.count("exited with 1"), 3)

    def test_on_crash_passes_an_exit_code_on(self):
        p = self.run_py(FAILING.format(opts="restart='on-crash'", code=3), check=False)
        self.assertEqual(p.returncode, 3, p.stderr)

    def test_immediate_call_returns_in_the_child(self):
        p = self.run_py("""
            import os, lil
            print(lil.supervise(lambda a, b: a + b, 2, b=3), os.environ["LIL_ATTEMPT"])
        """)
        self.assertEqual(p.stdout.strip(), "5 1")

    def test_refused(self):
        @lil.durable(goal_id="in", dir=self.dir)
        def wf():
            return lil.supervise(lambda: 1)

        with self.assertRaises(lil.UsageError):
            wf()
        for bad in ({"restart": "sometimes"}, {"max_restarts": 0}, {"backoff": -1},
                    {"crash_loop": (0, 1.0)}):
            with self.subTest(bad=bad):
                with self.assertRaises(lil.UsageError):
                    lil.supervise(**bad)(lambda: 1)


if __name__ == "__main__":
    unittest.main()

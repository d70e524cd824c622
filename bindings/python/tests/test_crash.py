"""test_crash.py -- a Python workflow SIGKILLed at random moments, again and
again, and resumed until it completes (crash_worker.py is the workload):

- after every kill the journal opens (a SIGKILL never damages it) and
  lil check finds it intact, or with a torn tail only;
- no completed step runs twice: no attempt runs the function of a step the
  journal held completed when the attempt began (a step killed before its
  record was written may run again: it had not completed);
- the journal holds a prefix of the steps, in order, and every journaled
  value was made by an attempt that ran that step;
- a side-effect step killed while it ran leaves the workflow uncertain; the
  test decides as a person would, from the side file: assume_done (with the
  value the step would have returned) when the effect happened, retry when
  not -- so every side effect happens exactly once;
- at the end every step is journaled once and the result holds all of them.

Runs cycle through sync full, normal and off.  Default: at least 100 kills
(CTest python_crash); LIL_PY_CRASH_KILLS=N sets the count (the slow test
python_crash_long: 1000), LIL_PY_CRASH_SEED the seed.
"""

import json
import os
import random
import signal
import subprocess
import sys
import time
import unittest

from helpers import HERE, LilCase, lil, read_lines

N_STEPS = 40
MODES = ("full", "normal", "off")


class Attempt:
    def __init__(self, pid, done):
        self.pid = pid
        self.done = done


def parse(lines):
    """{pid: Attempt} with .runs (plain step indexes), .eruns, .effects."""
    attempts = {}
    for line in lines:
        parts = line.split()
        kind, pid = parts[0], int(parts[1])
        if kind == "begin":
            a = attempts[pid] = Attempt(pid, int(parts[2]))
            a.runs, a.eruns, a.effects, a.ended = [], [], [], False
        elif kind == "run":
            attempts[pid].runs.append(int(parts[2]))
        elif kind == "erun":
            attempts[pid].eruns.append(int(parts[2]))
        elif kind == "effect":
            attempts[pid].effects.append(int(parts[2]))
        elif kind == "end":
            attempts[pid].ended = True
    return attempts


def name(i):
    return f"e{i}" if i % 8 == 7 else f"s{i}"


class CrashTest(LilCase):
    def setUp(self):
        super().setUp()
        self.kills = int(os.environ.get("LIL_PY_CRASH_KILLS", "100"))
        self.rnd = random.Random(int(os.environ.get("LIL_PY_CRASH_SEED", "20240601")))
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(HERE), HERE,
                                                  self.env.get("PYTHONPATH", "")])

    def start(self, goal, mode):
        return subprocess.Popen(
            [sys.executable, os.path.join(HERE, "crash_worker.py"), self.dir, self.side,
             goal, mode, str(N_STEPS)], env=self.env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)

    def wait_begun(self, proc):
        """Wait until the attempt has logged its begin line."""
        tag = f"begin {proc.pid} "
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return
            if any(line.startswith(tag) for line in self.lines()):
                return
            time.sleep(0.001)
        self.fail("the worker did not begin")

    def calibrate(self):
        """Seconds from begin to exit of an uninterrupted run."""
        p = self.start("calibration", "off")
        self.wait_begun(p)
        t0 = time.monotonic()
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual([v["i"] for v in json.loads(out)], list(range(N_STEPS)))
        return time.monotonic() - t0

    def journal_steps(self, goal):
        """[(identity, value)] of the step records, in order."""
        st = lil._core.get_store(self.dir)
        status = lil.status(goal, dir=self.dir)
        if status is None:  # killed before the journal's first record: not created
            return []
        run_id = status.run_id
        report = st.check(run_id)
        self.assertTrue(report["intact"] or report["torn_tail"], report["message"])
        return [(r["key"], json.loads(r["payload"])) for r in self.records(run_id)
                if r["type"] == "step"]

    def check_attempts(self, goal_lines):
        attempts = parse(goal_lines)
        for a in attempts.values():
            ran = a.runs + a.eruns
            # no completed step runs twice
            self.assertTrue(all(i >= a.done for i in ran),
                            f"attempt {a.pid} began with {a.done} steps done and ran {ran}")
        return attempts

    def check_journal(self, goal, attempts):
        steps = self.journal_steps(goal)
        self.assertEqual([k for k, _ in steps], [name(i) for i in range(len(steps))],
                         "the journal holds a prefix of the steps, in order")
        for i, (_, v) in enumerate(steps):
            a = attempts.get(v["pid"])
            self.assertIsNotNone(a, f"step {i} journaled by an unknown attempt")
            self.assertIn(i, a.runs + a.effects, f"step {i} journaled by {v['pid']}, "
                                                  "which did not run it")
        return steps

    def resolve_if_uncertain(self, goal, attempts):
        st = lil.status(goal, dir=self.dir)
        if st is None or st.state != "uncertain":
            return None
        (identity,) = st.uncertain
        i = int(identity[1:])
        done_by = [a.pid for a in attempts.values() if i in a.effects]
        self.assertLessEqual(len(done_by), 1, f"effect {i} happened twice")
        if done_by:
            lil.resolve(goal, identity, "assume_done", result={"i": i, "pid": done_by[0]},
                        reason="the side file shows it happened", dir=self.dir)
            return "assume_done"
        lil.resolve(goal, identity, "retry", reason="the side file shows it did not happen",
                    dir=self.dir)
        return "retry"

    def finish_round(self, goal, out):
        lines = self.goal_lines
        attempts = self.check_attempts(lines)
        steps = self.check_journal(goal, attempts)
        self.assertEqual(len(steps), N_STEPS)
        result = json.loads(out)
        self.assertEqual(result, [v for _, v in steps])
        for i in range(N_STEPS):
            if i % 8 == 7:
                n = sum(a.effects.count(i) for a in attempts.values())
                self.assertEqual(n, 1, f"effect {i} happened {n} times")
            else:
                self.assertGreaterEqual(sum(a.runs.count(i) for a in attempts.values()), 1)

    def test_sigkill_at_random(self):
        t_run = self.calibrate()
        os.unlink(self.side)
        kills, rounds, resolutions, k = 0, 0, {"retry": 0, "assume_done": 0}, 0
        goal = "crash-0"
        started = time.monotonic()
        while kills < self.kills:
            mode = MODES[k % 3]
            k += 1
            p = self.start(goal, mode)
            self.wait_begun(p)
            time.sleep(self.rnd.uniform(0, t_run * 1.1))
            killed = p.poll() is None
            if killed:
                p.send_signal(signal.SIGKILL)
            out, err = p.communicate(timeout=60)
            self.goal_lines = read_lines(self.side)
            attempts = self.check_attempts(self.goal_lines)
            self.check_journal(goal, attempts)
            if killed and p.returncode == -signal.SIGKILL:
                kills += 1
                how = self.resolve_if_uncertain(goal, attempts)
                if how:
                    resolutions[how] += 1
                continue
            if p.returncode == 3:
                self.fail("a worker found the run uncertain: the test resolves first")
            self.assertEqual(p.returncode, 0, err)
            self.finish_round(goal, out)
            rounds += 1
            goal = f"crash-{rounds}"
            os.unlink(self.side)
        # let the last round finish
        p = self.start(goal, "full")
        out, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, err)
        self.goal_lines = read_lines(self.side)
        self.finish_round(goal, out)
        print(f"\n{kills} kills, {rounds + 1} rounds completed, resolutions {resolutions}, "
              f"{time.monotonic() - started:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()

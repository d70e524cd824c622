"""test_loop.py -- lil.Loop: run, step, stop and resume, approve, recover and
current return RunResults (status, exit code, iteration, state, reason,
next iteration, the uncertain effect) as `lil run` and its verbs do; every
shell effect runs once (side file); a spec with errors raises SpecError
with its diagnostics; inputs are passed as a dict."""

import errno
import json
import os
import unittest

from helpers import LilCase, lil, read_lines

COUNTER = """
loopspec: "0.1"
id: counter
pattern: react
inputs:
  limit: {type: int, default: 3}
state:
  vars:
    n: {type: int, init: 0}
body:
  - id: bump
    kind: shell
    cmd: "echo bump-${state.n} >> @SIDE@"
    on_done: {incr: n}
  @MORE@
terminate: {signal: state-predicate, until: "${state.n >= inputs.limit}"}
caps: {max_iterations: 10, on_cap_exceeded: fail}
"""

# The first time, the command kills the Python process running the loop
# (its parent), leaving an intent without outcome.
KILLER = ("echo start >> @SIDE@; if [ ! -e @TMP@/killed ]; then : > @TMP@/killed; "
          "kill -9 $PPID; sleep 1; fi; echo '{\"x\": 2}'")
RISKY = """
loopspec: "0.1"
id: risky
pattern: react
state:
  vars:
    n: {type: int, init: 0}
    x: {type: int, init: 0}
body:
  - id: charge
    kind: shell
    cmd: %s
    save: {x: "$.x"}
    on_done: {incr: n}
terminate: {signal: state-predicate, until: "${state.n >= 1}"}
caps: {max_iterations: 3}
""" % json.dumps(KILLER)


class LoopTest(LilCase):
    def spec(self, text, name="loop.yaml", **subst):
        subst.setdefault("SIDE", self.side)
        subst.setdefault("TMP", self.tmp)
        subst.setdefault("MORE", "")
        for k, v in subst.items():
            text = text.replace(f"@{k}@", v)
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_run_to_completion(self):
        loop = lil.Loop(self.spec(COUNTER), dir=self.dir)
        res = loop.run()
        self.assertEqual((res.status, res.exit_code, res.iteration, res.state),
                         ("completed", 0, 3, {"n": 3}))
        self.assertTrue(res.completed)
        self.assertIsNone(res.reason)
        self.assertEqual(self.lines(), ["bump-0", "bump-1", "bump-2"])
        again = loop.run()
        self.assertEqual((again.status, again.iteration), ("completed", 3))
        self.assertEqual(len(self.lines()), 3)  # nothing ran again
        self.assertEqual(loop.current().status, "completed")

    def test_step_and_inputs(self):
        loop = lil.Loop(self.spec(COUNTER), dir=self.dir, inputs={"limit": 2}, run_id="c2")
        first = loop.step()
        self.assertEqual((first.status, first.exit_code, first.next_iteration),
                         ("waiting", 4, 1))
        self.assertEqual(loop.step().status, "waiting")
        self.assertEqual(loop.step().status, "completed")
        self.assertEqual(self.lines(), ["bump-0", "bump-1"])

    def test_stop_before_the_run_exists(self):
        loop = lil.Loop(self.spec(COUNTER), dir=self.dir)
        loop.stop(reason="not yet", actor="ops")  # no run yet: the request waits
        res = loop.step()
        self.assertEqual((res.status, res.exit_code, res.iteration), ("stopped", 5, 0))
        self.assertEqual(res.reason, "not yet")
        self.assertEqual(self.lines(), [])
        self.assertEqual(loop.resume(reason="go").status, "completed")
        self.assertEqual(len(self.lines()), 3)

    def test_stop_then_resume(self):
        loop = lil.Loop(self.spec(COUNTER), dir=self.dir)
        loop.step()
        loop.stop(reason="maintenance", actor="ops")
        res = loop.run()
        self.assertEqual((res.status, res.exit_code), ("stopped", 5))
        self.assertIn("maintenance", res.reason)
        self.assertEqual(self.lines(), ["bump-0"])
        self.assertEqual(loop.resume(reason="back").status, "completed")
        self.assertEqual(len(self.lines()), 3)

    def test_breakpoint_approve(self):
        more = "- id: ask\n    kind: breakpoint\n    ask: \"go on after ${state.n}?\""
        loop = lil.Loop(self.spec(COUNTER, MORE=more), dir=self.dir)
        res = loop.run()
        self.assertEqual((res.status, res.exit_code), ("paused", 3))
        self.assertIn("go on after 1?", res.reason)
        with self.assertRaises(lil.UsageError):
            loop.approve(reason="")
        res = loop.approve(reason="looked at it", actor="me")
        self.assertEqual(res.status, "paused")  # the next iteration's breakpoint
        self.assertEqual(loop.run(yes=True, reason="all of them").status, "completed")

    def test_recover_uncertain_effect(self):
        path = self.spec(RISKY)
        p = self.run_py("""
            import sys, lil
            lil.Loop(sys.argv[1], dir=sys.argv[2]).run()
        """, path, self.dir, check=False)
        self.assertEqual(p.returncode, -9, p.stderr)
        loop = lil.Loop(path, dir=self.dir)
        res = loop.run()
        self.assertEqual((res.status, res.exit_code), ("uncertain", 2))
        self.assertEqual({k: res.uncertain[k] for k in ("iteration", "seq", "kind")},
                         {"iteration": 0, "seq": 0, "kind": "shell"})
        self.assertEqual(self.lines(), ["start"])
        res = loop.recover("assume_done", result={"x": 1}, reason="it went through")
        self.assertEqual((res.status, res.state), ("completed", {"n": 1, "x": 1}))
        self.assertEqual(self.lines(), ["start"])  # not run again

    def test_cassette_record_and_replay(self):
        path = self.spec(COUNTER)
        tape = os.path.join(self.tmp, "tape.jsonl")
        res = lil.Loop(path, dir=self.dir, record=tape).run()
        self.assertEqual(res.status, "completed")
        self.assertEqual(len(self.lines()), 3)
        self.assertEqual(len(read_lines(tape)), 3)
        loop = lil.Loop(path, dir=self.dir, replay=tape)
        self.assertEqual(loop.run().state, {"n": 3})
        self.assertEqual(len(self.lines()), 3)  # answered from the cassette
        self.assertEqual(loop.diagnostics, lil.Loop(path, dir=self.dir).diagnostics)

    def test_spec_errors(self):
        bad = self.spec("loopspec: \"0.1\"\nid: bad\nbody: 3\n", name="bad.yaml")
        with self.assertRaises(lil.SpecError) as cm:
            lil.Loop(bad, dir=self.dir)
        self.assertTrue(any(d["severity"] == "error" for d in cm.exception.diagnostics))
        self.assertIn("bad.yaml", str(cm.exception))
        missing = os.path.join(self.tmp, "missing.yaml")
        with self.assertRaises(FileNotFoundError) as nf:
            lil.Loop(missing, dir=self.dir)
        self.assertIsInstance(nf.exception, lil.SpecNotFoundError)
        self.assertIsInstance(nf.exception, lil.SpecError)
        self.assertEqual(nf.exception.errno, errno.ENOENT)
        self.assertEqual(nf.exception.filename, missing)
        self.assertNotIsInstance(nf.exception, lil.JournalIOError)
        with self.assertRaises(lil.UsageError):
            lil.Loop(self.spec(COUNTER), dir=self.dir).recover("maybe", reason="r")


if __name__ == "__main__":
    unittest.main()

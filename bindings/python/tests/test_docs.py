"""test_docs.py -- the quickstart of docs/python.md does what the page says:
killed part-way, run again, it fetches only the pages it had not fetched
(the page being fetched when it was killed may be fetched again: its step
had not completed), and a third run prints the journaled total without
fetching anything."""

import os
import re
import signal
import subprocess
import sys
import unittest

from helpers import HERE, LilCase

QUICKSTART = os.path.join(os.path.dirname(HERE), "examples", "quickstart.py")


class DocsTest(LilCase):
    def run_quickstart(self, kill_after=None):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(HERE), env.get("PYTHONPATH", "")])
        env.pop("LIL_DIR", None)
        p = subprocess.Popen([sys.executable, QUICKSTART], cwd=self.tmp, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = []
        for line in p.stdout:
            lines.append(line.strip())
            if kill_after and line.strip() == f"fetched page {kill_after}":
                p.send_signal(signal.SIGKILL)
                break
        p.wait(timeout=60)
        p.stdout.close()
        p.stderr.close()
        return p.returncode, lines

    def test_quickstart_crashes_and_resumes(self):
        rc, first = self.run_quickstart(kill_after=3)
        self.assertEqual(rc, -signal.SIGKILL)
        self.assertEqual(first, ["fetched page 1", "fetched page 2", "fetched page 3"])
        rc, second = self.run_quickstart()
        self.assertEqual(rc, 0)
        pages = [int(m.group(1)) for m in map(re.compile(r"fetched page (\d+)").match, second) if m]
        self.assertIn(pages[0], (3, 4))  # page 3 again only if killed before its record
        self.assertEqual(pages, list(range(pages[0], 11)))
        self.assertEqual(second[-1], "total words: 5500")
        rc, third = self.run_quickstart()
        self.assertEqual((rc, third), (0, ["total words: 5500"]))
        self.assertTrue(os.path.isfile(os.path.join(self.tmp, ".lil", "quickstart.lil")))


if __name__ == "__main__":
    unittest.main()

"""Store.remove_run of the extension module (lil_run_remove): a run that has
ended is removed, one still running only with force, one a live process
holds never, and a missing one gives False."""

import unittest

from helpers import LilCase

import lil
from lil import _lil


class RemoveRunTest(LilCase):
    def setUp(self):
        super().setUp()
        self.st = lil._core.get_store(self.dir)

    def make(self, run_id, complete):
        run = self.st.open_run(run_id, _lil.SYNC_OFF)
        call = run.begin("s")
        call.end("1")
        if complete:
            run.complete("done")
        run.close()

    def test_ended_run_is_removed(self):
        self.make("ended", complete=True)
        self.assertTrue(self.st.remove_run("ended"))
        self.assertFalse(self.st.exists("ended"))
        self.assertNotIn("ended", self.st.run_ids())

    def test_running_run_needs_force(self):
        self.make("running", complete=False)
        with self.assertRaises(lil.UsageError) as cm:
            self.st.remove_run("running")
        self.assertIn("running", str(cm.exception))
        self.assertTrue(self.st.exists("running"))
        self.assertTrue(self.st.remove_run("running", force=True))
        self.assertFalse(self.st.exists("running"))

    def test_held_run_is_not_removed(self):
        self.make("held", complete=False)
        run = self.st.open_run("held", _lil.SYNC_OFF)
        try:
            with self.assertRaises(lil.RunLockedError):
                self.st.remove_run("held", force=True)
        finally:
            run.close()
        self.assertTrue(self.st.exists("held"))
        self.assertTrue(self.st.remove_run("held", force=True))

    def test_missing_run_gives_false(self):
        self.assertFalse(self.st.remove_run("nothing-here"))
        with self.assertRaises(lil.UsageError):
            self.st.remove_run("bad/id")


if __name__ == "__main__":
    unittest.main()

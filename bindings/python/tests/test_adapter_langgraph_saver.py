"""lil.adapters.langgraph.LilSaver beyond the conformance suite: threads
held by another process (read from a snapshot, never written), release and
max_open letting another process write, listing every thread of the store,
thread ids lil cannot take as run ids, and the run's records.

Runs with the python of scripts/pyenv.sh bindings/python/requirements/
langgraph.txt (bindings/python/CMakeLists.txt).
"""

import json
import os
import time
import unittest

from helpers import LilCase

from langgraph.checkpoint.conformance.test_utils import (generate_checkpoint,
                                                         generate_config,
                                                         generate_metadata)

import lil
from lil.adapters.langgraph import LilSaver

# A child that puts one checkpoint on a thread, says so, and holds the
# thread until the file `release` exists.
HOLDER = r"""
import os, sys, time
from langgraph.checkpoint.conformance.test_utils import (generate_checkpoint,
                                                         generate_config, generate_metadata)
from lil.adapters.langgraph import LilSaver

store, thread, side, release = sys.argv[1:5]
saver = LilSaver(store)
cp = generate_checkpoint(channel_values={"who": "child"}, channel_versions={"who": 1})
saver.put(generate_config(thread), cp, generate_metadata(step=7), {"who": 1})
with open(side, "a") as f:
    f.write("held\n")
while not os.path.exists(release):
    time.sleep(0.01)
saver.close()
"""

# A child that puts one checkpoint on a thread and exits.
WRITER = r"""
import sys
from langgraph.checkpoint.conformance.test_utils import (generate_checkpoint,
                                                         generate_config, generate_metadata)
from lil.adapters.langgraph import LilSaver

store, thread = sys.argv[1:3]
with LilSaver(store) as saver:
    saver.put(generate_config(thread), generate_checkpoint(), generate_metadata(step=9), {})
print("written")
"""


def put(saver, thread, step=0, **values):
    cp = generate_checkpoint(channel_values=values,
                             channel_versions={k: 1 for k in values})
    return saver.put(generate_config(thread), cp, generate_metadata(step=step),
                     {k: 1 for k in values})


class HeldElsewhereTest(LilCase):
    def test_read_from_a_snapshot_never_written(self):
        release = os.path.join(self.tmp, "release")
        proc = self.spawn_py(HOLDER, self.dir, "t", self.side, release)
        try:
            while "held" not in self.lines():
                self.assertIsNone(proc.poll(), "the holder exited early")
                time.sleep(0.01)
            with LilSaver(self.dir) as saver:
                tup = saver.get_tuple(generate_config("t"))
                self.assertEqual(tup.checkpoint["channel_values"], {"who": "child"})
                self.assertEqual(tup.metadata["step"], 7)
                self.assertEqual([t.metadata["step"] for t in saver.list(None)], [7])
                with self.assertRaises(lil.RunLockedError):
                    put(saver, "t", who="parent")
                with self.assertRaises(lil.RunLockedError):
                    saver.delete_thread("t")
        finally:
            open(release, "w").close()
            out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 0, err)
        with LilSaver(self.dir) as saver:  # the holder is gone: writable again
            put(saver, "t", step=8, who="parent")
            self.assertEqual(saver.get_tuple(generate_config("t")).metadata["step"], 8)
            self.assertEqual(len(list(saver.list(generate_config("t")))), 2)

    def test_release_and_max_open_let_another_process_write(self):
        saver = LilSaver(self.dir, max_open=2)
        for t in ("a", "b"):
            put(saver, t)
        held = self.run_py(WRITER, self.dir, "a", check=False)  # "a" is held here
        self.assertNotEqual(held.returncode, 0)
        self.assertIn("RunLockedError", held.stderr)
        put(saver, "c")  # the third thread closes the least recently used: "a"
        self.assertEqual(self.run_py(WRITER, self.dir, "a").stdout.strip(), "written")
        saver.release("b")
        self.assertEqual(self.run_py(WRITER, self.dir, "b").stdout.strip(), "written")
        for t in ("a", "b"):  # opened again, with what the child wrote
            self.assertEqual(saver.get_tuple(generate_config(t)).metadata["step"], 9)
        saver.close()


class ThreadsTest(LilCase):
    def test_list_every_thread(self):
        odd = "team/7~2"  # not a valid run id: a readable prefix and a hash
        with LilSaver(self.dir) as saver:
            for i, t in enumerate(("x", "y", odd)):
                put(saver, t, step=i)
            self.assertNotEqual(saver.run_id(odd), "langgraph-" + odd)
            self.assertTrue(saver.run_id(odd).startswith("langgraph-team_7~2-"))
        st = lil._core.get_store(self.dir)
        st.open_run("not-a-thread").close()  # another run of the store
        with LilSaver(self.dir) as saver:
            found = {t.config["configurable"]["thread_id"]: t.metadata["step"]
                     for t in saver.list(None)}
            self.assertEqual(found, {"x": 0, "y": 1, odd: 2})
            self.assertEqual(len(list(saver.list(None, limit=2))), 2)
            self.assertEqual([t.metadata["step"] for t in saver.list(None,
                                                                      filter={"step": 1})],
                             [1])

    def test_records_of_a_thread(self):
        with LilSaver(self.dir, prefix="lg-") as saver:
            stored = put(saver, "r", who="me")
            saver.put_writes(stored, [("who", "you")], "task-1", "path-1")
            saver.put_writes(stored, [("who", "you")], "task-1", "path-1")  # again: nothing
            run_id = saver.run_id("r")
        self.assertEqual(run_id, "lg-r")
        steps = [(r["key"], json.loads(r["payload"])) for r in self.records(run_id)
                 if r["type"] == "step"]
        self.assertEqual([k for k, _ in steps], ["thread", "checkpoint 1", "writes 2"])
        self.assertEqual(steps[0][1], {"format": 1, "thread_id": "r"})
        cp = steps[1][1]
        self.assertEqual((cp["ns"], cp["id"], cp["parent"]), ("", stored["configurable"]
                                                              ["checkpoint_id"], None))
        self.assertEqual([b[:2] for b in cp["blobs"]], [["who", 1]])
        w = steps[2][1]
        self.assertEqual((w["task"], w["path"], [x[:2] for x in w["writes"]]),
                         ("task-1", "path-1", [[0, "who"]]))

    def test_damaged_record_is_named(self):
        st = lil._core.get_store(self.dir)
        run = st.open_run("langgraph-bad")
        run.begin("thread").end(json.dumps({"format": 1, "thread_id": "bad"}))
        run.begin("checkpoint 1").end('{"ns": ""}')
        run.close()
        with LilSaver(self.dir) as saver:
            with self.assertRaises(lil.CorruptJournalError) as cm:
                saver.get_tuple(generate_config("bad"))
        self.assertIn("langgraph-bad", str(cm.exception))
        self.assertIn("checkpoint 1", str(cm.exception))


if __name__ == "__main__":
    unittest.main()

"""LangGraph's own conformance suite (langgraph-checkpoint-conformance,
unchanged) against lil.adapters.langgraph.LilSaver.

Every base capability (put, put_writes, get_tuple, list, delete_thread)
must pass all its tests.  The store is a temporary directory, or, with
LIL_TEST_PG (the PostgreSQL fixture of tests/pg) and LIL_BIN, a fresh
schema of that database made with `lil db init`.

Runs with the python of scripts/pyenv.sh bindings/python/requirements/
langgraph.txt (bindings/python/CMakeLists.txt).
"""

import asyncio
import os
import subprocess
import unittest
import uuid

from helpers import LilCase

from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import BASE_CAPABILITIES
from langgraph.checkpoint.conformance.report import ProgressCallbacks

from lil.adapters.langgraph import LilSaver

PG = os.environ.get("LIL_TEST_PG")
LIL_BIN = os.environ.get("LIL_BIN")


class ConformanceTest(LilCase):
    def store(self):
        if not PG:
            return self.dir
        uri = f"{PG}&schema=lg_conf_{uuid.uuid4().hex[:8]}"
        r = subprocess.run([LIL_BIN, "--dir", uri, "db", "init"], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return uri

    def test_base_capabilities_pass(self):
        store = self.store()
        savers = []

        @checkpointer_test(name="LilSaver")
        async def lil_saver():
            saver = LilSaver(store, sync="normal")
            savers.append(saver)
            yield saver
            saver.close()

        report = asyncio.run(validate(lil_saver, progress=ProgressCallbacks.verbose()))
        report.print_report()
        self.assertEqual(len(savers), len(report.results))
        for cap in BASE_CAPABILITIES:
            result = report.results[cap.value]
            self.assertTrue(result.detected, cap.value)
            self.assertTrue(result.passed, f"{cap.value}: {result.failures}")
            self.assertGreater(result.tests_passed, 0, cap.value)
        self.assertTrue(report.passed_all_base())

    def test_a_thread_reopens_from_its_journal(self):
        """What one saver wrote, a new saver (a new process, after a crash)
        reads back from the journal alone."""
        store = self.store()

        @checkpointer_test(name="LilSaver, reopened")
        async def reopened():
            first = LilSaver(store, sync="normal")
            yield _Reopening(first, lambda: LilSaver(store, sync="normal"))
            first.close()

        report = asyncio.run(validate(reopened, capabilities={"put", "put_writes", "list"}))
        report.print_report()
        for cap in ("put", "put_writes", "list"):
            self.assertTrue(report.results[cap].passed, report.results[cap].failures)


class _Reopening(LilSaver):
    """A saver whose reads go through a second saver opened after each
    write closed the first one's runs: every read comes from the journal."""

    def __init__(self, writer, make_reader):  # the writer's state, shared: no super()
        self.__dict__.update(writer.__dict__)
        self._make_reader = make_reader

    def put(self, *args, **kwargs):
        try:
            return super().put(*args, **kwargs)
        finally:
            self.close()

    def put_writes(self, *args, **kwargs):
        try:
            return super().put_writes(*args, **kwargs)
        finally:
            self.close()

    def get_tuple(self, config):
        with self._make_reader() as reader:
            return reader.get_tuple(config)

    def list(self, config, **kwargs):
        with self._make_reader() as reader:
            return iter(list(reader.list(config, **kwargs)))


if __name__ == "__main__":
    unittest.main()

"""test_settings.py -- the package asks the library for its settings: the
store location (dir, else $LIL_DIR, else ./.lil; a postgresql:// URI kept
as it is) is the one the lil CLI opens, and lil._lil.setting gives a
setting's value in force with the library's checks.

With LIL_TEST_PG (the PostgreSQL fixture of tests/pg), a workflow run by
Python with LIL_DIR=postgresql://... is listed by `lil ls` with the same
LIL_DIR: both connect to the same store."""

import json
import os
import subprocess
import unittest
import uuid

from helpers import LilCase, lil

_lil = lil._lil
LIL_BIN = os.environ.get("LIL_BIN")
PG = os.environ.get("LIL_TEST_PG")
ISOLATED = ("LIL_DIR", "LIL_SYNC", "LIL_SPEC_MAX_BYTES", "LIL_AGENT_MAX_TOKENS",
            "LOOPY_AGENT_MAX_TOKENS")


class SettingsCase(LilCase):
    def setUp(self):
        super().setUp()
        self._saved = {k: os.environ.pop(k) for k in ISOLATED if k in os.environ}

    def tearDown(self):
        for k in ISOLATED:
            os.environ.pop(k, None)
        os.environ.update(self._saved)
        super().tearDown()

    def cli(self, *args, env_dir=None):
        env = dict(os.environ)
        env.pop("LIL_DIR", None)
        if env_dir is not None:
            env["LIL_DIR"] = env_dir
        return subprocess.run([LIL_BIN, *args], cwd=self.tmp, env=env,
                              capture_output=True, text=True, timeout=60)


class LocationTest(SettingsCase):
    def test_rule(self):
        self.assertEqual(_lil.store_location(), (".lil", False))
        self.assertEqual(lil._core.store_dir(), os.path.join(self.tmp, ".lil"))
        os.environ["LIL_DIR"] = "envdir"
        self.assertEqual(_lil.store_location(), ("envdir", False))
        self.assertEqual(lil._core.store_dir(), os.path.join(self.tmp, "envdir"))
        self.assertEqual(lil._core.store_dir("given"), os.path.join(self.tmp, "given"))
        os.environ["LIL_DIR"] = ""
        self.assertEqual(_lil.store_location(), (".lil", False))

    def test_uri_kept(self):
        for uri in ("postgresql://u@h:5432/db?schema=s", "postgres:///db?host=/x"):
            os.environ["LIL_DIR"] = uri
            self.assertEqual(_lil.store_location(), (uri, True))
            self.assertEqual(lil._core.store_dir(), uri)
            self.assertEqual(lil._core.store_dir(uri), uri)

    @unittest.skipUnless(LIL_BIN, "LIL_BIN is not set")
    def test_unreachable_uri_same_as_cli(self):
        """Both try to connect; neither makes a directory named postgresql:."""
        uri = f"postgresql:///nodb?host={self.tmp}/no-server&connect_timeout=2"
        os.environ["LIL_DIR"] = uri

        @lil.durable(goal_id="g")
        def wf():
            return 1

        with self.assertRaises(lil.Error) as cm:
            wf()
        self.assertEqual(cm.exception.status, "LIL_E_PG")
        r = self.cli("ls", env_dir=uri)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("cannot open store", r.stderr)
        self.assertNotIn("no store at", r.stderr)
        self.assertEqual(sorted(os.listdir(self.tmp)), [])

    @unittest.skipUnless(LIL_BIN, "LIL_BIN is not set")
    def test_directory_same_as_cli(self):
        os.environ["LIL_DIR"] = "envstore"

        @lil.durable(goal_id="here")
        def wf():
            return lil.step("s", lambda: 2)

        self.assertEqual(wf(), 2)
        self.assertTrue(os.path.isdir(os.path.join(self.tmp, "envstore")))
        r = self.cli("ls", "--json", env_dir="envstore")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("here", r.stdout)


class SettingTest(SettingsCase):
    def test_defaults_and_values(self):
        self.assertEqual(_lil.setting("LIL_SYNC"), "full")
        os.environ["LIL_SYNC"] = "normal"
        self.assertEqual(_lil.setting("LIL_SYNC"), "normal")
        self.assertEqual(_lil.setting("LIL_DIR"), ".lil")
        self.assertIsNone(_lil.setting("LIL_SPEC_MAX_BYTES"))
        self.assertEqual(_lil.setting("LIL_AGENT_MAX_TOKENS"), "2000")

    def test_loopy_alias(self):
        os.environ["LOOPY_AGENT_MAX_TOKENS"] = " 12 "
        self.assertEqual(_lil.setting("LIL_AGENT_MAX_TOKENS"), "12")
        self.assertEqual(_lil.setting("LOOPY_AGENT_MAX_TOKENS"), "12")
        os.environ["LIL_AGENT_MAX_TOKENS"] = "34"
        self.assertEqual(_lil.setting("LOOPY_AGENT_MAX_TOKENS"), "34")

    def test_refused(self):
        os.environ["LIL_SPEC_MAX_BYTES"] = "1MB"
        with self.assertRaises(lil.UsageError) as cm:
            _lil.setting("LIL_SPEC_MAX_BYTES")
        self.assertIn("LIL_SPEC_MAX_BYTES must be a positive number of bytes, not '1MB'",
                      str(cm.exception))
        os.environ["LIL_SYNC"] = "sometimes"
        with self.assertRaises(lil.UsageError) as cm:
            _lil.setting("LIL_SYNC")
        self.assertIn("LIL_SYNC=sometimes: expected full, normal or off", str(cm.exception))
        with self.assertRaises(lil.UsageError):
            _lil.setting("LIL_JOURNAL_KEY")  # a secret is never given
        with self.assertRaises(lil.NotFoundError):
            _lil.setting("LIL_NO_SUCH_THING")


@unittest.skipUnless(PG and LIL_BIN, "LIL_TEST_PG or LIL_BIN is not set")
class PostgresTest(SettingsCase):
    def test_python_and_cli_share_the_store(self):
        schema = "py_settings_" + uuid.uuid4().hex[:8]
        uri = f"{PG}&schema={schema}"
        r = self.cli("db", "init", env_dir=uri)
        self.assertEqual(r.returncode, 0, r.stderr)
        os.environ["LIL_DIR"] = uri

        @lil.durable(goal_id="pg-goal")
        def wf():
            return lil.step("s", lambda: 40) + 2

        self.assertEqual(wf(), 42)
        self.assertEqual(os.listdir(self.tmp), [])
        r = self.cli("ls", "--json", env_dir=uri)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("pg-goal", json.dumps(json.loads(r.stdout)))


if __name__ == "__main__":
    unittest.main()

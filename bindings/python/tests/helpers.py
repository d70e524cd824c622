"""What the tests of the lil package share.

Every test case runs in a temporary directory of its own (removed after),
with its store in ``self.dir`` and a side file (``self.side``) where step
functions append one line per real call, which counts calls across
processes.  ``run_py`` runs a Python snippet in a child process with the
same package (PYTHONPATH, LIL_PYTHON_EXT_DIR are inherited).

The tests need the extension module: built by CMake (which sets
LIL_PYTHON_EXT_DIR for CTest) or next to the package's files.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the package's parent: bindings/python

import lil  # noqa: E402


def append_line(path, line):
    """Append one line with a single write(2) (atomic under O_APPEND)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode("utf-8"))
    finally:
        os.close(fd)


def read_lines(path):
    try:
        with open(path, encoding="utf-8") as f:
            return [line.rstrip("\n") for line in f if line.strip()]
    except FileNotFoundError:
        return []


class LilCase(unittest.TestCase):
    """A test case with its own temporary directory, store and side file."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="lil-py-")
        self.dir = os.path.join(self.tmp, "store")
        self.side = os.path.join(self.tmp, "side.log")
        self._cwd = os.getcwd()
        os.chdir(self.tmp)

    def tearDown(self):
        os.chdir(self._cwd)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def record(self, line):
        append_line(self.side, line)

    def lines(self):
        return read_lines(self.side)

    def counter(self, name, value=None):
        """A step function that records `name` in the side file and returns
        value (or name)."""
        def fn(*args, **kwargs):
            self.record(name)
            return name if value is None else value
        return fn

    def run_py(self, code, *args, timeout=60, env=None, check=True):
        """Run code (dedented) in a child python3; returns CompletedProcess."""
        e = dict(os.environ)
        e["PYTHONPATH"] = os.pathsep.join(
            [os.path.dirname(HERE), HERE] + [p for p in e.get("PYTHONPATH", "").split(os.pathsep) if p])
        e.update(env or {})
        p = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                           cwd=self.tmp, env=e, capture_output=True, text=True,
                           timeout=timeout)
        if check and p.returncode != 0:
            self.fail(f"child exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
        return p

    def spawn_py(self, code, *args, env=None):
        e = dict(os.environ)
        e["PYTHONPATH"] = os.pathsep.join(
            [os.path.dirname(HERE), HERE] + [p for p in e.get("PYTHONPATH", "").split(os.pathsep) if p])
        e.update(env or {})
        return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                                cwd=self.tmp, env=e, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def records(self, run_id):
        """Every record of a run, read-only."""
        st = lil._core.get_store(self.dir)
        run = st.open_run(run_id, 0, lil._lil.OPEN_READONLY | lil._lil.OPEN_EXISTING)
        try:
            return run.records()
        finally:
            run.close()

    def steps(self, run_id):
        """{identity: record type} of the step records of a run."""
        return [(r["key"], r["type"]) for r in self.records(run_id)
                if r["type"] in ("step", "step-failed", "intent")]

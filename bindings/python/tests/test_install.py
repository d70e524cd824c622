"""test_install.py -- `pip install ./bindings/python` works with no index:
into a new virtual environment (python3 -m venv, whose pip comes with
Python), with pip's isolated build (the package's backend needs no package),
then a workflow runs from the installed package, outside the source tree,
and the `lil` command it installs (a console script) and `python -m lil`
run the package's command.

By default the wheel packs the module this build made (LIL_PYTHON_PREBUILT,
set by CTest from LIL_PYTHON_EXT_DIR); with LIL_PY_INSTALL_BUILD=1 (the slow
test python_install_build) the backend builds it from the sources with
CMake, as a user's install does.
"""

import glob
import os
import subprocess
import sys
import sysconfig
import unittest

from helpers import HERE, LilCase

PKG = os.path.dirname(HERE)


class InstallTest(LilCase):
    def test_pip_install_offline(self):
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "LIL_PYTHON_EXT_DIR", "LIL_PYTHON_PREBUILT")}
        env["PIP_NO_INDEX"] = "1"
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        if os.environ.get("LIL_PY_INSTALL_BUILD") != "1":
            ext = os.environ.get("LIL_PYTHON_EXT_DIR") or os.path.join(PKG, "lil")
            mods = glob.glob(os.path.join(ext, "_lil" + sysconfig.get_config_var("EXT_SUFFIX")))
            self.assertTrue(mods, f"no built module in {ext}")
            env["LIL_PYTHON_PREBUILT"] = mods[0]
        venv = os.path.join(self.tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True, env=env,
                       timeout=300, capture_output=True)
        py = os.path.join(venv, "bin", "python")
        p = subprocess.run([py, "-m", "pip", "install", PKG], env=env, cwd=self.tmp,
                           timeout=1800, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        code = ("import lil, os\n"
                "assert lil.__file__.startswith(os.environ['VENV']), lil.__file__\n"
                "@lil.durable(goal_id='i', dir='st')\n"
                "def wf(): return lil.step('a', lambda: (1, {2}))\n"
                "print(wf(), wf(), lil.__version__)\n")
        env["VENV"] = venv
        p = subprocess.run([py, "-c", code], env=env, cwd=self.tmp, timeout=120,
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("(1, {2}) (1, {2}) "), p.stdout)
        version = p.stdout.split()[-1]
        self.check_command(venv, env, version)
        self.check_adapters(py, env)

    def check_adapters(self, py, env):
        """The wheel has lil.adapters and names the frameworks' extras
        (pyproject.toml), none of which was installed."""
        code = ("import importlib.metadata as m, sys\n"
                "import lil.adapters.autogen, lil.adapters.crewai, lil.adapters.smolagents\n"
                "print(sorted(m.metadata('lil').get_all('Provides-Extra') or []))\n"
                "print(any(x in sys.modules for x in ('crewai', 'smolagents')))\n")
        p = subprocess.run([py, "-c", code], env=env, cwd=self.tmp, timeout=120,
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        extras, imported = p.stdout.split("\n")[:2]
        if sys.version_info >= (3, 11):
            for extra in ("autogen", "crewai", "smolagents"):
                self.assertIn(repr(extra), extras)
        self.assertEqual(imported, "False", p.stdout)

    def check_command(self, venv, env, version):
        """`lil` on the venv's PATH and `python -m lil` run the installed
        command: its version, its exit statuses, the run the workflow made."""
        env = dict(env, PATH=os.path.join(venv, "bin") + os.pathsep + "/usr/bin:/bin")
        py = os.path.join(venv, "bin", "python")
        for argv in (["lil"], [py, "-m", "lil"]):
            p = subprocess.run(argv + ["--version"], env=env, cwd=self.tmp, timeout=60,
                               capture_output=True, text=True)
            self.assertEqual((p.returncode, p.stdout), (0, f"lil {version}\n"),
                             f"{argv}: {p.stderr}")
            p = subprocess.run(argv + ["--dir", "st", "ls"], env=env, cwd=self.tmp,
                               timeout=60, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, f"{argv}: {p.stderr}")
            self.assertIn("i", p.stdout.split(), p.stdout)
            p = subprocess.run(argv + ["no-such-verb"], env=env, cwd=self.tmp, timeout=60,
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 64, f"{argv}: {p.stderr}")
        p = subprocess.run(["sh", "-c", "command -v lil"], env=env, capture_output=True,
                           text=True)
        self.assertEqual(p.stdout.strip(), os.path.join(venv, "bin", "lil"))


if __name__ == "__main__":
    unittest.main()

"""Run letitloop 0.7.0's own test suite against lil.

    run_in_venv.sh requirements/letitloop.txt letitloop_upstream.py WORKDIR

letitloop's source distribution ships its tests.  This script downloads it
(``pip download letitloop==0.7.0 --no-binary :all:``, by the venv's pip, into
WORKDIR), takes its ``tests/`` folder only, and writes beside it a shim: the
packages ``letitloop`` and ``orchestrator`` whose modules are lil's names
under letitloop's import paths (SHIM below).  Nothing of letitloop's own code
is importable there, so every test runs against lil.  Then pytest runs the
tests in that folder and each outcome is compared with
``letitloop_expected.txt`` (beside this file): a test id listed there must
fail, every other test must pass (or be skipped by letitloop's own skip
conditions).  An unexpected failure, or a listed test that passes (the list
is out of date), fails the run.  docs/python.md, "What differs", explains
each listed difference.

The output ends with "N passed, N failed" (the comparisons, not pytest's).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
BINDINGS = os.path.dirname(HERE)
EXPECTED = os.path.join(HERE, "letitloop_expected.txt")
VERSION = "0.7.0"

_PATH = f"import sys\nif {BINDINGS!r} not in sys.path:\n    sys.path.insert(0, {BINDINGS!r})\n"

#: the shim: module path -> source.  lil's names where letitloop has them.
SHIM = {
    "letitloop/__init__.py": _PATH + textwrap.dedent("""\
        from lil import (CircuitBreakerError, DurableSerializationError,
                         LivenessSupervisor, ProcessGuard, approx_tokens, async_step,
                         atomic_marker, durable, durable_async, preflight, step, supervise)
        __version__ = "0.7.0+lil"
        """),
    "orchestrator/__init__.py": _PATH,
    "orchestrator/decorators.py": textwrap.dedent("""\
        from lil import (DurableSerializationError, async_step, atomic_marker, durable,
                         durable_async, step)
        """),
    "orchestrator/supervisor/__init__.py": textwrap.dedent("""\
        from lil import CircuitBreakerError, LivenessSupervisor, supervise
        from lil import (EXIT_CLEAN, EXIT_SIGINT, EXIT_SIGKILL, EXIT_SIGSEGV,
                         EXIT_SIGTERM)
        """),
    "orchestrator/supervisor/liveness.py": "from orchestrator.supervisor import *  # noqa\n"
                                           "from lil import CircuitBreakerError, "
                                           "LivenessSupervisor, supervise\n",
    "orchestrator/token_gate.py": textwrap.dedent("""\
        from lil import (CHARS_PER_TOKEN, EXIT_GATE, HARD_CAP_TOTAL, StreamGuard,
                         TokenGateError, approx_tokens, check_usage_authoritative,
                         preflight)
        """),
    "orchestrator/process_guard.py": textwrap.dedent("""\
        import sys
        import lil._procguard
        sys.modules[__name__] = lil._procguard
        """),
    # `python -m orchestrator.cli watch SCRIPT [ARGS] [--flags]`: letitloop's
    # flags in lil watch's words, then the lil command.
    "orchestrator/cli.py": textwrap.dedent("""\
        import os
        import sys
        import lil.__main__

        FLAGS = {"--max-restarts": "--max-restarts", "--backoff": "--backoff",
                 "--max-backoff": "--max-backoff", "--healthy-threshold": "--healthy"}

        def watch_args(argv):
            flags, command, rapid, healthy = [], [], None, "5"
            it = iter(argv)
            for a in it:
                if a in FLAGS:
                    v = next(it)
                    flags += [FLAGS[a], v]
                    healthy = v if a == "--healthy-threshold" else healthy
                elif a == "--max-rapid-failures":
                    rapid = next(it)
                else:
                    command.append(a)
            if rapid is not None:
                flags += ["--crash-loop", f"{rapid}/{healthy}"]
            if command and command[0].endswith(".py"):
                command.insert(0, sys.executable)
            return ["watch"] + flags + ["--"] + command

        def main():
            argv = sys.argv[1:]
            if argv[:1] == ["watch"]:
                argv = watch_args(argv[1:])
            os.execv(lil.__main__.binary(), ["lil"] + argv)

        if __name__ == "__main__":
            main()
        """),
}

CONFTEST = textwrap.dedent("""\
    def pytest_configure(config):
        for m in ("fast", "integration", "proof", "phase2", "benchmark", "live", "slow",
                  "fuzz", "security", "cookbook", "e2e"):
            config.addinivalue_line("markers", f"{m}: letitloop's marker")
    """)


def download(workdir: str) -> str:
    sdist = os.path.join(workdir, f"letitloop-{VERSION}.tar.gz")
    if not os.path.exists(sdist):
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet",
                        "--disable-pip-version-check", "--no-input", "--no-deps",
                        "--no-binary", ":all:", f"letitloop=={VERSION}", "-d", workdir],
                       check=True)
    return sdist


def extract_tests(sdist: str, root: str):
    """letitloop's tests/ folder, into root/tests (nothing else)."""
    prefix = f"letitloop-{VERSION}/tests/"
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers()
                   if m.name.startswith(prefix) and (m.isfile() or m.isdir())]
        for m in members:
            m.name = m.name[len(f"letitloop-{VERSION}/"):]
        tar.extractall(root, members=members, filter="data")


def write_shim(root: str):
    for path, text in SHIM.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
    with open(os.path.join(root, "conftest.py"), "w", encoding="utf-8") as f:
        f.write(CONFTEST)


def read_expected(path: str = EXPECTED) -> dict[str, str]:
    """Test id -> reason, from `ID<TAB>reason` lines (# comments)."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            test_id, sep, reason = line.partition("\t")
            if not sep or not reason.strip():
                raise SystemExit(f"{path}:{n}: expected `TEST-ID<TAB>reason`")
            out[test_id.strip()] = reason.strip()
    return out


class Outcomes:
    """A pytest plugin: the outcome of every test id (and of every module
    that could not be collected, under the module's path)."""

    def __init__(self):
        self.outcomes: dict[str, str] = {}

    def pytest_collectreport(self, report):
        if report.failed:
            self.outcomes[report.nodeid] = "failed"

    def pytest_runtest_logreport(self, report):
        if report.failed:
            self.outcomes[report.nodeid] = "failed"
        elif report.when == "call" or report.skipped:
            self.outcomes.setdefault(report.nodeid, report.outcome)


def compare(outcomes: dict[str, str], expected: dict[str, str]) -> list[str]:
    """The problems: unexpected failures, listed tests that passed or ran
    nowhere."""
    problems = []
    for test_id, outcome in sorted(outcomes.items()):
        if outcome == "failed" and test_id not in expected:
            problems.append(f"UNEXPECTED FAILURE {test_id}")
        elif outcome == "passed" and test_id in expected:
            problems.append(f"UNEXPECTED PASS {test_id} (listed: {expected[test_id]})")
    for test_id in sorted(set(expected) - set(outcomes)):
        problems.append(f"LISTED BUT NOT RUN {test_id}")
    return problems


def main() -> int:
    import pytest

    workdir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "letitloop-upstream")
    root = os.path.join(workdir, "root")
    os.makedirs(workdir, exist_ok=True)
    if os.path.exists(root):
        subprocess.run(["rm", "-rf", root], check=True)
    os.makedirs(root)
    extract_tests(download(workdir), root)
    write_shim(root)
    expected = read_expected()
    plugin = Outcomes()
    os.chdir(root)
    sys.path.insert(0, root)
    pytest.main(["-q", "-p", "no:cacheprovider", "-o", "addopts=", "-W", "ignore",
                 "--continue-on-collection-errors", "-rfE", "tests"], plugins=[plugin])
    problems = compare(plugin.outcomes, expected)
    for p in problems:
        print(p)
    failed = len(problems)
    print(f"{len(plugin.outcomes) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

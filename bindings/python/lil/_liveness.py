"""``LivenessSupervisor``: supervise a command from Python and get its exit
status back.

    sup = lil.LivenessSupervisor(["python3", "worker.py"], max_restarts=5,
                                 max_rapid_failures=3, healthy_threshold_sec=5.0)
    code = sup.run()            # the supervision's exit status
    sup.restart_count, sup.rapid_failure_count

It is lil's supervisor (``lil_supervise``, docs/supervise.md) with the same
policy and defaults as ``lil watch`` and ``@lil.supervise``, run in a process
of its own: ``run()`` forks it (in a process group of its own, so that a
terminal's Ctrl+C reaches this process only, which passes SIGINT and SIGTERM
on), the supervisor forks each attempt, and each attempt execs ``command``
with ``cwd`` and ``env`` (default: this process's), plus
``LIL_SUPERVISED=1``, ``LETITLOOP_SUPERVISED=1`` and ``LIL_ATTEMPT=<n>``.
Every event of the supervisor comes back through a pipe: it is logged
(logger ``lil.supervise``, unless ``silent``), passed to ``on_event`` (here,
in the calling process), and counted.

``run()`` returns the supervision's exit status: the last attempt's (its
exit code, or 128 + the signal that killed it), or 80 when the restart limit
was reached, 82 for ``same_step``; a crash loop (``max_rapid_failures`` quick
deaths in a row, each less than ``healthy_threshold_sec`` after its start)
raises :class:`CircuitBreakerError` instead, as letitloop's did.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import sys
import threading
import traceback

from . import _lil, _supervise
from ._errors import CircuitBreakerError

log = logging.getLogger("lil.supervise")

#: exit statuses, as letitloop named them: a clean end, and deaths by signal
EXIT_CLEAN = 0
EXIT_SIGINT = 128 + signal.SIGINT
EXIT_SIGKILL = 128 + signal.SIGKILL
EXIT_SIGSEGV = 128 + signal.SIGSEGV
EXIT_SIGTERM = 128 + signal.SIGTERM
#: lil's supervisor gave up: the restart limit, a crash loop, the same step
EXIT_RESTARTS = 80
EXIT_CRASH_LOOP = 81
EXIT_SAME_STEP = 82
#: the supervisor could not fork
EXIT_OSERR = 71


def _exec_attempt(command, cwd, env, attempt: int):
    """In an attempt's process: become command (never returns)."""
    env = dict(os.environ if env is None else env)
    env.update(LIL_SUPERVISED="1", LETITLOOP_SUPERVISED="1", LIL_ATTEMPT=str(attempt))
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores them
        signal.signal(sig, signal.SIG_DFL)
    if cwd is not None:
        os.chdir(cwd)
    os.execvpe(command[0], command, env)


def _supervisor_main(w, opts, command, cwd, env):
    """In the forked supervisor: supervise; report every event on w."""
    def report(ev):
        os.write(w, (json.dumps(ev) + "\n").encode("utf-8"))

    status = EXIT_OSERR
    try:
        os.setpgid(0, 0)
        attempt = _lil.supervise(on_event=report, **opts)
        os.close(w)  # an attempt from here on
        status = 127
        _exec_attempt(command, cwd, env, attempt)
    except BaseException:  # noqa: BLE001 -- a forked process must end here
        traceback.print_exc()
    finally:
        os._exit(status)


class LivenessSupervisor:
    """Run ``command`` (a list of arguments) under lil's supervisor; see the
    module's docstring.  None: lil's default (as ``lil watch``)."""

    def __init__(self, command, cwd=None, env=None, max_restarts=None, backoff=None,
                 max_backoff=None, jitter=None, healthy_threshold_sec=None,
                 max_rapid_failures=None, silent=False, *, restart="on-failure",
                 crash_loop=None, same_step=None, dir=None, on_event=None):
        if isinstance(command, (str, bytes)) or not command:
            raise TypeError("command is a non-empty list of arguments")
        self.command = [os.fspath(a) for a in command]
        self.cwd = cwd
        self.env = env
        self.silent = silent
        self.on_event = on_event
        self.healthy_threshold_sec = healthy_threshold_sec
        self._opts = _supervise._options(None, restart, max_restarts, backoff, max_backoff,
                                         jitter, None, crash_loop, same_step, dir,
                                         healthy_threshold_sec, max_rapid_failures)
        self._quick_s = (crash_loop[1] if crash_loop is not None
                         else healthy_threshold_sec or 5.0)
        self.restart_count = 0
        self.rapid_failure_count = 0
        self.current_pid = None
        self.last_event = None
        self.giveup_message = None

    def _find_program(self):
        path = (self.env if self.env is not None else os.environ).get("PATH")
        if shutil.which(self.command[0], path=path) is None and "/" not in self.command[0]:
            raise FileNotFoundError(2, "no such program", self.command[0])

    def _count(self, ev):
        self.last_event = ev
        if ev["kind"] == "giveup":
            self.giveup_message = ev["message"]
        self.restart_count = max(self.restart_count, ev.get("restarts", 0))
        if ev["kind"] == "start":
            self.current_pid = ev["pid"]
        elif ev["kind"] == "death":
            quick = ev["uptime_s"] < self._quick_s
            self.rapid_failure_count = self.rapid_failure_count + 1 if quick else 0
            self.current_pid = None
        elif ev["kind"] == "done":
            self.current_pid = None

    def _report(self, ev):
        self._count(ev)
        if not self.silent:
            level = _supervise._LEVEL.get(ev["kind"], logging.INFO)
            log.log(level, "%s", ev["message"])
        if self.on_event is not None:
            self.on_event(ev)

    def _read_events(self, r, pid):
        with os.fdopen(r, "rb") as events:
            while True:
                try:
                    line = events.readline()
                except KeyboardInterrupt:
                    os.kill(pid, signal.SIGINT)  # the supervisor passes it on
                    continue
                if not line:
                    return
                self._report(json.loads(line))

    def _wait(self, pid) -> int:
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                break
            except KeyboardInterrupt:
                os.kill(pid, signal.SIGINT)
        code = os.waitstatus_to_exitcode(status)
        return code if code >= 0 else 128 - code

    def run(self) -> int:
        """Supervise until the supervisor ends; return its exit status
        (CircuitBreakerError on a crash loop)."""
        self._find_program()
        self.restart_count = self.rapid_failure_count = 0
        self.giveup_message = None
        for f in (sys.stdout, sys.stderr):
            f.flush()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            _supervisor_main(w, self._opts, self.command, self.cwd, self.env)
        os.close(w)
        forward = _forward_sigterm(pid)
        try:
            self._read_events(r, pid)
            code = self._wait(pid)
        finally:
            forward.restore()
        if code == EXIT_CRASH_LOOP and self.giveup_message is not None:
            raise CircuitBreakerError(
                f"Circuit breaker tripped after {self.rapid_failure_count} rapid "
                f"consecutive crashes: {self.giveup_message} (the supervisor exits "
                f"{code})")
        return code


class _forward_sigterm:
    """While run() waits: SIGTERM to this process goes to the supervisor
    (in the main thread only, where Python handles signals)."""

    def __init__(self, pid):
        self._old = None
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGTERM,
                                      lambda s, f: os.kill(pid, signal.SIGTERM))

    def restore(self):
        if self._old is not None:
            signal.signal(signal.SIGTERM, self._old)

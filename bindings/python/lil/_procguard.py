"""``ProcessGuard``: the child processes a program starts die with it.

    with lil.ProcessGuard() as guard:
        proc = guard.spawn(["npm", "run", "build"])
        ...
    # leaving the block (an exception too) ends every child it spawned,
    # and whatever those children started in their process groups

``spawn`` starts a process (``subprocess.Popen``) as the leader of a process
group of its own and registers it; ``sweep(timeout)`` ends every registered
process that still runs, with its group: SIGTERM first, SIGKILL for what is
still there after ``grace`` seconds (at most half of timeout), then waits
for them until the timeout.  ``kill_process_tree(pid)`` does the same for
one process.  A process that moved its own children to another group or
session takes them out of reach.

``install_signal_handlers(guard)`` makes SIGINT, SIGTERM and SIGHUP sweep the
guard (default: ``DEFAULT_GUARD``) before the program ends as it would have
(KeyboardInterrupt for SIGINT; a handler installed before is called; else the
signal's default action), and sweeps at exit; ``uninstall_signal_handlers()``
puts the previous handlers back.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import threading
import time

GRACE_S = 2.0
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def pid_alive(pid) -> bool:
    """True while process pid exists (a zombie child of ours is reaped and is
    not alive); False for None and pids <= 0."""
    if pid is None or pid <= 0:
        return False
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, another user's
    return True


def _signal_tree(pid: int, sig: int):
    """Send sig to pid's process group (to pid alone when it is in ours)."""
    try:
        pgid = os.getpgid(pid)
        if pgid != os.getpgrp():
            os.killpg(pgid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _wait_gone(pids, until: float):
    while any(pid_alive(p) for p in pids) and time.monotonic() < until:
        time.sleep(0.02)


def _end_trees(pids, grace: float):
    """SIGTERM each tree, SIGKILL what remains after grace seconds."""
    for pid in pids:
        _signal_tree(pid, signal.SIGTERM)
    _wait_gone(pids, time.monotonic() + grace)
    for pid in pids:
        # the group may outlive its leader: SIGKILL it in any case
        _signal_tree_after_death(pid)


def _signal_tree_after_death(pid: int):
    pgid = _groups.pop(pid, None)
    try:
        if pgid is not None and pgid != os.getpgrp():
            os.killpg(pgid, signal.SIGKILL)
        elif pid_alive(pid):
            _signal_tree(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


_groups: dict[int, int] = {}  # pid -> its process group, noted before signalling


def _note_group(pid: int):
    try:
        _groups[pid] = os.getpgid(pid)
    except ProcessLookupError:
        pass


def kill_process_tree(pid: int, grace: float = GRACE_S) -> None:
    """End process pid and its process group (SIGTERM, then SIGKILL after
    grace seconds).  Never raises."""
    if pid is None or pid <= 0:
        return
    _note_group(pid)
    _end_trees([pid], grace)


class ProcessGuard:
    """A registry of child processes that ``sweep`` ends; see the module's
    docstring.  Thread-safe."""

    def __init__(self):
        self._lock = threading.Lock()
        self._procs: list[subprocess.Popen] = []

    def spawn(self, args, **popen_kwargs) -> subprocess.Popen:
        """Popen(args, **popen_kwargs) leading a process group of its own;
        registered."""
        popen_kwargs.setdefault("start_new_session", True)
        proc = subprocess.Popen(args, **popen_kwargs)
        self.register(proc)
        return proc

    def register(self, proc: subprocess.Popen, job=None) -> None:
        """Register a process (``job`` is accepted and ignored: POSIX has
        process groups).  Processes that already ended are dropped."""
        with self._lock:
            self._procs = [p for p in self._procs if p.poll() is None]
            self._procs.append(proc)

    def sweep(self, timeout: float = 5.0) -> None:
        """End every registered process that still runs, with its group, and
        wait for them (until timeout seconds have passed)."""
        with self._lock:
            procs, self._procs = self._procs, []
        deadline = time.monotonic() + timeout
        live = [p.pid for p in procs if p.poll() is None]
        for pid in live:
            _note_group(pid)
        _end_trees(live, min(GRACE_S, timeout / 2))
        for p in procs:
            try:
                p.wait(timeout=max(0.05, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass

    def __enter__(self):
        return self

    def __exit__(self, et, ev, tb):
        self.sweep()
        return False


DEFAULT_GUARD = ProcessGuard()
_installed: dict[int, object] = {}  # signal -> the handler before ours
_atexit_guard: list[ProcessGuard] = []


def _make_signal_handler(guard: ProcessGuard, signum: int):
    """The handler of signum: sweep, then end as without it."""
    def handler(sig, frame):
        guard.sweep()
        previous = _installed.get(sig)
        if callable(previous):
            return previous(sig, frame)
        if sig == signal.SIGINT and previous in (None, signal.default_int_handler):
            raise KeyboardInterrupt
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        return None
    return handler


def _sweep_at_exit():
    for guard in _atexit_guard:
        guard.sweep(timeout=2.0)


def install_signal_handlers(guard: ProcessGuard | None = None) -> bool:
    """Sweep guard (DEFAULT_GUARD) on SIGINT, SIGTERM, SIGHUP and at exit.
    True when installed now, False when already installed."""
    if _installed:
        return False
    guard = guard or DEFAULT_GUARD
    for sig in _SIGNALS:
        _installed[sig] = signal.signal(sig, _make_signal_handler(guard, sig))
    if not _atexit_guard:
        atexit.register(_sweep_at_exit)
    _atexit_guard[:] = [guard]
    return True


def uninstall_signal_handlers() -> None:
    """Put back the handlers install_signal_handlers replaced."""
    for sig, previous in list(_installed.items()):
        try:
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
        except (TypeError, ValueError):
            pass
    _installed.clear()
    _atexit_guard.clear()

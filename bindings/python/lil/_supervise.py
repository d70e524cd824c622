"""``@supervise``: when the process running a function dies, start it again.

    @lil.supervise(max_restarts=5, backoff=1.0, crash_loop=(3, 5.0))
    @lil.durable(goal_id="nightly")
    def main():
        ...

    main()      # this process becomes the supervisor; main runs in a child

It is ``lil_supervise`` (docs/supervise.md) in fork mode: the calling process
becomes the supervisor and forks a child, in which the call returns what the
function returns (the rest of the program then runs in the child too).
Whenever the child dies -- a crash, SIGKILL, the OOM killer -- the supervisor
waits the backoff and forks another, which calls the function again: a
``@durable`` function resumes from its journal.  The supervisor itself never
returns to Python: when supervision ends, it ends the process with the last
child's status (its exit code, or 128 + the signal that killed it), or with
80 (restart limit), 81 (crash loop), 82 (same step) when it gives up --
where letitloop raised ``CircuitBreakerError``, lil's supervisor exits 81
and logs the error (logger ``lil.supervise``, level ERROR).

Options (None: lil's default, the same as ``lil watch``'s):
  restart       "on-failure" (a signal or a non-zero exit), "on-crash" (a
                signal only) or "always"
  max_restarts  restarts in all before giving up (10); "unlimited"
  backoff       first delay, seconds, doubling per restart (1; 0: none)
  max_backoff   ceiling of the delay (60)
  jitter        0..1, a random part of each delay taken off (0.2; 0: none)
  healthy       seconds of life that start the doubling over (30)
  crash_loop    (K, T): give up after K deaths in a row each less than T
                seconds after its start (off)
  same_step     give up after K deaths in a row at the same step (off)
  dir           the store read after each death, to name its run and step:
                default the @durable function's store, else $LIL_DIR/.lil
  on_event      called in the supervisor with a dict per event ("start",
                "death", "done", "backoff", "giveup", "exit"; see lil.h)
letitloop's names are accepted: ``healthy_threshold_sec`` (healthy) and
``max_rapid_failures`` (crash_loop=(K, healthy_threshold_sec or 5.0)).

Every event is also logged (logger ``lil.supervise``: start, backoff and a
clean exit ("done": exit 0, not a death) at INFO, a death at WARNING, giving
up at ERROR); the supervisor flushes
Python's stdout and stderr after each, since it ends with ``_exit``.  Call it
early, before threads are started and outside any workflow: a forked child
has only the calling thread and must not share an open run's lock.  The
child has ``LIL_SUPERVISED=1`` (and letitloop's ``LETITLOOP_SUPERVISED=1``)
and ``LIL_ATTEMPT=<n>`` in ``os.environ``.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import sys
import threading
import warnings

from . import _core, _lil
from ._errors import CircuitBreakerError, UsageError

log = logging.getLogger("lil.supervise")

_RESTART = {"on-failure": _lil.RESTART_ON_FAILURE, "on-crash": _lil.RESTART_ON_CRASH,
            "always": _lil.RESTART_ALWAYS}
_LEVEL = {"start": logging.INFO, "backoff": logging.INFO, "death": logging.WARNING,
          "done": logging.INFO, "giveup": logging.ERROR, "exit": logging.INFO}
_NONE = -1.0  # LIL_SUPERVISE_NONE: no backoff, no jitter


def _seconds(name, value, zero_is_none):
    if value is None:
        return 0.0
    value = float(value)
    if value < 0 or math.isnan(value):
        raise UsageError(f"supervise: {name} must be a number of seconds >= 0", "LIL_E_INVAL")
    return _NONE if value == 0 and zero_is_none else value


def _count(name, value):
    if value is None:
        return 0
    if value == "unlimited" or value == math.inf:
        return _lil.SUPERVISE_UNLIMITED
    if not isinstance(value, int) or value < 1:
        raise UsageError(f"supervise: {name} must be an int >= 1 or 'unlimited'",
                         "LIL_E_INVAL")
    return value


def _options(target, restart, max_restarts, backoff, max_backoff, jitter, healthy,
             crash_loop, same_step, dir, healthy_threshold_sec, max_rapid_failures):
    if restart not in _RESTART:
        raise UsageError(f"supervise: restart must be one of {sorted(_RESTART)}",
                         "LIL_E_INVAL")
    if healthy is None:
        healthy = healthy_threshold_sec
    if crash_loop is None and max_rapid_failures is not None:
        crash_loop = (max_rapid_failures, healthy_threshold_sec or 5.0)
    k, t = crash_loop if crash_loop is not None else (None, None)
    if dir is None:
        opts = getattr(target, "lil_options", None)
        dir = opts.dir if opts is not None else None
    return {"restart": _RESTART[restart], "max_restarts": _count("max_restarts", max_restarts),
            "backoff_s": _seconds("backoff", backoff, True),
            "max_backoff_s": _seconds("max_backoff", max_backoff, False),
            "jitter": _seconds("jitter", jitter, True),
            "crash_loop_k": _count("crash_loop K", k),
            "crash_loop_t_s": _seconds("crash_loop T", t, False),
            "same_step": _count("same_step", same_step) if same_step else 0,
            "dir": _core.store_dir(dir), "healthy_s": _seconds("healthy", healthy, False)}


def _reporter(user_on_event):
    def report(ev: dict):
        try:
            if ev["kind"] == "giveup":
                err = CircuitBreakerError(
                    f"{ev['message']} (the supervisor exits {ev['exit_code']})")
                log.error("%s: %s", type(err).__name__, err)
            else:
                log.log(_LEVEL.get(ev["kind"], logging.INFO), "%s", ev["message"])
            if user_on_event is not None:
                user_on_event(ev)
        finally:
            for f in (sys.stdout, sys.stderr):
                try:
                    f.flush()
                except (AttributeError, OSError, ValueError):
                    pass
    return report


def _run(fn, opts, on_event, args, kwargs):
    if _core.current() is not None:
        raise UsageError("supervise inside a workflow: a forked child would share the "
                         "run's lock; supervise the process before it opens workflows",
                         "LIL_E_INVAL")
    if threading.active_count() > 1:
        warnings.warn("lil.supervise with threads running: a child has only the calling "
                      "thread", RuntimeWarning, stacklevel=3)
    for f in (sys.stdout, sys.stderr):
        f.flush()
    attempt = _lil.supervise(on_event=_reporter(on_event), **opts)
    # a child from here on
    os.environ["LIL_SUPERVISED"] = "1"
    os.environ["LETITLOOP_SUPERVISED"] = "1"
    os.environ["LIL_ATTEMPT"] = str(attempt)
    return fn(*args, **kwargs)


def supervise(target=None, /, *args, restart="on-failure", max_restarts=None, backoff=None,
              max_backoff=None, jitter=None, healthy=None, crash_loop=None, same_step=None,
              dir=None, on_event=None, healthy_threshold_sec=None, max_rapid_failures=None,
              **kwargs):
    """``@supervise(...)`` decorates; ``supervise(fn, *args, **kwargs)`` runs fn
    supervised now.  See the module's docstring."""
    def options(fn):
        return _options(fn, restart, max_restarts, backoff, max_backoff, jitter, healthy,
                        crash_loop, same_step, dir, healthy_threshold_sec,
                        max_rapid_failures)

    if target is not None:
        return _run(target, options(target), on_event, args, kwargs)

    def decorate(fn):
        opts = options(fn)

        @functools.wraps(fn)
        def supervised(*a, **kw):
            return _run(fn, opts, on_event, a, kw)
        return supervised
    return decorate

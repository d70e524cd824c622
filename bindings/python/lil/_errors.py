"""The exceptions of the lil package.

Every failure of the C library arrives as a subclass of :class:`Error`
chosen by its status code (``LIL_E_LOCKED`` -> :class:`RunLockedError`, ...);
``err.status`` holds the code's name and ``str(err)`` lil's message, which
names the run, the step and the file where there is one.  The classes that
letitloop programs catch keep their names: ``DurableSerializationError``
(also a ``TypeError``), ``CircuitBreakerError`` (also a ``RuntimeError``).
"""

from __future__ import annotations

import errno
import os

from . import _lil


class Error(Exception):
    """A failure of lil.  ``status``: the name of lil's status code, or None."""

    def __init__(self, message: str = "", status: str | None = None):
        super().__init__(message)
        self.status = status


class UsageError(Error, ValueError):
    """A call lil refuses: a bad name or id, a closed handle (LIL_E_INVAL)."""


class RunLockedError(Error):
    """Another process holds the run (LIL_E_LOCKED).  The lock is the
    kernel's: it dies with the process that holds it."""


class UncertainStepError(Error):
    """A side-effect step started and its outcome is unknown
    (LIL_E_UNCERTAIN): decide with :func:`lil.resolve` (or ``lil resolve``)."""


class NonDeterministicReplayError(Error):
    """The journal holds other work at this step (LIL_E_NONDET): an effect
    where the code asks for a plain step, or the reverse, or an effect whose
    arguments differ from the journaled ones."""


class RunEndedError(Error):
    """The run has ended (LIL_E_DONE): no new step can run in it."""


class CorruptJournalError(Error):
    """The journal is damaged before its tail (LIL_E_CORRUPT); ``lil check``
    shows where, ``lil check --repair`` truncates there."""


class JournalIOError(Error, OSError):
    """A system call failed (LIL_E_IO), or a write failed earlier and the run
    must be reopened (LIL_E_POISONED)."""


class JournalKeyError(Error):
    """The journal key is missing or wrong (LIL_E_KEY)."""


class NotFoundError(Error, LookupError):
    """No such run, record or marker (LIL_E_NOTFOUND)."""


class SpecError(Error):
    """A loop spec has errors (LIL_E_SPEC); ``diagnostics`` lists them."""

    def __init__(self, message: str = "", status: str | None = None, diagnostics=None):
        super().__init__(message, status)
        self.diagnostics = list(diagnostics or [])


class SpecNotFoundError(SpecError, FileNotFoundError):
    """The loop spec file does not exist (``lil.Loop('missing.yaml')``); also
    a :class:`FileNotFoundError`, with ``errno`` ENOENT and ``filename``."""

    def __init__(self, path: str):
        super().__init__(f"{path}: no such loop spec file (No such file or directory)",
                         "LIL_E_NOTFOUND")
        self.errno = errno.ENOENT
        self.strerror = os.strerror(errno.ENOENT)
        self.filename = path


class DurableSerializationError(Error, TypeError):
    """A value the codec cannot encode (the message names the step and the
    type), or journaled bytes it cannot decode.  Raised before anything is
    journaled for the value."""


class StepFailed(Error):
    """A step failed in an earlier run with an exception this process cannot
    rebuild (its class is not importable without running code): the original
    class's name is in ``type_name``, its message in ``message``."""

    def __init__(self, message: str = "", status: str | None = None, type_name: str = ""):
        super().__init__(message, status)
        self.type_name = type_name
        self.message = message

    def __str__(self):
        return f"{self.type_name}: {self.message}" if self.type_name else self.message


class WorkflowFailedError(Error):
    """The workflow's run has ended failed (``lil_run_fail``: superseded by a
    fresh run, or failed by hand); start a fresh one to run it again."""


class CircuitBreakerError(Error, RuntimeError):
    """The supervisor gave up: its child crashed again and again in a short
    time (crash loop), died at the same step again and again, or ran out of
    restarts.  The supervisor never returns to Python, so this is logged
    (logger "lil.supervise") as it exits with 81, 82 or 80: see
    ``lil.supervise``."""


class TokenGateError(Error, RuntimeError):
    """A call would exceed the token cap (:func:`lil.preflight`)."""


_BY_STATUS = {
    _lil.E_INVAL: UsageError,
    _lil.E_NOMEM: MemoryError,
    _lil.E_IO: JournalIOError,
    _lil.E_POISONED: JournalIOError,
    _lil.E_CORRUPT: CorruptJournalError,
    _lil.E_VERSION: CorruptJournalError,
    _lil.E_LOCKED: RunLockedError,
    _lil.E_UNCERTAIN: UncertainStepError,
    _lil.E_NONDET: NonDeterministicReplayError,
    _lil.E_DONE: RunEndedError,
    _lil.E_KEY: JournalKeyError,
    _lil.E_NOTFOUND: NotFoundError,
    _lil.E_SPEC: SpecError,
}


def _memory_error(message: str = "", status: str | None = None):
    return MemoryError(message)


_lil.set_errors({k: (v if v is not MemoryError else _memory_error) for k, v in _BY_STATUS.items()}, Error)

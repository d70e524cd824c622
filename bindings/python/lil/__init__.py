"""lil -- durable execution for Python, on lil's C engine.

A ``@durable`` function is a workflow; each ``step`` in it runs once, ever:
killed at any moment and called again, the workflow replays its completed
steps from the journal and runs the rest.

    import lil

    @lil.durable(goal_id=lambda order: f"order-{order}")
    def ship(order):
        label = lil.step("label", make_label, order)
        lil.effect("charge", charge_card, order)      # a side effect: intent first
        with lil.atomic_marker("mail") as m:
            if m:
                send_mail(order, idempotency_key=m.idempotency_key)
        return label

``@lil.supervise(...)`` above it restarts the process when it dies.

docs/python.md is the guide; every name below has its docstring.  The
package needs its extension module lil._lil: built by CMake beside these
files, installed by pip, or found in the directory $LIL_PYTHON_EXT_DIR.
"""

import os as _os

_ext_dir = _os.environ.get("LIL_PYTHON_EXT_DIR")
if _ext_dir:
    __path__.insert(0, _ext_dir)  # noqa: F821 -- the package's own __path__

from . import _lil  # noqa: E402
from ._codec import register  # noqa: E402
from ._core import (Workflow, StepInfo, WorkflowStatus, async_effect, async_step,  # noqa: E402
                    current, current_step, durable, durable_async, effect, resolve,
                    status, step)
from ._errors import (CircuitBreakerError, CorruptJournalError,  # noqa: E402
                      DurableSerializationError, Error, JournalIOError, JournalKeyError,
                      NonDeterministicReplayError, NotFoundError, RunEndedError,
                      RunLockedError, SpecError, SpecNotFoundError, StepFailed,
                      TokenGateError,
                      UncertainStepError, UsageError, WorkflowFailedError)
from ._loop import Loop, RunResult  # noqa: E402
from ._marker import Marker, atomic_marker, reset_marker  # noqa: E402
from ._supervise import supervise  # noqa: E402
from ._tokens import CHARS_PER_TOKEN, HARD_CAP_TOTAL, approx_tokens, preflight  # noqa: E402
from ._tokens import EXIT_GATE, StreamGuard, check_usage_authoritative  # noqa: E402
from ._liveness import (EXIT_CLEAN, EXIT_CRASH_LOOP, EXIT_RESTARTS,  # noqa: E402
                        EXIT_SAME_STEP, EXIT_SIGINT, EXIT_SIGKILL, EXIT_SIGSEGV,
                        EXIT_SIGTERM, LivenessSupervisor)
from ._procguard import (DEFAULT_GUARD, ProcessGuard, install_signal_handlers,  # noqa: E402
                         kill_process_tree, pid_alive, uninstall_signal_handlers)
from ._tool import durable_tool  # noqa: E402

__version__ = _lil.version()

#: letitloop's name for the same error
NondeterminismError = NonDeterministicReplayError

__all__ = [
    "durable", "durable_async", "step", "async_step", "effect", "async_effect",
    "atomic_marker", "reset_marker", "Marker", "supervise", "current", "current_step", "Workflow",
    "StepInfo", "status", "resolve", "WorkflowStatus", "register", "Loop", "RunResult",
    "preflight", "approx_tokens", "HARD_CAP_TOTAL", "CHARS_PER_TOKEN", "durable_tool",
    "Error", "UsageError", "DurableSerializationError", "UncertainStepError",
    "NonDeterministicReplayError", "NondeterminismError", "CircuitBreakerError",
    "RunLockedError", "RunEndedError", "CorruptJournalError", "JournalIOError",
    "JournalKeyError", "NotFoundError", "SpecError", "SpecNotFoundError", "StepFailed", "TokenGateError",
    "WorkflowFailedError",
    "StreamGuard", "check_usage_authoritative", "EXIT_GATE", "LivenessSupervisor",
    "EXIT_CLEAN", "EXIT_SIGINT", "EXIT_SIGKILL", "EXIT_SIGSEGV", "EXIT_SIGTERM",
    "EXIT_RESTARTS", "EXIT_CRASH_LOOP", "EXIT_SAME_STEP", "ProcessGuard", "DEFAULT_GUARD",
    "kill_process_tree", "pid_alive", "install_signal_handlers", "uninstall_signal_handlers",
]

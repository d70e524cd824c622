"""Loops from Python: ``lil.Loop(path)`` runs a LoopSpec durably, as ``lil run``.

    loop = lil.Loop("fix-tests.yaml", dir=".lil")
    res = loop.run()            # RunResult(status="completed", ...)
    if res.status == "paused":
        res = loop.approve(reason="looked at the diff")

Each call opens the loop run (taking its lock), does one thing -- run, step,
resume, approve, recover, current -- and closes it, so the lock is held only
during the call; ``stop`` needs no lock and may come from any process.  The
spec is loaded and validated once, in the constructor (``SpecError`` with
its diagnostics when it has errors).  docs/loops.md says what each status
means.  A Ctrl-C during a call asks the loop to stop after the current
effect, and KeyboardInterrupt is raised once it has: the run is stopped,
``resume()`` goes on.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from . import _core, _lil
from ._errors import JournalIOError, SpecError, SpecNotFoundError, UsageError

_STATUS = {1: "completed", 2: "failed", 3: "uncertain", 4: "paused", 5: "waiting",
           6: "stopped"}
_EXIT = {"completed": 0, "failed": 1, "uncertain": 2, "paused": 3, "waiting": 4,
         "stopped": 5}
_RECOVER = {"retry": _lil.RESOLVE_RETRY, "assume_done": _lil.RESOLVE_ASSUME_DONE,
            "abort": _lil.RESOLVE_ABORT}


@dataclass(frozen=True)
class RunResult:
    """The outcome of a loop call (lil_loop_result): status is "completed",
    "failed", "uncertain", "paused", "waiting" or "stopped"; exit_code the
    ``lil`` command's for it; state the committed state; the rest where it
    applies (None otherwise).  ``data`` is the whole result document."""

    status: str
    exit_code: int
    iteration: int
    state: object
    reason: str | None = None
    wake_at_ms: int | None = None
    next_iteration: int | None = None
    uncertain: dict | None = None
    data: dict = field(default_factory=dict, repr=False)

    @property
    def completed(self) -> bool:
        return self.status == "completed"


def _result(status: int, text: str) -> RunResult:
    doc = json.loads(text)
    name = doc.get("status") or _STATUS.get(status, "unknown")
    nxt = doc.get("next")
    return RunResult(status=name, exit_code=_EXIT.get(name, 1),
                     iteration=doc.get("iteration", 0), state=doc.get("state"),
                     reason=doc.get("reason"), wake_at_ms=doc.get("wakeAt"),
                     next_iteration=nxt.get("iteration") if isinstance(nxt, dict) else None,
                     uncertain=doc.get("uncertain"), data=doc)


class Loop:
    """A loop spec and its run in a store: ``Loop(path, *, run_id=None,
    dir=None, sync=None, inputs=None, env_allow=None, cwd=None, actor=None,
    max_block_ms=0, effect_timeout_ms=0, record=None, replay=None)``.

    inputs: a dict (journaled when the run starts), or a list of
    "NAME=VALUE" strings converted to the declared types.  record / replay:
    a cassette file (docs/loops.md, "Cassettes")."""

    def __init__(self, path, *, run_id=None, dir=None, sync=None, inputs=None,
                 env_allow=None, cwd=None, actor=None, max_block_ms=0,
                 effect_timeout_ms=0, record=None, replay=None):
        self.path = os.fspath(path)
        try:
            self.spec = _lil.Spec(self.path)
        except JournalIOError:
            if not os.path.lexists(self.path):
                raise SpecNotFoundError(self.path) from None
            raise
        if not self.spec.ok:
            diags = self.spec.diagnostics()
            errors = [d for d in diags if d["severity"] == "error"]
            first = errors[0] if errors else {}
            raise SpecError(f"{self.path}:{first.get('line', 0)}:{first.get('column', 0)}: "
                            f"{first.get('message', 'the spec has errors')} "
                            f"({len(errors)} error(s))", "LIL_E_SPEC", diags)
        self.dir = _core.store_dir(dir)
        self._store = _core.get_store(self.dir)
        self.run_id = run_id or self.spec.id
        self._base = {"run_id": run_id, "sync": _core._sync_mode(sync),
                      "env_allow": env_allow, "cwd": os.fspath(cwd) if cwd else None,
                      "actor": actor, "max_block_ms": int(max_block_ms),
                      "effect_timeout_ms": int(effect_timeout_ms),
                      "record_path": os.fspath(record) if record else None,
                      "replay_path": os.fspath(replay) if replay else None}
        if isinstance(inputs, dict):
            self._base["inputs"] = json.dumps(inputs)
        elif inputs is not None:
            self._base["input_pairs"] = [str(p) for p in inputs]

    def __repr__(self):
        return f"<lil.Loop {self.path!r} run={self.run_id!r} store={self.dir!r}>"

    @property
    def diagnostics(self) -> list:
        """Warnings and notes of the spec (it has no errors)."""
        return self.spec.diagnostics()

    def _call(self, op: str, flags: int = 0, **kw) -> RunResult:
        args = dict(self._base)
        args.update({k: v for k, v in kw.items() if v is not None})
        status, text = _lil.loop_call(self._store, self.spec, op, flags=flags, **args)
        return _result(status, text)

    @staticmethod
    def _flags(approve_caps: bool, yes: bool, wait: bool) -> int:
        return ((_lil.LOOP_APPROVE_CAPS if approve_caps else 0) |
                (_lil.LOOP_YES if yes else 0) | (_lil.LOOP_WAIT if wait else 0))

    def run(self, *, approve_caps=False, yes=False, wait=False, reason=None) -> RunResult:
        """Run until the loop completes, fails, parks, pauses, stops or is
        uncertain (``lil run``)."""
        return self._call("run", self._flags(approve_caps, yes, wait), reason=reason)

    def step(self, *, approve_caps=False, yes=False, reason=None) -> RunResult:
        """Run one iteration (``lil step``)."""
        return self._call("step", self._flags(approve_caps, yes, False), reason=reason)

    def resume(self, *, reason=None) -> RunResult:
        """Clear an honoured stop request and run on (``lil resume``)."""
        return self._call("resume", reason=reason)

    def approve(self, *, reason: str, actor=None) -> RunResult:
        """Approve what the paused run waits at, then run (``lil approve``)."""
        if not reason:
            raise UsageError("approve needs a reason", "LIL_E_INVAL")
        return self._call("approve", reason=reason, actor=actor)

    def recover(self, how: str, *, result=None, reason: str, actor=None) -> RunResult:
        """Decide the uncertain effect -- "retry", "assume_done" (``result``:
        its JSON value) or "abort" -- then run on (``lil recover``)."""
        if how not in _RECOVER:
            raise UsageError(f"how must be one of {sorted(_RECOVER)}, not {how!r}",
                             "LIL_E_INVAL")
        rj = json.dumps(result) if how == "assume_done" else None
        return self._call("recover", how=_RECOVER[how], result_json=rj, reason=reason,
                          actor=actor)

    def retry_failed(self, *, reason=None, actor=None,
                     accept_spec_change=False) -> RunResult:
        """Re-open a failed run from the iteration it failed in and run on
        (``lil resume --retry-failed``): the effects that failed run again,
        what completed is kept.  A run that has not failed, or that a cap
        still stops, raises (nothing written)."""
        flags = _lil.LOOP_RETRY_FAILED | (
            _lil.LOOP_ACCEPT_SPEC_CHANGE if accept_spec_change else 0)
        return self._call("retry_failed", flags, reason=reason, actor=actor)

    def current(self) -> RunResult:
        """The run's status as journaled; runs nothing."""
        return self._call("current")

    status = current

    def stop(self, *, reason: str, actor=None):
        """Ask the run to stop at its next iteration boundary, from any process
        (``lil stop``)."""
        if not reason:
            raise UsageError("stop needs a reason", "LIL_E_INVAL")
        self._store.request_stop(self.run_id, actor or os.environ.get("USER"), reason)

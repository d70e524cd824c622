"""Workflows and steps: ``@durable``, ``step``, ``effect`` and their async forms.

A workflow is one lil run.  ``@durable(goal_id=...)`` maps the goal to a run
id in a store directory, opens the run (taking its lock, which the kernel
releases when the process dies), and calls the function with the workflow
as the *current* one: a ``contextvars.ContextVar``, so that nested workflows
restore their parent when they return, asyncio tasks see the workflow they
were created in, and threads see it when bound (``Workflow.bind``, or
``asyncio.to_thread``, which copies the context).

Steps are lil steps begun in two calls (``lil_step_begin``): the identity
(name, then ``name#2``, ...) is counted when the step is called, a journaled
result is decoded and returned without running anything, and otherwise the
function runs, its value is encoded *before* anything is journaled, and the
encoded value is journaled and decoded back, so a step returns the same
type and value on its first run and on every replay.  A function that
raises an ``Exception`` is journaled failed and raises again on replay
(``_failure.py``); a ``BaseException`` (KeyboardInterrupt, cancellation)
and lil's own errors journal nothing.

Run ids: a goal id that is a valid lil run id is used as is; another one
(with '/', too long, ...) becomes a readable prefix plus 12 hex digits of
its SHA-256.  A fresh run of a goal (``fresh=True``) is the run id plus
``~2``, ``~3``, ...: the newest one is the goal's current run.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import hashlib
import inspect
import os
import re
import threading
import types
import warnings

from . import _codec, _lil
from ._errors import (DurableSerializationError, Error, UncertainStepError, UsageError,
                      WorkflowFailedError)
from ._failure import encode_failure, replayed_failure

_Call = _lil.Call
_decode = _codec.decode
_encode = _codec.encode
_CoroutineType = types.CoroutineType

_SYNC_MODES = {None: _lil.SYNC_DEFAULT}
_SYNC_MODES.update((_lil.sync_name(m), m) for m in (
    _lil.SYNC_DEFAULT, _lil.SYNC_FULL, _lil.SYNC_NORMAL, _lil.SYNC_OFF))


def _sync_mode(sync) -> int:
    if isinstance(sync, int) and sync in _SYNC_MODES.values():
        return sync
    try:
        return _SYNC_MODES[sync]
    except (KeyError, TypeError):
        raise UsageError(f"sync must be 'full', 'normal', 'off' or None, not {sync!r}",
                         "LIL_E_INVAL") from None


# ---- stores -----------------------------------------------------------------

_stores: dict[str, _lil.Store] = {}
_stores_lock = threading.Lock()


def store_dir(dir=None) -> str:
    """The store, by the library's rule (lil_store_location): dir, else
    $LIL_DIR, else ./.lil (read now).  A directory is made absolute
    (relative to the current directory); a postgresql:// URI is kept as
    it is."""
    where, is_pg = _lil.store_location(None if dir is None else os.fspath(dir))
    return where if is_pg else os.path.abspath(where)


def get_store(dir=None) -> _lil.Store:
    """The process's Store for a directory (opened once, kept)."""
    path = store_dir(dir)
    st = _stores.get(path)
    if st is not None:
        return st
    with _stores_lock:
        st = _stores.get(path)
        if st is None:
            st = _lil.Store(path)
            _stores[path] = st
            # st.path hides a URI's password: asking by it finds this one
            _stores.setdefault(st.path, st)
    return st


# ---- run ids ----------------------------------------------------------------

_EPOCH = re.compile(r"~[0-9]+$")


def run_id_of(goal_id) -> str:
    """The run id of a goal id (see the module's docstring)."""
    g = goal_id if isinstance(goal_id, str) else str(goal_id)
    raw = g.encode("utf-8", "surrogatepass")
    if _lil.run_id_check(g) == 0 and len(raw) <= 180 and not _EPOCH.search(g):
        return g
    digest = hashlib.sha256(raw).hexdigest()[:12]
    clean = "".join("_" if (c == "/" or c < " " or c == "\x7f") else c for c in g)
    clean = clean.encode("utf-8", "replace")[:150].decode("utf-8", "ignore")
    return f"{clean or 'goal'}-{digest}"


def _epoch_id(base: str, k: int) -> str:
    return base if k == 1 else f"{base}~{k}"


def current_epoch(st, base: str) -> int:
    k = 1
    while st.exists(_epoch_id(base, k + 1)):
        k += 1
    return k


def _supersede(st, run_id: str, by: str, sync: int):
    run = st.open_run(run_id, sync)
    try:
        if run.status() == _lil.RUN_RUNNING:
            run.fail(f"superseded by run {by}")
    finally:
        run.close()


def _choose_run(st, base: str, fresh: bool, sync: int) -> str:
    k = current_epoch(st, base)
    cur = _epoch_id(base, k)
    if not fresh or (k == 1 and not st.exists(base)):
        return cur
    nxt = _epoch_id(base, k + 1)
    _supersede(st, cur, nxt, sync)
    return nxt


# ---- the current workflow and step --------------------------------------------

_workflow: contextvars.ContextVar = contextvars.ContextVar("lil.workflow", default=None)
_step_call: contextvars.ContextVar = contextvars.ContextVar("lil.step", default=None)


class StepInfo:
    """The step being run (``lil.current_step()``): its identity, attempt
    and idempotency key ("lil-" + 32 hex digits, the same when the step runs
    again after a crash: pass it to remote services)."""

    __slots__ = ("identity", "attempt", "idempotency_key")

    def __init__(self, call):
        self.identity = call.identity
        self.attempt = call.attempt
        self.idempotency_key = call.idempotency_key

    def __repr__(self):
        return (f"StepInfo(identity={self.identity!r}, attempt={self.attempt}, "
                f"idempotency_key={self.idempotency_key!r})")


def current():
    """The workflow this code runs in, or None."""
    return _workflow.get()


def current_step():
    """The step whose function is running here, or None."""
    call = _step_call.get()
    return StepInfo(call) if call is not None and not call.done else None


class Workflow:
    """One run of a ``@durable`` function.  ``lil.current()`` returns it
    inside the function; its methods work from any thread."""

    __slots__ = ("goal_id", "run_id", "store_dir", "_run", "_offload", "_offload_intent",
                 "_locks")

    def __init__(self, goal_id: str, run_id: str, store, run):
        self.goal_id = goal_id
        self.run_id = run_id
        self.store_dir = store.path
        self._run = run
        sync = run.info()["sync"]
        # in async code, what waits for an fdatasync goes to a thread: the
        # commits of sync mode full, the intents of effects (full, normal)
        self._offload = sync == _lil.SYNC_FULL
        self._offload_intent = sync != _lil.SYNC_OFF
        self._locks: dict = {}

    def __repr__(self):
        return f"<lil.Workflow goal={self.goal_id!r} run={self.run_id!r}>"

    # steps, bound to this workflow whatever the current one is
    def step(self, name: str, fn, *args, **kwargs):
        return _step(self, name, fn, args, kwargs)

    def effect(self, name: str, fn, *args, **kwargs):
        return _effect(self, name, fn, args, kwargs)

    async def async_step(self, name: str, fn, *args, **kwargs):
        return await _async_step(self, name, fn, args, kwargs)

    async def async_effect(self, name: str, fn, *args, **kwargs):
        return await _async_effect(self, name, fn, args, kwargs)

    @contextlib.contextmanager
    def bind(self):
        """Make this the current workflow here (a worker thread, a callback)
        until the block ends; the previous one is restored."""
        token = _workflow.set(self)
        try:
            yield self
        finally:
            _workflow.reset(token)

    def wrap(self, fn):
        """fn, bound to this workflow wherever it is called (for executors)."""
        @functools.wraps(fn)
        def bound(*args, **kwargs):
            token = _workflow.set(self)
            try:
                return fn(*args, **kwargs)
            finally:
                _workflow.reset(token)
        return bound

    def info(self) -> dict:
        """lil's facts about the run (records, steps done and failed, ...)."""
        return self._run.info()

    async def _commit(self, fn, arg):
        if self._offload:
            await asyncio.get_running_loop().run_in_executor(None, fn, arg)
        else:
            fn(arg)

    def _effect_lock(self, name: str) -> asyncio.Lock:
        lock = self._locks.get(name)
        if lock is None:
            lock = self._locks[name] = asyncio.Lock()
        return lock


# ---- steps ------------------------------------------------------------------------

def _lenient() -> bool:
    """LIL_LENIENT=1 (or letitloop's LETITLOOP_LENIENT=1)."""
    return "1" in (os.environ.get("LIL_LENIENT"), os.environ.get("LETITLOOP_LENIENT"))


def _outside(what: str, name, fn, args, kwargs):
    context = "@durable_async" if what.startswith("async_") else "@durable"
    if _lenient():
        warnings.warn(f"lil: {what}({name!r}) called outside a {context} context: "
                      "running it non-durably (LIL_LENIENT=1)", RuntimeWarning,
                      stacklevel=3)
        return fn(*args, **kwargs)
    raise RuntimeError(
        f"{what}({name!r}) called outside a {context} context: outside a @durable "
        "workflow (in another thread, bind it: `with workflow.bind():`, workflow = "
        "lil.current(); LIL_LENIENT=1, or letitloop's LETITLOOP_LENIENT=1, runs it "
        "non-durably)")


def _replayed(r, name):
    """The value (or exception) of what begin returned on a replay of the
    step ``name``."""
    if r == "":
        raise DurableSerializationError(_NO_RESULT.format(name=name))
    if type(r) is str:
        return _decode(r)
    if type(r) is tuple:
        raise replayed_failure(*r)
    raise DurableSerializationError("the journal holds a step result that is not UTF-8 "
                                    "text: it was not written by this package")


# Every value this package journals is JSON text, never empty: an empty
# result is an effect decided "done" without one (`lil resolve --assume-done`
# without --result), which has no value to return.
_NO_RESULT = (
    "step {name!r} was resolved as done without a result (`lil resolve "
    "--assume-done` without --result): it has no value to return.  Give a "
    "Python step its value when resolving it (`--result JSON`, `null` for None; "
    "lil.resolve(..., result=...)); this run cannot replay past it: start a new "
    "run (`fn.fresh(...)`)")


def _failed(call, exc):
    """fn raised exc: journal the failure (lil's errors: nothing)."""
    if isinstance(exc, Error):
        call.cancel()
    else:
        call.fail(encode_failure(exc))


def _encode_or_cancel(call, value, identity: str) -> str:
    try:
        return _encode(value, f"step '{identity}'")
    except BaseException:
        call.cancel()
        raise


def _execute(call, fn, args, kwargs):
    identity = call.identity
    token = _step_call.set(call)
    try:
        value = fn(*args, **kwargs)
    except Exception as exc:
        _failed(call, exc)
        raise
    except BaseException:
        call.cancel()
        raise
    finally:
        _step_call.reset(token)
    if type(value) is _CoroutineType:
        value.close()
        call.cancel()
        raise TypeError(f"step '{identity}': the function is a coroutine function; "
                        "use `await lil.async_step(...)`")
    data = _encode_or_cancel(call, value, identity)
    call.end(data)
    return _decode(data)


def _check_name(name):
    if type(name) is not str:
        raise TypeError(f"a step name is a str, not {type(name).__name__}")


def _step(wf, name, fn, args, kwargs):
    r = wf._run.begin(name) if type(name) is str else _check_name(name)
    if type(r) is _Call:
        return _execute(r, fn, args, kwargs)
    return _replayed(r, name)


def _effect(wf, name, fn, args, kwargs):
    _check_name(name)
    r = wf._run.begin_effect(name, _codec.encode_request(args, kwargs))
    if type(r) is _Call:
        return _execute(r, fn, args, kwargs)
    return _replayed(r, name)


def step(name: str, fn, *args, **kwargs):
    """Run ``fn(*args, **kwargs)`` as the durable step ``name`` of the current
    workflow: once, ever.  Its identity is the name plus its occurrence in
    this execution ("fetch", "fetch#2", ...).  Returns the journaled value;
    a journaled failure raises again.  Concurrent steps (threads, asyncio)
    must have distinct names."""
    wf = _workflow.get()
    if wf is None:
        return _outside("step", name, fn, args, kwargs)
    r = wf._run.begin(name) if type(name) is str else _check_name(name)
    if type(r) is _Call:
        return _execute(r, fn, args, kwargs)
    return _replayed(r, name)


def effect(name: str, fn, *args, **kwargs):
    """``step`` for a side effect (a payment, a message): lil journals an
    intent (synced) before fn runs, so a crash while it runs leaves the
    workflow *uncertain* instead of running it again silently; its arguments
    are journaled with the intent, and a replay with other arguments raises
    NonDeterministicReplayError."""
    wf = _workflow.get()
    if wf is None:
        return _outside("effect", name, fn, args, kwargs)
    return _effect(wf, name, fn, args, kwargs)


async def _execute_async(wf, call, fn, args, kwargs):
    identity = call.identity
    token = _step_call.set(call)
    try:
        value = fn(*args, **kwargs)
        if inspect.isawaitable(value):
            value = await value
    except Exception as exc:
        if isinstance(exc, Error):
            call.cancel()
        else:
            await wf._commit(call.fail, encode_failure(exc))
        raise
    except BaseException:
        call.cancel()
        raise
    finally:
        _step_call.reset(token)
    data = _encode_or_cancel(call, value, identity)
    await wf._commit(call.end, data)
    return _decode(data)


async def _async_step(wf, name, fn, args, kwargs):
    r = wf._run.begin(name) if type(name) is str else _check_name(name)
    if type(r) is _Call:
        return await _execute_async(wf, r, fn, args, kwargs)
    return _replayed(r, name)


async def _async_effect(wf, name, fn, args, kwargs):
    _check_name(name)
    request = _codec.encode_request(args, kwargs)
    if wf._offload_intent:
        # the intent is synced: begin on a thread, one per name at a time so
        # identities follow the order of the calls
        async with wf._effect_lock(name):
            r = await asyncio.get_running_loop().run_in_executor(
                None, wf._run.begin_effect, name, request)
    else:
        r = wf._run.begin_effect(name, request)
    if type(r) is _Call:
        return await _execute_async(wf, r, fn, args, kwargs)
    return _replayed(r, name)


async def _awaited(value):
    """value, awaited when it is awaitable."""
    return await value if inspect.isawaitable(value) else value


async def async_step(name: str, fn, *args, **kwargs):
    """``step`` for asyncio: fn may be a coroutine function.  Distinct steps
    run concurrently under ``asyncio.gather``; their identities follow the
    order of the calls.  A replayed step returns without awaiting anything."""
    wf = _workflow.get()
    if wf is None:  # _outside raises unless LIL_LENIENT=1
        return await _awaited(_outside("async_step", name, fn, args, kwargs))
    return await _async_step(wf, name, fn, args, kwargs)


async def async_effect(name: str, fn, *args, **kwargs):
    """``effect`` for asyncio."""
    wf = _workflow.get()
    if wf is None:  # _outside raises unless LIL_LENIENT=1
        return await _awaited(_outside("async_effect", name, fn, args, kwargs))
    return await _async_effect(wf, name, fn, args, kwargs)


# ---- workflows --------------------------------------------------------------------

class _Options:
    __slots__ = ("goal_id", "dir", "sync", "fresh", "fn")

    def __init__(self, fn, goal_id, dir, sync, fresh):
        self.fn = fn
        self.goal_id = goal_id
        self.dir = dir
        self.sync = _sync_mode(sync)
        self.fresh = fresh

    def goal(self, args, kwargs) -> str:
        g = self.goal_id
        if g is None:
            return f"{self.fn.__module__}.{self.fn.__qualname__}"
        if callable(g):
            g = g(*args, **kwargs)
        return g if isinstance(g, str) else str(g)


def _open_workflow(opts: _Options, args, kwargs, fresh: bool) -> Workflow:
    goal = opts.goal(args, kwargs)
    st = get_store(opts.dir)
    run_id = _choose_run(st, run_id_of(goal), fresh or opts.fresh, opts.sync)
    run = st.open_run(run_id, opts.sync)
    try:
        return Workflow(goal, run_id, st, run)
    except BaseException:
        run.close()
        raise


def _ended(wf: Workflow):
    """(True, result) for a completed run; raise for one that cannot go on;
    (False, None) for a running one."""
    run = wf._run
    state = run.status()
    if state == _lil.RUN_RUNNING:
        return False, None
    if state == _lil.RUN_COMPLETED:
        return True, _decode(run.result())
    if state == _lil.RUN_UNCERTAIN:
        names = ", ".join(repr(u) for u in run.uncertain())
        raise UncertainStepError(
            f"workflow {wf.goal_id!r} (run {wf.run_id}) is uncertain: side-effect "
            f"step(s) {names} started in an earlier process and their outcome is "
            "unknown; decide with lil.resolve(goal_id, identity, 'retry' | "
            "'assume_done' | 'abort') or `lil resolve`", "LIL_E_UNCERTAIN")
    try:
        run.result()
        why = "it has ended"
    except Error as e:
        why = str(e)
    raise WorkflowFailedError(
        f"workflow {wf.goal_id!r} (run {wf.run_id}) has ended without a result: {why}; "
        "call it with fresh=True (or .fresh(...)) to start a new run", "LIL_E_DONE")


def _close(wf: Workflow, exc: BaseException | None):
    try:
        wf._run.close()
    except Exception as cexc:
        if exc is None:
            raise
        try:
            exc.add_note(f"lil: closing run {wf.run_id} failed too: {cexc}")
        except AttributeError:
            pass


def _finish(wf: Workflow, result) -> object:
    data = _encode(result, f"workflow {wf.goal_id!r}")
    wf._run.complete(data)
    return _decode(data)


def _run_sync(opts: _Options, args, kwargs, fresh: bool):
    wf = _open_workflow(opts, args, kwargs, fresh)
    try:
        done, value = _ended(wf)
        if not done:
            token = _workflow.set(wf)
            try:
                result = opts.fn(*args, **kwargs)
            finally:
                _workflow.reset(token)
            value = _finish(wf, result)
    except BaseException as exc:
        _close(wf, exc)
        raise
    _close(wf, None)
    return value


async def _run_async(opts: _Options, args, kwargs, fresh: bool):
    loop = asyncio.get_running_loop()
    wf = await loop.run_in_executor(None, _open_workflow, opts, args, kwargs, fresh)
    try:
        done, value = _ended(wf)
        if not done:
            token = _workflow.set(wf)
            try:
                result = await opts.fn(*args, **kwargs)
            finally:
                _workflow.reset(token)
            data = _encode(result, f"workflow {wf.goal_id!r}")
            await loop.run_in_executor(None, wf._run.complete, data)
            value = _decode(data)
    except BaseException as exc:
        await loop.run_in_executor(None, _close, wf, exc)
        raise
    await loop.run_in_executor(None, _close, wf, None)
    return value


def _decorate(fn, goal_id, dir, sync, fresh, force_async: bool):
    opts = _Options(fn, goal_id, dir, sync, fresh)
    if force_async or inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def async_wrapper(*args, **kwargs):
            return await _run_async(opts, args, kwargs, False)

        async def async_fresh(*args, **kwargs):
            return await _run_async(opts, args, kwargs, True)
        async_wrapper.fresh = async_fresh
        async_wrapper.lil_options = opts
        return async_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return _run_sync(opts, args, kwargs, False)

    def sync_fresh(*args, **kwargs):
        return _run_sync(opts, args, kwargs, True)
    wrapper.fresh = sync_fresh
    wrapper.lil_options = opts
    return wrapper


def _decorator(target, goal_id, dir, sync, fresh, wal_dir, is_async, positional_dir=None):
    """``durable``'s work, used bare (target is the function) or called
    (target is the goal id, or None)."""
    dir = _one_dir(dir, wal_dir, positional_dir)
    if callable(target):
        if positional_dir is not None:
            raise UsageError("durable(fn, dir): a store directory goes with a goal id, "
                             "durable(goal_id, dir)", "LIL_E_INVAL")
        return _decorate(target, goal_id, dir, sync, fresh, is_async)
    if target is not None:
        goal_id = target
    return lambda fn: _decorate(fn, goal_id, dir, sync, fresh, is_async)


def _one_dir(dir, wal_dir, positional_dir):
    """The store directory given as dir=, wal_dir= or durable(goal_id, DIR)."""
    given = [d for d in (dir, wal_dir, positional_dir) if d is not None]
    if len(given) > 1:
        raise UsageError("durable: give the store directory once (dir, or letitloop's "
                         "wal_dir)", "LIL_E_INVAL")
    return given[0] if given else None


def durable(target=None, wal_dir_=None, /, *, goal_id=None, dir=None, sync=None,
            fresh=False, wal_dir=None):
    """Make a function a durable workflow: ``@durable``, ``@durable("goal")`` or
    ``@durable(goal_id=None, dir=None, sync=None, fresh=False)``.

    goal_id: the workflow's identity -- a str, or a callable given the
    call's arguments (``goal_id=lambda order: f"order-{order}"``, by keyword);
    default ``module.qualname`` of the function.  Each goal is its own run (one
    journal).  dir: the store directory (default $LIL_DIR, else ./.lil, read
    at each call; ``wal_dir`` is accepted as an alias).  sync: "full"
    (default, or $LIL_SYNC), "normal" or "off".  A goal whose run completed
    returns its journaled result without running the function; ``fresh=True``
    (or ``fn.fresh(...)`` for one call) starts a new run instead.  Coroutine
    functions get the behaviour of ``durable_async``.  letitloop's
    ``durable(goal_id, wal_dir)`` (both positional) works too.
    """
    return _decorator(target, goal_id, dir, sync, fresh, wal_dir, False, wal_dir_)


def durable_async(target=None, wal_dir_=None, /, *, goal_id=None, dir=None, sync=None,
                  fresh=False, wal_dir=None):
    """``durable`` for coroutine functions (``@durable_async`` or
    ``@durable_async(...)``): opening, completing and closing the run go to
    a thread, and so do the synced commits of its steps."""
    return _decorator(target, goal_id, dir, sync, fresh, wal_dir, True, wal_dir_)


# ---- inspection and resolution -------------------------------------------------

_RESOLUTIONS = {"retry": _lil.RESOLVE_RETRY, "assume_done": _lil.RESOLVE_ASSUME_DONE,
                "abort": _lil.RESOLVE_ABORT}
_STATES = {_lil.RUN_RUNNING: "running", _lil.RUN_COMPLETED: "completed",
           _lil.RUN_FAILED: "failed", _lil.RUN_UNCERTAIN: "uncertain",
           _lil.RUN_STOPPED: "stopped"}


def _goal_run_id(goal_id, dir):
    st = get_store(dir)
    base = run_id_of(goal_id)
    return st, _epoch_id(base, current_epoch(st, base))


def resolve(goal_id, identity: str, how: str, *, result=None, reason: str,
            actor: str | None = None, dir=None):
    """Decide an uncertain side-effect step of the goal's current run:
    ``how`` is "retry" (it runs again, same idempotency key), "assume_done"
    (``result`` becomes its value; it does not run) or "abort" (the run is
    stopped).  The decision is journaled with ``actor`` (default $USER) and
    ``reason``."""
    if how not in _RESOLUTIONS:
        raise UsageError(f"how must be one of {sorted(_RESOLUTIONS)}, not {how!r}",
                         "LIL_E_INVAL")
    data = _encode(result, f"the result given for {identity!r}").encode() \
        if how == "assume_done" else None
    st, run_id = _goal_run_id(goal_id, dir)
    run = st.open_run(run_id, _lil.SYNC_DEFAULT, _lil.OPEN_EXISTING)
    try:
        run.resolve(identity, _RESOLUTIONS[how], data,
                    actor or os.environ.get("USER") or "unknown", reason)
    finally:
        run.close()


class WorkflowStatus:
    """What ``lil.status(goal_id)`` reports about a goal's current run."""

    __slots__ = ("goal_id", "run_id", "state", "steps_done", "steps_failed", "uncertain",
                 "result")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))

    def __repr__(self):
        return (f"WorkflowStatus(goal_id={self.goal_id!r}, run_id={self.run_id!r}, "
                f"state={self.state!r}, steps_done={self.steps_done}, "
                f"steps_failed={self.steps_failed}, uncertain={self.uncertain!r})")


def status(goal_id, *, dir=None):
    """The state of a goal's current run (read-only: takes no lock), or None
    when the goal has no run."""
    st, run_id = _goal_run_id(goal_id, dir)
    if not st.exists(run_id):
        return None
    run = st.open_run(run_id, _lil.SYNC_DEFAULT, _lil.OPEN_READONLY | _lil.OPEN_EXISTING)
    try:
        info = run.info()
        state = _STATES.get(run.status(), "unknown")
        result = _decode(run.result()) if state == "completed" else None
        return WorkflowStatus(goal_id=goal_id, run_id=run_id, state=state,
                              steps_done=info["steps_done"],
                              steps_failed=info["steps_failed"],
                              uncertain=run.uncertain(), result=result)
    finally:
        run.close()

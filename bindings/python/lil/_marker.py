"""``atomic_marker``: a block of code done once, across processes and restarts.

    with lil.atomic_marker("send-welcome-mail") as m:
        if m:                       # True for the one caller that must do it
            send(..., idempotency_key=m.idempotency_key)
            m.result = "sent"       # optional: what later callers get in m.result

It is lil's marker (``lil_marker_begin``): the first caller to *finish* the
block publishes the marker (atomically, durably); every later caller, in
any process, gets a false ``m`` (and ``m.result``) without running the
block.  Callers that arrive while one is inside wait for it (a kernel lock
that dies with its process).  A block that raises publishes nothing: the
next caller runs it.

A process that dies *inside* the block leaves the marker in doubt, and
``policy`` decides for the next caller: "retry" (default: it runs the block
again -- at-least-once), "assume_done" (it does not -- at-most-once) or
"raise" (UncertainStepError until ``lil.reset_marker``).  No local protocol
can do better for a remote call: make the remote side deduplicate by
passing ``m.idempotency_key`` (the same on every attempt), and at-least-once
becomes exactly-once *in effect*.

Scope: inside a workflow a marker belongs to the workflow's run (a fresh run
has fresh markers); outside one, or with ``store_wide=True``, to the store.
Do not fork while inside the block: the child would share its lock.
"""

from __future__ import annotations

import asyncio
import hashlib

from . import _codec, _core, _lil
from ._errors import UsageError

_POLICIES = {"retry": _lil.MARKER_RETRY, "assume_done": _lil.MARKER_ASSUME_DONE,
             "raise": _lil.MARKER_RAISE}


class Marker:
    """What ``with atomic_marker(...) as m`` gives: true when this caller must
    run the block (``should_execute``), with the marker's idempotency key and
    attempt; ``result`` is the published value when it must not."""

    __slots__ = ("should_execute", "name", "idempotency_key", "attempt", "result")

    def __init__(self, should_execute, name, key=None, attempt=0, result=None):
        self.should_execute = should_execute
        self.name = name
        self.idempotency_key = key
        self.attempt = attempt
        self.result = result

    def __bool__(self):
        return self.should_execute

    def __eq__(self, other):
        if isinstance(other, bool):
            return self.should_execute == other
        return NotImplemented

    def __hash__(self):
        return hash(self.should_execute)

    def __repr__(self):
        return (f"Marker({self.name!r}, should_execute={self.should_execute}, "
                f"attempt={self.attempt})")


_NAME_MAX = 200  # bytes, lil's rule for step and marker names


def _plain(name: str) -> bool:
    """True when lil takes the name as it is: valid UTF-8 (no lone
    surrogate), no '#', no control character."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return not any(c == "#" or c < " " or c == "\x7f" for c in name)


def _size(name: str) -> int:
    """Bytes of name's UTF-8 (lone surrogates as 3 bytes each)."""
    return len(name.encode("utf-8", "surrogatepass"))


def _hashed(name: str) -> str:
    """The fixed-length name of a marker whose own name lil cannot take:
    "marker-" and the first 40 hex digits of the SHA-256 of its UTF-8."""
    data = name.encode("utf-8", "surrogatepass")
    return "marker-" + hashlib.sha256(data).hexdigest()[:40]


def _marker_name(name: str, store_wide: bool) -> str:
    """The store's name of marker ``name``: the name itself, under the
    workflow's run id inside a workflow (a run id with '#' or too long for
    the pair: "run-" and 16 hex digits of its SHA-256).  A name with '#' or a
    control character, or one that would make the whole name longer than 200
    bytes, is replaced by its hash (_hashed): names of any length work, and
    a name that fits is kept as it is."""
    if not isinstance(name, str) or not name:
        raise UsageError("a marker name is a non-empty str", "LIL_E_INVAL")
    wf = _core.current()
    prefix = ""
    if wf is not None and not store_wide:
        prefix = f"{wf.run_id}/"
        if "#" in wf.run_id or _size(prefix + name) > _NAME_MAX:
            digest = hashlib.sha256(wf.run_id.encode("utf-8")).hexdigest()[:16]
            prefix = f"run-{digest}/"
    full = prefix + name
    if not _plain(name) or _size(full) > _NAME_MAX:
        full = prefix + _hashed(name)
    return full


class atomic_marker:
    """``with atomic_marker(name, *, dir=None, policy="retry",
    store_wide=False) as m:`` -- see the module's docstring.  Also an
    ``async with`` (waiting and publishing on a thread).  letitloop's words
    work too: ``atomic_marker(marker_id, run_dir)``, by position or keyword
    (run_dir is the store directory, as dir)."""

    def __init__(self, name: str | None = None, run_dir=None, *, dir=None,
                 policy: str = "retry", store_wide: bool = False, marker_id=None):
        if policy not in _POLICIES:
            raise UsageError(f"policy must be one of {sorted(_POLICIES)}, not {policy!r}",
                             "LIL_E_INVAL")
        if (name is None) == (marker_id is None):
            raise UsageError("atomic_marker: give the marker's name once (name, or "
                             "letitloop's marker_id)", "LIL_E_INVAL")
        if dir is not None and run_dir is not None:
            raise UsageError("atomic_marker: give the store directory once (dir, or "
                             "letitloop's run_dir)", "LIL_E_INVAL")
        self._name = name if name is not None else marker_id
        self._dir = dir if dir is not None else run_dir
        self._policy = _POLICIES[policy]
        self._store_wide = store_wide
        self._call = None
        self._marker = None

    def _store(self):
        wf = _core.current()
        if self._dir is None and wf is not None:
            return _core.get_store(wf.store_dir)
        return _core.get_store(self._dir)

    def _begin(self, st, full):
        r = st.marker_begin(full, self._policy)
        if type(r) is _lil.Call:
            self._call = r
            self._marker = Marker(True, self._name, r.idempotency_key, r.attempt)
        else:
            value = _codec.decode(r) if r else None
            self._marker = Marker(False, self._name, result=value)
        return self._marker

    def _finish(self, failed: bool):
        call, self._call = self._call, None
        if call is None:
            return
        if failed:
            call.cancel()
            return
        try:
            data = _codec.encode(self._marker.result, f"marker '{self._name}'")
        except BaseException:
            call.cancel()
            raise
        call.end(data)

    def __enter__(self) -> Marker:
        full = _marker_name(self._name, self._store_wide)
        return self._begin(self._store(), full)

    def __exit__(self, et, ev, tb):
        self._finish(et is not None)
        return False

    async def __aenter__(self) -> Marker:
        full = _marker_name(self._name, self._store_wide)
        st = self._store()
        return await asyncio.get_running_loop().run_in_executor(None, self._begin, st,
                                                                full)

    async def __aexit__(self, et, ev, tb):
        await asyncio.get_running_loop().run_in_executor(None, self._finish,
                                                         et is not None)
        return False


def reset_marker(name: str, *, dir=None, store_wide: bool = False) -> bool:
    """Forget a marker (published or in doubt) so that its block runs again;
    False when there was nothing to forget.  Inside a workflow the name is
    the workflow's marker, as for ``atomic_marker``."""
    full = _marker_name(name, store_wide)
    wf = _core.current()
    st = _core.get_store(wf.store_dir if dir is None and wf is not None else dir)
    return st.marker_reset(full)

"""lil.adapters.langgraph -- a LangGraph checkpointer on lil's journal.

    from lil.adapters.langgraph import LilSaver

    saver = LilSaver(".lil")                  # or a postgresql:// URI
    graph = builder.compile(checkpointer=saver)
    graph.invoke(inputs, {"configurable": {"thread_id": "t-1"}})

A graph killed at any moment and invoked again on the same thread resumes
from its last checkpoint (docs/adapters.md#langgraph).  This module needs
LangGraph (``pip install 'lil[langgraph]'``); ``import lil`` does not.

Layout.  Each LangGraph thread is one lil run of the store, its run id
``prefix + thread_id`` by lil's goal-id rule (an id lil cannot take becomes
a readable prefix plus 12 hex digits of its SHA-256; docs/python.md).  All
the saver keeps is completed steps of that run, one step per call: a put
is one journal record, on disk as the run's sync mode says before put
returns, and a crash keeps it whole or not at all (a torn last record is
truncated at the next open).  The steps' results are JSON text; each value
LangGraph hands over is stored as V = ``[type, base64(bytes)]``, the pair
the saver's serde (LangGraph's JsonPlusSerializer unless another is given)
makes and reads:

    thread         {"format": 1, "thread_id": str}      the run's first step
    checkpoint N   {"ns": str, "id": str, "parent": str | null,
                    "checkpoint": V,      the checkpoint less channel_values
                    "metadata": V,
                    "blobs": [[channel, version, V], ...]}
    writes N       {"ns": str, "id": str, "task": str, "path": str,
                    "writes": [[idx, channel, V], ...]}

N numbers the steps after ``thread`` (1, 2, ...).  A checkpoint holds the
values of the channels of put's ``new_versions`` only (type "empty": the
channel had none); the others are read from the checkpoints before it by
(ns, channel, version).  A checkpoint put again under its id replaces the
earlier one (the later step wins).  Of writes, a (task, idx) already
stored is skipped for a regular channel, replaced for the special ones
(idx < 0: ERROR, INTERRUPT, ...), as LangGraph's own savers do.

Reading and locking.  A thread's run is opened -- and locked: one process
writes a thread at a time -- at its first use, and read once, whole
(lil_run_foreach), into an index in memory that serves every later read.
It stays open until the saver closes, the thread is deleted or released,
or ``max_open`` other threads are used after it (the least recently used
is closed first).  A thread that another live process holds is read from
a read-only snapshot of its journal; writing it raises RunLockedError.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import random
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (WRITES_IDX_MAP, BaseCheckpointSaver, ChannelVersions,
                                       Checkpoint, CheckpointMetadata, CheckpointTuple,
                                       get_checkpoint_id, get_checkpoint_metadata,
                                       writes_sort_key)
from langgraph.checkpoint.serde.base import SerializerProtocol

from .. import _lil
from .._core import _sync_mode, get_store, run_id_of
from .._errors import CorruptJournalError, Error, RunLockedError

__all__ = ["LilSaver"]

FORMAT = 1
HEADER_STEP = "thread"
CHECKPOINT = "checkpoint"
WRITES = "writes"


def _bad_record(run_id: str, rec: dict, why: str) -> CorruptJournalError:
    return CorruptJournalError(
        f"run {run_id}: record {rec['seq']} (step {rec['key']!r}) is not a LangGraph "
        f"checkpoint record of lil.adapters.langgraph: {why}", "LIL_E_CORRUPT")


class _Thread:
    """One thread's run and the index of what it holds.  Its lock guards
    everything; ``run`` is the writable run, None for a read-only snapshot
    or once closed."""

    def __init__(self, run_id: str, run, writable: bool):
        self.run_id = run_id
        self.run = run
        self.writable = writable
        self.closed = False
        self.lock = threading.Lock()
        self.thread_id: str | None = None
        self.steps = 0
        self.checkpoints: dict[str, dict[str, tuple]] = {}  # ns -> id -> (cp, md, parent)
        self.latest: dict[str, str] = {}  # ns -> greatest checkpoint id
        self.blobs: dict[tuple, list] = {}  # (ns, channel, version) -> V
        self.writes: dict[tuple, dict] = {}  # (ns, id) -> (task, idx) -> (task, ch, V, path)

    # -- the index ---------------------------------------------------------------

    def load(self, records: list) -> None:
        """Index every step of the run's records (journal order)."""
        for rec in records:
            if rec["type"] != "step":
                continue
            try:
                self._load_step(rec)
            except (ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
                raise _bad_record(self.run_id, rec, f"{type(e).__name__}: {e}") from None

    def _load_step(self, rec: dict) -> None:
        key = rec["key"]
        body = json.loads(rec["payload"].decode("utf-8"))
        if key == HEADER_STEP:
            if body["format"] != FORMAT:
                raise ValueError(f"format {body['format']!r}, this version reads {FORMAT}")
            self.thread_id = str(body["thread_id"])
            return
        kind, _, n = key.partition(" ")
        if kind == CHECKPOINT:
            self.add_checkpoint(body)
        elif kind == WRITES:
            self.add_writes(body)
        else:
            raise ValueError("unknown step")
        self.steps = max(self.steps, int(n))

    def add_checkpoint(self, rec: dict) -> None:
        ns, cid = str(rec["ns"]), str(rec["id"])
        self.checkpoints.setdefault(ns, {})[cid] = (rec["checkpoint"], rec["metadata"],
                                                    rec["parent"])
        if cid > self.latest.get(ns, ""):
            self.latest[ns] = cid
        for channel, version, value in rec["blobs"]:
            self.blobs[(ns, channel, version)] = value

    def add_writes(self, rec: dict) -> None:
        ns, cid, task, path = str(rec["ns"]), str(rec["id"]), rec["task"], rec["path"]
        stored = self.writes.setdefault((ns, cid), {})
        for idx, channel, value in rec["writes"]:
            stored[(task, idx)] = (task, channel, value, path)

    # -- the journal -------------------------------------------------------------

    def append(self, kind: str, rec: dict) -> None:
        """Journal rec as step "kind N" and index it."""
        if not self.writable or self.closed:
            raise Error(f"run {self.run_id} is not open for writing")
        name = f"{kind} {self.steps + 1}"
        self._journal(name, rec)
        self.steps += 1
        if kind == CHECKPOINT:
            self.add_checkpoint(rec)
        else:
            self.add_writes(rec)

    def write_header(self, thread_id: str) -> None:
        self._journal(HEADER_STEP, {"format": FORMAT, "thread_id": thread_id})
        self.thread_id = thread_id

    def _journal(self, name: str, rec: dict) -> None:
        text = json.dumps(rec, separators=(",", ":"))
        call = self.run.begin(name)
        if not isinstance(call, _lil.Call):
            raise CorruptJournalError(
                f"run {self.run_id}: step {name!r} is journaled already (the run is "
                "written by something else than lil.adapters.langgraph)", "LIL_E_CORRUPT")
        call.end(text)

    def close(self) -> None:
        self.closed = True
        run, self.run = self.run, None
        if run is not None:
            run.close()


class LilSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer that keeps each thread in a lil run.

    ``dir``: the store, by lil's rule (``dir``, else ``$LIL_DIR``, else
    ``./.lil``; a ``postgresql://`` URI opens the PostgreSQL store).
    ``sync``: ``"full"`` (default, or ``$LIL_SYNC``), ``"normal"`` or
    ``"off"``, as for ``@lil.durable``.  ``serde``: LangGraph's serializer
    (default JsonPlusSerializer).  ``prefix``: what run ids start with.
    ``max_open``: how many threads stay open (and locked) at once.
    """

    def __init__(self, dir=None, *, sync=None, serde: SerializerProtocol | None = None,
                 prefix: str = "langgraph-", max_open: int = 64):
        super().__init__(serde=serde)
        if max_open < 1:
            raise ValueError(f"max_open must be at least 1, not {max_open!r}")
        self._store = get_store(dir)
        self._sync = _sync_mode(sync)
        self._prefix = prefix
        self._max_open = max_open
        self._open: OrderedDict[str, _Thread] = OrderedDict()
        self._lock = threading.RLock()

    @property
    def store_dir(self) -> str:
        """The store's directory (or URI, without its password)."""
        return self._store.path

    def run_id(self, thread_id) -> str:
        """The lil run id of a thread (``lil inspect`` it)."""
        return run_id_of(self._prefix + str(thread_id))

    # -- threads -------------------------------------------------------------------

    def _open_thread(self, run_id: str, thread_id: str | None, create: bool):
        """The thread of run_id: open and cached, a snapshot (held by another
        process), or None (no such run and not create).  Called with _lock."""
        try:
            run = self._store.open_run(run_id, sync=self._sync,
                                       flags=0 if create else _lil.OPEN_EXISTING)
        except RunLockedError:
            if create:
                raise
            return self._snapshot(run_id)
        except Error as e:
            if e.status == "LIL_E_NOTFOUND":
                return None
            raise
        t = _Thread(run_id, run, True)
        try:
            t.load(run.records())
            if t.thread_id is None and thread_id is not None:
                t.write_header(thread_id)
        except BaseException:
            t.close()
            raise
        self._open[run_id] = t
        while len(self._open) > self._max_open:
            _, old = self._open.popitem(last=False)
            with old.lock:
                old.close()
        return t

    def _snapshot(self, run_id: str) -> _Thread | None:
        """A read-only index of run_id, or None if it has no journal."""
        flags = _lil.OPEN_READONLY | _lil.OPEN_EXISTING
        try:
            run = self._store.open_run(run_id, flags=flags)
        except Error as e:
            if e.status == "LIL_E_NOTFOUND":
                return None
            raise
        t = _Thread(run_id, None, False)
        try:
            t.load(run.records())
        finally:
            run.close()
        return t

    @contextlib.contextmanager
    def _thread(self, thread_id, create: bool):
        """The thread, locked for the block (None when it has no run)."""
        run_id = self.run_id(thread_id)
        while True:
            with self._lock:
                t = self._open.get(run_id)
                if t is not None:
                    self._open.move_to_end(run_id)
                else:
                    t = self._open_thread(run_id, str(thread_id), create)
            if t is None:
                yield None
                return
            with t.lock:
                if not t.closed:
                    yield t
                    return

    def _thread_ids(self) -> list[str]:
        return [r for r in self._store.run_ids() if r.startswith(self._prefix)]

    def release(self, thread_id) -> None:
        """Close the thread's run here (its lock goes: another process may
        write it); the next use opens it again."""
        with self._lock:
            t = self._open.pop(self.run_id(thread_id), None)
        if t is not None:
            with t.lock:
                t.close()

    def close(self) -> None:
        """Close every thread's run.  The saver may still be used: threads
        open again when used."""
        with self._lock:
            threads = list(self._open.values())
            self._open.clear()
        for t in threads:
            with t.lock:
                t.close()

    def __enter__(self) -> LilSaver:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    async def __aenter__(self) -> LilSaver:
        return self

    async def __aexit__(self, *exc_info) -> None:
        await asyncio.to_thread(self.close)

    # -- values --------------------------------------------------------------------

    def _dumps(self, obj: Any) -> list:
        type_, data = self.serde.dumps_typed(obj)
        return [type_, base64.b64encode(data).decode("ascii")]

    def _loads(self, t: _Thread, value: list) -> Any:
        try:
            data = base64.b64decode(value[1], validate=True)
        except (binascii.Error, IndexError, TypeError) as e:
            raise CorruptJournalError(f"run {t.run_id}: a stored value is not base64: {e}",
                                      "LIL_E_CORRUPT") from None
        return self.serde.loads_typed((value[0], data))

    def _tuple(self, t: _Thread, thread_id, ns: str, cid: str) -> CheckpointTuple:
        cp_value, md_value, parent = t.checkpoints[ns][cid]
        checkpoint: Checkpoint = self._loads(t, cp_value)
        values = {}
        for channel, version in checkpoint["channel_versions"].items():
            blob = t.blobs.get((ns, channel, version))
            if blob is not None and blob[0] != "empty":
                values[channel] = self._loads(t, blob)
        checkpoint["channel_values"] = values
        stored = t.writes.get((ns, cid), {})
        order = sorted(stored, key=lambda k: writes_sort_key(stored[k][3], *k))
        pending = [(stored[k][0], stored[k][1], self._loads(t, stored[k][2])) for k in order]

        def config(checkpoint_id):
            return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns,
                                     "checkpoint_id": checkpoint_id}}
        return CheckpointTuple(config=config(cid), checkpoint=checkpoint,
                               metadata=self._loads(t, md_value),
                               parent_config=config(parent) if parent else None,
                               pending_writes=pending)

    # -- BaseCheckpointSaver -------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        conf = config["configurable"]
        thread_id, ns = conf["thread_id"], conf.get("checkpoint_ns", "")
        with self._thread(thread_id, create=False) as t:
            if t is None:
                return None
            cid = get_checkpoint_id(config) or t.latest.get(ns)
            if cid is None or cid not in t.checkpoints.get(ns, {}):
                return None
            return self._tuple(t, thread_id, ns, cid)

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None,
             limit: int | None = None) -> Iterator[CheckpointTuple]:
        out: list[CheckpointTuple] = []
        if config is not None:
            self._list_thread(config["configurable"]["thread_id"], config, filter, before,
                              limit, out)
            return iter(out)
        for run_id in self._thread_ids():
            if limit is not None and len(out) >= limit:
                break
            with self._lock:
                t = self._open.get(run_id)
            t = t or self._snapshot(run_id)
            if t is not None and t.thread_id is not None:
                with t.lock:
                    self._list_index(t, t.thread_id, None, None, filter, before,
                                     None if limit is None else limit - len(out), out)
        return iter(out)

    def _list_thread(self, thread_id, config, filter, before, limit, out) -> None:
        with self._thread(thread_id, create=False) as t:
            if t is not None:
                conf = config["configurable"]
                self._list_index(t, thread_id, conf.get("checkpoint_ns"),
                                 get_checkpoint_id(config), filter, before, limit, out)

    def _list_index(self, t, thread_id, ns, cid, filter, before, limit, out) -> None:
        """Append to out the thread's checkpoints that match, newest first."""
        before_id = get_checkpoint_id(before) if before else None
        found = []
        for cp_ns, cps in t.checkpoints.items():
            if ns is not None and cp_ns != ns:
                continue
            found.extend((cp_id, cp_ns) for cp_id in cps
                         if (cid is None or cp_id == cid)
                         and (before_id is None or cp_id < before_id))
        found.sort(reverse=True)
        for cp_id, cp_ns in found:
            if limit is not None and limit <= 0:
                return
            if filter:
                md = self._loads(t, t.checkpoints[cp_ns][cp_id][1])
                if not all(md.get(k) == v for k, v in filter.items()):
                    continue
            out.append(self._tuple(t, thread_id, cp_ns, cp_id))
            if limit is not None:
                limit -= 1

    def put(self, config: RunnableConfig, checkpoint: Checkpoint,
            metadata: CheckpointMetadata, new_versions: ChannelVersions) -> RunnableConfig:
        conf = config["configurable"]
        thread_id, ns = conf["thread_id"], conf.get("checkpoint_ns", "")
        stripped = checkpoint.copy()
        values = stripped.pop("channel_values", {})
        rec = {
            "ns": ns, "id": checkpoint["id"], "parent": conf.get("checkpoint_id"),
            "checkpoint": self._dumps(stripped),
            "metadata": self._dumps(get_checkpoint_metadata(config, metadata)),
            "blobs": [[ch, v, self._dumps(values[ch]) if ch in values else ["empty", ""]]
                      for ch, v in new_versions.items()],
        }
        with self._thread(thread_id, create=True) as t:
            t.append(CHECKPOINT, rec)
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns,
                                 "checkpoint_id": checkpoint["id"]}}

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                   task_id: str, task_path: str = "") -> None:
        conf = config["configurable"]
        thread_id, ns, cid = conf["thread_id"], conf.get("checkpoint_ns", ""), \
            conf["checkpoint_id"]
        dumped = [[WRITES_IDX_MAP.get(ch, i), ch, self._dumps(v)]
                  for i, (ch, v) in enumerate(writes)]
        with self._thread(thread_id, create=True) as t:
            stored = t.writes.get((ns, cid), {})
            new = [w for w in dumped if w[0] < 0 or (task_id, w[0]) not in stored]
            if new:
                t.append(WRITES, {"ns": ns, "id": cid, "task": task_id, "path": task_path,
                                  "writes": new})

    def delete_thread(self, thread_id: str) -> None:
        """Remove the thread's run and journal (lil rm); a thread that
        another process holds is not removed (RunLockedError)."""
        self.release(thread_id)
        self._store.remove_run(self.run_id(thread_id), force=True)

    def get_next_version(self, current: str | None, channel: None = None) -> str:
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"

    # -- asyncio: the same calls on a worker thread (the disk never blocks
    # the event loop) ----------------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(self, config: RunnableConfig | None, *,
                    filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None,
                    limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        found = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit)))
        for tup in found:
            yield tup

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint,
                   metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                          task_id: str, task_path: str = "") -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

"""What a failed step leaves in the journal, and the exception replay raises.

A step whose function raises an ``Exception`` is journaled failed (lil's
STEP_FAILED record) with this reason, JSON text of at most 1000 bytes:

    {"type": "module.QualName", "message": str(exc), "args": <codec of exc.args>}

(``args`` left out when the codec cannot write them; ``message`` cut when the
whole would not fit).  On replay the same step raises again, without running:

- the same class, rebuilt from ``args`` (or from the message), when the class
  is a built-in exception, or an ``Exception`` subclass of a module that is
  already imported (nothing is imported), or one registered with
  ``lil.register``;
- otherwise :class:`lil.StepFailed`, whose ``type_name`` and ``message`` say
  what was raised.

Either way the exception carries a note (``add_note``) saying it was
replayed from the journal, and ``lil_replayed = True``.
"""

from __future__ import annotations

import builtins
import json

from . import _codec
from ._errors import StepFailed

_MAX_REASON = 990


def _qualified(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _dump(doc) -> str:
    text = json.dumps(doc, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: \uXXXX escapes
        text = json.dumps(doc)
    return text


def encode_failure(exc: BaseException) -> str:
    """The journaled reason of a step that raised exc."""
    doc = {"type": _qualified(type(exc)), "message": str(exc)}
    try:
        doc["args"] = _codec._enc(exc.args)
    except (_codec._Unsupported, RecursionError):
        pass
    text = _dump(doc)
    if len(text.encode("utf-8")) <= _MAX_REASON:
        return text
    doc.pop("args", None)
    msg = doc["message"]
    while True:
        text = _dump(doc)
        if len(text.encode("utf-8")) <= _MAX_REASON or not msg:
            return text
        msg = msg[: max(0, len(msg) - max(16, len(msg) // 4))]
        doc["message"] = msg + "..."


def _find_exception_class(type_name: str):
    """The class journaled as type_name, without importing anything."""
    for name, cls in _codec._registered.items():
        mod, _, qual = name.partition(":")
        if f"{mod}.{qual}" == type_name and isinstance(cls, type):
            return cls
    mod_name, _, qual = type_name.rpartition(".")
    if mod_name == "builtins":
        cls = getattr(builtins, qual, None)
    else:
        cls = _from_loaded_module(type_name)
    if isinstance(cls, type) and issubclass(cls, Exception):
        return cls
    return None


def _from_loaded_module(type_name: str):
    import sys
    parts = type_name.split(".")
    for i in range(len(parts) - 1, 0, -1):
        mod = sys.modules.get(".".join(parts[:i]))
        if mod is None:
            continue
        obj = mod
        for p in parts[i:]:
            obj = getattr(obj, p, None)
            if obj is None:
                return None
        return obj
    return None


def _rebuild(cls, doc):
    if "args" in doc:
        try:
            args = _codec.decode(json.dumps(doc["args"]))
            if type(args) is tuple:
                return cls(*args)
        except Exception:  # noqa: BLE001 -- any failure falls back below
            pass
    try:
        return cls(doc.get("message", ""))
    except Exception:  # noqa: BLE001
        return None


def replayed_failure(identity: str, reason) -> BaseException:
    """The exception a step whose failure the journal holds raises."""
    if type(reason) is bytes:
        reason = reason.decode("utf-8", "replace")
    try:
        doc = json.loads(reason)
        if type(doc) is not dict or "type" not in doc:
            raise ValueError
    except ValueError:
        doc = {"type": "", "message": reason}
    cls = _find_exception_class(doc["type"]) if doc["type"] else None
    exc = _rebuild(cls, doc) if cls is not None else None
    if exc is None:
        exc = StepFailed(str(doc.get("message", "")), "LIL_E_FAILED", doc["type"])
    try:
        exc.add_note(f"lil: step '{identity}' failed in an earlier run; raised again "
                     "from the journal without running it")
        exc.lil_replayed = True
    except (AttributeError, TypeError):
        pass
    return exc

"""The codec: Python values <-> the JSON text lil journals.

A value is journaled as JSON, with a *tag* for what JSON cannot say, so that
it comes back as the same type with the same value:

    {"$lil": TAG, "v": PAYLOAD}            (and "c": class, "tz": zone, ...)

Plain JSON carries ``str``, ``bool``, ``None``, ``list``, ``int`` within 64
bits, finite ``float`` (written with ``repr``, so exactly), and ``dict``
whose keys are all ``str`` and none is ``"$lil"``.  Everything else is
tagged: ``int`` beyond 64 bits (hex), NaN and the infinities, ``tuple``,
``dict`` with other keys (a list of pairs), ``set`` and ``frozenset``
(elements in the order of their encodings, so equal sets give equal bytes),
``bytes``/``bytearray`` (base64), ``complex``, ``datetime``/``date``/``time``
(ISO text; time zones kept: ``datetime.timezone`` offsets and names,
``zoneinfo.ZoneInfo`` keys, fold), ``timedelta``, ``UUID``, ``Decimal``
(its text, exactly), ``pathlib`` paths, ``OrderedDict``, ``Counter``,
``Enum`` members, dataclass instances, named tuples, Pydantic v2 models
(``model_dump``/``model_validate``), and types registered with
:func:`register`.

Decoding runs no code chosen by the journal: nothing is imported and
nothing is unpickled.  A class named in the journal (an enum, a dataclass, a
named tuple, a model, an exception) is looked up in modules *already
imported* (``sys.modules``) or among registered classes, and must be of the
kind its tag says; anything else is a :class:`DurableSerializationError`.
Dataclasses and named tuples are rebuilt field by field without calling
``__init__``; models with their own ``model_validate``.
"""

from __future__ import annotations

import base64
import collections
import dataclasses
import datetime as _dt
import decimal
import enum
import json
import math
import pathlib
import sys
import uuid

from ._errors import DurableSerializationError

TAG = "$lil"
_INT_MIN = -(1 << 63)
_INT_MAX = (1 << 63) - 1


class _Unsupported(Exception):
    """Raised inside the encoder with the offending object."""

    def __init__(self, obj, why: str = "", type_name: str | None = None):
        super().__init__(obj)
        self.obj = obj
        self.why = why
        self.type_name = type_name if type_name is not None else _type_name(obj)


def _type_name(obj) -> str:
    t = type(obj)
    mod = t.__module__
    return t.__qualname__ if mod == "builtins" else f"{mod}.{t.__qualname__}"


def _class_spec(cls) -> str:
    name = _registered_names.get(cls)
    if name is not None:
        return name
    qual = cls.__qualname__
    if "<locals>" in qual:
        raise _Unsupported(cls, "a class defined inside a function cannot be found on "
                                "replay: register it with lil.register(cls)",
                           f"{cls.__module__}.{qual}")
    return f"{cls.__module__}:{qual}"


# ---- registry --------------------------------------------------------------

_registered: dict[str, object] = {}  # name -> class
_registered_names: dict[type, str] = {}  # class -> name
_custom: dict[type, tuple] = {}  # class -> (name, encode, decode)
_custom_by_name: dict[str, tuple] = {}


def register(cls, *, name: str | None = None, encode=None, decode=None):
    """Let the codec journal instances of ``cls``.

    Without ``encode``/``decode``: ``cls`` is an Enum, a dataclass, a named
    tuple, a Pydantic model or an exception class that replay must find under
    ``name`` even when its module is not imported yet or it is defined
    inside a function.  With them: ``encode(obj)`` returns a value the codec
    can journal and ``decode(value)`` rebuilds the object (tag ``custom``).
    ``name`` defaults to ``"module:qualname"``.  Returns ``cls``, so it works
    as a decorator."""
    if name is None:
        name = f"{cls.__module__}:{cls.__qualname__}"
    if (encode is None) != (decode is None):
        raise TypeError("register: give both encode and decode, or neither")
    if encode is not None:
        _custom[cls] = (name, encode, decode)
        _custom_by_name[name] = (cls, encode, decode)
    _registered[name] = cls
    _registered_names[cls] = name
    return cls


def _lookup_class(spec: str):
    cls = _registered.get(spec)
    if cls is not None:
        return cls
    mod_name, _, qual = spec.partition(":")
    mod = sys.modules.get(mod_name)
    if mod is None or not qual:
        raise DurableSerializationError(
            f"class {spec} named in the journal is not loaded: import {mod_name} "
            "before the replay, or lil.register() the class")
    obj = mod
    for part in qual.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise DurableSerializationError(f"class {spec} named in the journal "
                                            "does not exist in the loaded module")
    if not isinstance(obj, type):
        raise DurableSerializationError(f"{spec} named in the journal is not a class")
    return obj


# ---- encoding --------------------------------------------------------------

def _enc_int(o):
    if _INT_MIN <= o <= _INT_MAX:
        return o
    return {TAG: "int", "v": format(o, "x")}


def _enc_float(o):
    if o - o == 0.0:  # finite
        return o
    return {TAG: "float", "v": "nan" if o != o else ("inf" if o > 0 else "-inf")}


def _enc_list(o):
    return [_enc(x) for x in o]


def _enc_dict(o):
    for k in o:
        if type(k) is not str or k == TAG:
            return {TAG: "dict", "v": [[_enc(k), _enc(v)] for k, v in o.items()]}
    return {k: _enc(v) for k, v in o.items()}


def _enc_tuple(o):
    return {TAG: "tuple", "v": [_enc(x) for x in o]}


def _sorted_elements(o):
    enc = [_enc(x) for x in o]
    return sorted(enc, key=_dumps)


def _enc_set(o):
    return {TAG: "set", "v": _sorted_elements(o)}


def _enc_frozenset(o):
    return {TAG: "frozenset", "v": _sorted_elements(o)}


def _enc_bytes(o):
    return {TAG: "bytes", "v": base64.b64encode(o).decode("ascii")}


def _enc_bytearray(o):
    return {TAG: "bytearray", "v": base64.b64encode(o).decode("ascii")}


def _enc_complex(o):
    return {TAG: "complex", "v": [_enc_float(o.real), _enc_float(o.imag)]}


def _enc_tz(tz):
    """A tzinfo: None, "UTC", ["offset", days, seconds, us, name|None] or
    ["zone", key]."""
    if tz is None:
        return None
    if tz is _dt.timezone.utc:
        return "UTC"
    if type(tz) is _dt.timezone:
        off = tz.utcoffset(None)
        name = tz.tzname(None)
        default = _dt.timezone(off).tzname(None)
        return ["offset", off.days, off.seconds, off.microseconds,
                None if name == default else name]
    key = getattr(tz, "key", None)
    if type(tz).__module__ == "zoneinfo" and isinstance(key, str):
        return ["zone", key]
    raise _Unsupported(tz, "only datetime.timezone and zoneinfo.ZoneInfo time zones "
                           "are journaled")


def _enc_clock(tag, o):
    """A datetime or a time: its naive ISO text, its zone and its fold."""
    d = {TAG: tag, "v": o.replace(tzinfo=None, fold=0).isoformat()}
    if o.tzinfo is not None:
        d["tz"] = _enc_tz(o.tzinfo)
    if o.fold:
        d["fold"] = 1
    return d


def _enc_datetime(o):
    return _enc_clock("datetime", o)


def _enc_date(o):
    return {TAG: "date", "v": o.isoformat()}


def _enc_time(o):
    return _enc_clock("time", o)


def _enc_timedelta(o):
    return {TAG: "timedelta", "v": [o.days, o.seconds, o.microseconds]}


def _enc_uuid(o):
    return {TAG: "uuid", "v": str(o)}


def _enc_decimal(o):
    return {TAG: "decimal", "v": str(o)}


def _enc_path(o):
    return {TAG: "path", "c": type(o).__name__, "v": str(o)}


def _enc_ordereddict(o):
    return {TAG: "ordereddict", "v": [[_enc(k), _enc(v)] for k, v in o.items()]}


def _enc_counter(o):
    return {TAG: "counter", "v": [[_enc(k), _enc(v)] for k, v in o.items()]}


def _enc_none(o):
    return o


_ENCODERS = {
    str: _enc_none,
    bool: _enc_none,
    type(None): _enc_none,
    int: _enc_int,
    float: _enc_float,
    list: _enc_list,
    dict: _enc_dict,
    tuple: _enc_tuple,
    set: _enc_set,
    frozenset: _enc_frozenset,
    bytes: _enc_bytes,
    bytearray: _enc_bytearray,
    complex: _enc_complex,
    _dt.datetime: _enc_datetime,
    _dt.date: _enc_date,
    _dt.time: _enc_time,
    _dt.timedelta: _enc_timedelta,
    uuid.UUID: _enc_uuid,
    decimal.Decimal: _enc_decimal,
    pathlib.PosixPath: _enc_path,
    pathlib.PurePosixPath: _enc_path,
    pathlib.PureWindowsPath: _enc_path,
    collections.OrderedDict: _enc_ordereddict,
    collections.Counter: _enc_counter,
}


def _is_model(o) -> bool:
    t = type(o)
    return callable(getattr(t, "model_validate", None)) and callable(getattr(o, "model_dump", None))


def _enc_model(o):
    spec = _class_spec(type(o))
    try:
        data = _enc(o.model_dump(mode="python", by_alias=True))
    except _Unsupported:
        data = _enc(o.model_dump(mode="json", by_alias=True))
    return {TAG: "model", "c": spec, "v": data}


def _enc_other(o):
    t = type(o)
    custom = _custom.get(t)
    if custom is not None:
        return {TAG: "custom", "c": custom[0], "v": _enc(custom[1](o))}
    if isinstance(o, enum.Enum):
        return {TAG: "enum", "c": _class_spec(t), "v": _enc(o.value)}
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        fields = {f.name: _enc(getattr(o, f.name)) for f in dataclasses.fields(o)}
        return {TAG: "dataclass", "c": _class_spec(t), "v": fields}
    if isinstance(o, tuple) and hasattr(t, "_fields"):
        return {TAG: "namedtuple", "c": _class_spec(t), "v": [_enc(x) for x in o]}
    if _is_model(o):
        return _enc_model(o)
    raise _Unsupported(o)


def _enc(o):
    f = _ENCODERS.get(type(o))
    if f is not None:
        return f(o)
    return _enc_other(o)


_encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False,
                            separators=(",", ":"))
_dumps = _encoder.encode
# for text with lone surrogates, which UTF-8 cannot carry: \uXXXX escapes
_dumps_ascii = json.JSONEncoder(ensure_ascii=True, allow_nan=False, check_circular=False,
                                separators=(",", ":")).encode


def encode(value, what: str) -> str:
    """The JSON text of value; DurableSerializationError naming ``what``
    (e.g. "step 'fetch'") and the type when it cannot be journaled."""
    try:
        doc = _enc(value)
        text = _dumps(doc)
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                text = _dumps_ascii(doc)
        return text
    except _Unsupported as e:
        why = f": {e.why}" if e.why else ""
        raise DurableSerializationError(
            f"{what} returned non-serializable object: a value of type {e.type_name} "
            f"cannot be journaled{why} (see lil.register)") from None
    except RecursionError:
        raise DurableSerializationError(
            f"{what} returned a value nested too deeply, or holding a reference to "
            "itself") from None


def encode_request(args: tuple, kwargs: dict) -> bytes:
    """The request of a side-effect step: its arguments as the codec writes
    them (what replay compares); an argument the codec cannot write is
    replaced by its type's name."""
    def one(x):
        try:
            return _enc(x)
        except (_Unsupported, RecursionError):
            return {TAG: "opaque", "v": _type_name(x)}
    doc = [[one(a) for a in args], {k: one(v) for k, v in kwargs.items()}]
    return _dumps(doc).encode("utf-8", "surrogatepass")


# ---- decoding --------------------------------------------------------------

def _dec_int(d):
    return int(d["v"], 16)


def _dec_float(d):
    return float(d["v"])


def _pairs(d):
    return [(k, v) for k, v in d["v"]]


def _dec_dict(d):
    return dict(_pairs(d))


def _dec_tz(spec):
    if spec is None:
        return None
    if spec == "UTC":
        return _dt.timezone.utc
    if spec[0] == "offset":
        off = _dt.timedelta(days=spec[1], seconds=spec[2], microseconds=spec[3])
        return _dt.timezone(off, spec[4]) if spec[4] is not None else _dt.timezone(off)
    if spec[0] == "zone":
        import zoneinfo
        return zoneinfo.ZoneInfo(spec[1])
    raise DurableSerializationError(f"unknown time zone {spec!r} in the journal")


def _dec_datetime(d):
    v = _dt.datetime.fromisoformat(d["v"])
    return v.replace(tzinfo=_dec_tz(d.get("tz")), fold=d.get("fold", 0))


def _dec_time(d):
    v = _dt.time.fromisoformat(d["v"])
    return v.replace(tzinfo=_dec_tz(d.get("tz")), fold=d.get("fold", 0))


def _dec_timedelta(d):
    days, seconds, us = d["v"]
    return _dt.timedelta(days=days, seconds=seconds, microseconds=us)


_PATHS = {"PosixPath": pathlib.PosixPath, "PurePosixPath": pathlib.PurePosixPath,
          "PureWindowsPath": pathlib.PureWindowsPath, "WindowsPath": pathlib.PureWindowsPath}


def _dec_path(d):
    cls = _PATHS.get(d.get("c"))
    if cls is None:
        raise DurableSerializationError(f"unknown path class {d.get('c')!r} in the journal")
    return cls(d["v"])


def _dec_enum(d):
    cls = _lookup_class(d["c"])
    if not issubclass(cls, enum.Enum):
        raise DurableSerializationError(f"{d['c']} named in the journal is not an Enum")
    return cls(d["v"])


def _dec_dataclass(d):
    cls = _lookup_class(d["c"])
    if not dataclasses.is_dataclass(cls):
        raise DurableSerializationError(f"{d['c']} named in the journal is not a dataclass")
    obj = object.__new__(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    for k, v in d["v"].items():
        if k not in names:
            raise DurableSerializationError(f"dataclass {d['c']} has no field {k!r} "
                                            "(the journal holds one)")
        object.__setattr__(obj, k, v)
    return obj


def _dec_namedtuple(d):
    cls = _lookup_class(d["c"])
    if not (issubclass(cls, tuple) and hasattr(cls, "_fields")):
        raise DurableSerializationError(f"{d['c']} named in the journal is not a named tuple")
    return tuple.__new__(cls, d["v"])


def _dec_model(d):
    cls = _lookup_class(d["c"])
    validate = getattr(cls, "model_validate", None)
    if not callable(validate):
        raise DurableSerializationError(f"{d['c']} named in the journal is not a model")
    return validate(d["v"])


def _dec_custom(d):
    entry = _custom_by_name.get(d["c"])
    if entry is None:
        raise DurableSerializationError(f"type {d['c']} named in the journal is not "
                                        "registered (lil.register)")
    return entry[2](d["v"])


def _dec_opaque(d):
    raise DurableSerializationError(f"the journal holds an opaque {d['v']}")


_DECODERS = {
    "int": _dec_int,
    "float": _dec_float,
    "tuple": lambda d: tuple(d["v"]),
    "dict": _dec_dict,
    "set": lambda d: set(d["v"]),
    "frozenset": lambda d: frozenset(d["v"]),
    "bytes": lambda d: base64.b64decode(d["v"]),
    "bytearray": lambda d: bytearray(base64.b64decode(d["v"])),
    "complex": lambda d: complex(d["v"][0], d["v"][1]),
    "datetime": _dec_datetime,
    "date": lambda d: _dt.date.fromisoformat(d["v"]),
    "time": _dec_time,
    "timedelta": _dec_timedelta,
    "uuid": lambda d: uuid.UUID(d["v"]),
    "decimal": lambda d: decimal.Decimal(d["v"]),
    "path": _dec_path,
    "ordereddict": lambda d: collections.OrderedDict(_pairs(d)),
    "counter": lambda d: collections.Counter(dict(_pairs(d))),
    "enum": _dec_enum,
    "dataclass": _dec_dataclass,
    "namedtuple": _dec_namedtuple,
    "model": _dec_model,
    "custom": _dec_custom,
    "opaque": _dec_opaque,
}


def _hook(d):
    tag = d.get(TAG)
    if tag is None:
        return d
    f = _DECODERS.get(tag)
    if f is None:
        raise DurableSerializationError(f"unknown tag {tag!r} in the journal")
    return f(d)


_decoder = json.JSONDecoder(object_hook=_hook)
_raw_decode = _decoder.raw_decode


def decode(text):
    """The value of journaled JSON text (str, or bytes that must be UTF-8)."""
    try:
        if type(text) is not str:
            text = text.decode("utf-8")
        value, end = _raw_decode(text)
    except DurableSerializationError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as e:
        raise DurableSerializationError(f"the journal holds a value this codec cannot "
                                        f"read: {e}") from None
    if end != len(text) and text[end:].strip():
        raise DurableSerializationError("the journal holds text after a JSON value")
    return value


def roundtrip(value, what: str = "value"):
    """decode(encode(value)): what a step returning value returns."""
    return decode(encode(value, what))

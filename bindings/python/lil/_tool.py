"""lil.durable_tool: a tool function that runs once per call identity.

A tool call inside a workflow is a step named

    tool:<name>:<digest>

where <name> is the tool's name (characters lil refuses in a step name --
``#`` and control characters -- become ``_``; at most 120 characters) and
<digest> is the first 16 hex digits of the SHA-256 of the call's arguments
as the codec writes them (positional arguments in order, keyword arguments
sorted by name; an argument the codec cannot write counts by its type's
name).  lil numbers a name's occurrences in an execution (``...#2``,
``...#3``), so the identity of a call is its tool, its arguments and how
many calls of the same tool with the same arguments came before it.  A
replay that makes the same calls finds them journaled and gets their
recorded results without running the tool; a call with other arguments is
other work and runs.

``call_once`` is the same rule for callers that are not functions (the
framework adapters journal model calls with it, under the name ``llm``).
"""

import functools
import hashlib
import inspect
import json
import re

from . import _codec
from ._core import async_effect, async_step, effect, step

_NAME_MAX = 120
_BAD_NAME_CHARS = re.compile(r"[#\x00-\x1f\x7f]")


def call_digest(args: tuple, kwargs: dict) -> str:
    """16 hex digits of the SHA-256 of the arguments as the codec writes them,
    with keyword arguments sorted and every JSON object's keys sorted."""
    request = _codec.encode_request(tuple(args), dict(sorted(kwargs.items())))
    canonical = json.dumps(json.loads(request), sort_keys=True, ensure_ascii=True,
                           separators=(",", ":"))
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()[:16]


def step_name(kind: str, name: str, digest: str) -> str:
    """The step name of a call: ``kind:name:digest``."""
    clean = _BAD_NAME_CHARS.sub("_", str(name))[:_NAME_MAX] or "_"
    return f"{kind}:{clean}:{digest}"


def call_once(kind: str, name: str, fn, args: tuple, kwargs: dict, *, key=None,
              as_effect: bool = False):
    """fn(*args, **kwargs) as the step of this call (see the module's doc).
    key: what identifies the call when it is not (args, kwargs) -- a tuple
    digested instead of the arguments."""
    digest = call_digest(key if key is not None else args, {} if key is not None else kwargs)
    run = effect if as_effect else step
    return run(step_name(kind, name, digest), fn, *args, **kwargs)


async def async_call_once(kind: str, name: str, fn, args: tuple, kwargs: dict, *,
                          key=None, as_effect: bool = False):
    """call_once for asyncio: fn may be a coroutine function."""
    digest = call_digest(key if key is not None else args, {} if key is not None else kwargs)
    run = async_effect if as_effect else async_step
    return await run(step_name(kind, name, digest), fn, *args, **kwargs)


def _wrap(fn, name: str, as_effect: bool):
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def async_tool(*args, **kwargs):
            return await async_call_once("tool", name, fn, args, kwargs, as_effect=as_effect)
        async_tool.lil_tool_name = name
        return async_tool

    @functools.wraps(fn)
    def tool(*args, **kwargs):
        return call_once("tool", name, fn, args, kwargs, as_effect=as_effect)
    tool.lil_tool_name = name
    return tool


def durable_tool(fn=None, /, *, name=None, effect=False):
    """Decorate a tool function (plain or ``async def``) so that, inside a
    ``@durable`` workflow, each call runs once per identity: its tool name,
    a digest of its arguments and its occurrence (module doc).  A call the
    journal holds returns the recorded result (or raises the recorded
    failure) without running.  ``name`` defaults to the function's
    ``__name__``.  ``effect=True`` journals an intent first, as
    ``lil.effect``: a crash during the call leaves the workflow uncertain
    instead of running it again.  The wrapper keeps the function's name,
    docstring, signature and annotations, so frameworks that read them
    (CrewAI's, AutoGen's and smolagents' tool decorators) see the same tool.
    Outside a workflow a call raises RuntimeError, as ``lil.step`` does."""
    if fn is None:
        return lambda f: _wrap(f, name or f.__name__, bool(effect))
    if not callable(fn):
        raise TypeError(f"durable_tool decorates a function, not {type(fn).__name__}")
    return _wrap(fn, name or fn.__name__, bool(effect))

"""CrewAI crews that resume through lil (docs/adapters.md, CrewAI).

``durable(crew)`` makes a crew's model calls, tool calls and task outputs
durable steps of the current lil workflow, and returns the crew:

    @lil.durable(goal_id="report")
    def report():
        crew = lil_crewai.durable(Crew(agents=[...], tasks=[...]))
        return crew.kickoff().raw

Run again after a crash, the crew starts over and replays from the
journal: each model call the journal holds returns its recorded answer
without reaching the model, each tool call its recorded result without
running the tool, so the agents rebuild the same conversations and go on
from the call that was in flight, which runs again (at least once).

- A model call (``call``, ``acall`` of a crewai LLM) is the step
  ``llm:<model>:<digest>`` (lil._tool's rule), the digest over the
  messages, the tool schemas offered and the response model's name.  The
  answer (text, or the tool calls the model asked for) is journaled.
- A tool call (the function of a crewai ``@tool``, a BaseTool's
  ``_run``/``_arun``) is
  ``tool:<tool name>:<digest>`` over its arguments, for the tools of every
  agent and task of the crew (``durable_tools`` for others).
- Each task's output is journaled when the task ends (``crewai:task``: its
  description and raw output); a replay that produces another output
  raises NonDeterministicReplayError.  The crew's own ``task_callback``
  still runs after it.

CrewAI is imported by the crew the caller made, never by ``import lil``.
"""

import functools
import inspect

from .. import _tool
from .._core import current, step
from .._errors import NonDeterministicReplayError

_MARK = "_lil_durable"


def _marked(obj) -> bool:
    return bool(getattr(obj, "__dict__", {}).get(_MARK))


def _set(obj, name, value):
    object.__setattr__(obj, name, value)  # crewai's objects are pydantic models


def _schema_name(tool):
    if isinstance(tool, dict):
        return (tool.get("function") or {}).get("name") or tool.get("name") or repr(tool)
    return getattr(tool, "name", None) or repr(tool)


def _call_key(messages, kwargs):
    model = kwargs.get("response_model")
    return (messages, sorted(str(_schema_name(t)) for t in kwargs.get("tools") or []),
            None if model is None else f"{model.__module__}.{model.__qualname__}")


def _call_kwargs(args, kwargs):
    names = ("tools", "callbacks", "available_functions", "from_task", "from_agent",
             "response_model")
    return dict(zip(names, args), **kwargs)


def durable_llm(llm):
    """Make a crewai LLM journal its answers as steps of the current
    workflow (module doc).  Idempotent; returns the LLM."""
    if llm is None or isinstance(llm, str) or _marked(llm):
        return llm
    name = getattr(llm, "model", None) or type(llm).__name__
    call, acall = llm.call, getattr(llm, "acall", None)

    @functools.wraps(call)
    def durable_call(messages, *args, **kwargs):
        kwargs = _call_kwargs(args, kwargs)
        return _tool.call_once("llm", name, lambda: call(messages, **kwargs), (), {},
                               key=_call_key(messages, kwargs))

    _set(llm, "call", durable_call)
    if acall is not None:
        @functools.wraps(acall)
        async def durable_acall(messages, *args, **kwargs):
            kwargs = _call_kwargs(args, kwargs)

            async def once():
                return await acall(messages, **kwargs)
            return await _tool.async_call_once("llm", name, once, (), {},
                                               key=_call_key(messages, kwargs))

        _set(llm, "acall", durable_acall)
    _set(llm, _MARK, True)
    return llm


def _durable(fn, name):
    """fn as the tool step of each call (async when fn is)."""
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def async_once(*args, **kwargs):
            return await _tool.async_call_once("tool", name, fn, args, kwargs)
        return async_once

    @functools.wraps(fn)
    def once(*args, **kwargs):
        return _tool.call_once("tool", name, fn, args, kwargs)
    return once


def _wrap_tool(tool):
    if _marked(tool):
        return tool
    if callable(getattr(tool, "func", None)):
        # crewai's Tool (the @tool decorator): run and _run call func
        _set(tool, "func", _durable(tool.func, tool.name))
    else:
        _set(tool, "_run", _durable(tool._run, tool.name))
        if getattr(tool, "_arun", None) is not None:
            _set(tool, "_arun", _durable(tool._arun, tool.name))
    _set(tool, _MARK, True)
    return tool


def durable_tools(tools):
    """Make each crewai BaseTool of ``tools`` run once per call identity
    (module doc); returns the list."""
    return [_wrap_tool(t) for t in tools or []]


def _journal_task(output):
    if current() is None:
        return
    summary = {"description": output.description, "raw": output.raw}
    journaled = step("crewai:task", lambda: summary)
    if journaled != summary:
        raise NonDeterministicReplayError(
            f"crewai task {output.description[:60]!r} replayed with another output: "
            f"journaled {journaled['raw'][:200]!r}, now {output.raw[:200]!r}")


def _task_callback(then):
    def callback(output):
        _journal_task(output)
        if then is not None:
            return then(output)
        return None
    callback.__name__ = "lil_task_callback"
    return callback


def durable(crew):
    """Make ``crew`` (a crewai Crew) durable inside a lil workflow: the
    model calls and tool calls of its agents, manager and tasks, and its
    task outputs, become steps (module doc).  Idempotent; returns the crew.
    Calls outside a workflow raise RuntimeError, as ``lil.step`` does."""
    if _marked(crew):
        return crew
    for agent in list(crew.agents) + [getattr(crew, "manager_agent", None)]:
        if agent is None:
            continue
        for attr in ("llm", "function_calling_llm"):
            durable_llm(getattr(agent, attr, None))
        durable_tools(agent.tools)
    for attr in ("manager_llm", "planning_llm", "function_calling_llm", "chat_llm"):
        durable_llm(getattr(crew, attr, None))
    for task in crew.tasks:
        durable_tools(task.tools)
        task.callback = _task_callback(task.callback or crew.task_callback)
    _set(crew, _MARK, True)
    return crew

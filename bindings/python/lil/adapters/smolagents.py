"""smolagents agents that resume through lil (docs/adapters.md, smolagents).

``durable(agent)`` makes an agent's model calls, tool calls and memory steps
durable steps of the current lil workflow, and returns the agent:

    @lil.durable(goal_id="report")
    def report():
        agent = lil_smolagents.durable(ToolCallingAgent(tools=[...], model=model))
        return str(agent.run("..."))

Run again after a crash, the agent starts over and replays from the
journal: every model call the journal holds returns its recorded message
without reaching the model, every tool call its recorded result without
running the tool, so the agent rebuilds the same memory and goes on from
the step that was in flight.  That step's model call or tool call runs
again (at least once); a tool made with ``effect=True`` is never run again
silently (the workflow becomes uncertain, lil.resolve decides).

- A model call (``generate``, ``generate_stream``) is the step
  ``llm:<model id>:<digest>`` (lil._tool's rule), the digest over the input
  messages (without ``raw``), the stop sequences, the response format and
  the names of the tools offered.  The message is journaled without
  ``raw`` (the provider's response object); a stream is journaled as its
  list of deltas and replayed as the same deltas.
- A tool call is ``tool:<tool name>:<digest>`` over its arguments, for each
  tool of the agent but ``final_answer``, and for its managed agents'
  tools.  A CodeAgent's code calls its tools from a thread of its own:
  they take their steps in the workflow of the agent's last model call.
- Each finished action or planning step is journaled (``smolagents:step``:
  its number, model output, observations and error); a replay that rebuilds
  a different step raises NonDeterministicReplayError.

smolagents is imported when ``durable`` is called, never by ``import lil``.
"""

import functools

from .. import _tool
from .._core import current, step
from .._errors import NonDeterministicReplayError

_MARK = "_lil_durable"


def _plain(message):
    """A message as journaled and digested: a dict, without ``raw``."""
    from smolagents.models import ChatMessage, get_dict_from_nested_dataclasses

    if isinstance(message, ChatMessage):
        return get_dict_from_nested_dataclasses(message, ignore_key="raw")
    return message


def _request_key(messages, kwargs):
    tools = kwargs.get("tools_to_call_from") or []
    return ([_plain(m) for m in messages], kwargs.get("stop_sequences"),
            kwargs.get("response_format"), sorted(t.name for t in tools))


def _without_raw(message):
    message.raw = None
    return message


class _Seen:
    """The workflow the agent's last model call ran in: a CodeAgent runs
    its code, and so its tools, on a thread of its own, which does not see
    the workflow (a ContextVar); its tools bind this one."""

    workflow = None


def _wrap_model(model, seen):
    model._lil_seen = seen  # the agent that uses it now (a model may serve many)
    if getattr(model, _MARK, False):
        return
    name = getattr(model, "model_id", None) or type(model).__name__
    generate = model.generate

    @functools.wraps(generate)
    def durable_generate(messages, *args, **kwargs):
        def call():
            return _without_raw(generate(messages, *args, **kwargs))
        model._lil_seen.workflow = current()
        return _tool.call_once("llm", name, call, (), {}, key=_request_key(messages, kwargs))

    model.generate = durable_generate
    if hasattr(model, "generate_stream"):
        generate_stream = model.generate_stream

        @functools.wraps(generate_stream)
        def durable_generate_stream(messages, *args, **kwargs):
            def call():
                return list(generate_stream(messages, *args, **kwargs))
            model._lil_seen.workflow = current()
            yield from _tool.call_once("llm", name, call, (), {},
                                       key=_request_key(messages, kwargs))

        model.generate_stream = durable_generate_stream
    setattr(model, _MARK, True)


def _wrap_tool(tool, seen):
    tool._lil_seen = seen  # the agent that uses it now (a tool may serve many)
    if getattr(tool, _MARK, False):
        return
    forward = tool.forward

    @functools.wraps(forward)
    def durable_forward(*args, **kwargs):
        workflow = tool._lil_seen.workflow
        if current() is None and workflow is not None:
            with workflow.bind():
                return _tool.call_once("tool", tool.name, forward, args, kwargs)
        return _tool.call_once("tool", tool.name, forward, args, kwargs)

    tool.forward = durable_forward
    setattr(tool, _MARK, True)


def _step_summary(memory_step) -> dict:
    from smolagents.memory import PlanningStep

    if isinstance(memory_step, PlanningStep):
        return {"kind": "planning", "plan": memory_step.plan}
    error = memory_step.error
    return {"kind": "action", "number": memory_step.step_number,
            "model_output": _text(memory_step.model_output),
            "observations": memory_step.observations,
            "error": None if error is None else f"{type(error).__name__}: {error}",
            "final": bool(memory_step.is_final_answer)}


def _text(value):
    return value if value is None or isinstance(value, str) else repr(value)


def _journal_step(memory_step):
    if current() is None:
        return
    summary = _step_summary(memory_step)
    journaled = step("smolagents:step", lambda: summary)
    if journaled != summary:
        raise NonDeterministicReplayError(
            f"smolagents step {summary.get('number', '(planning)')} replayed differently "
            f"from the journal: journaled {journaled!r}, now {summary!r}")


def durable(agent):
    """Make ``agent`` (a smolagents MultiStepAgent: ToolCallingAgent,
    CodeAgent, ...) and its managed agents durable inside a lil workflow:
    model calls, tool calls and memory steps become steps (module doc).
    Idempotent; returns the agent.  Calls outside a workflow raise
    RuntimeError, as ``lil.step`` does."""
    from smolagents.memory import ActionStep, PlanningStep

    if getattr(agent, _MARK, False):
        return agent
    seen = _Seen()
    _wrap_model(agent.model, seen)
    for name, tool in agent.tools.items():
        if name != "final_answer":
            _wrap_tool(tool, seen)
    for managed in getattr(agent, "managed_agents", {}).values():
        durable(managed)
    agent.step_callbacks.register(ActionStep, _journal_step)
    agent.step_callbacks.register(PlanningStep, _journal_step)
    setattr(agent, _MARK, True)
    return agent

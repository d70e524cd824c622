"""AutoGen AgentChat teams that resume through lil (docs/adapters.md, AutoGen).

Three pieces, used inside a ``@lil.durable`` (async) workflow:

- ``durable_client(client)``: a ChatCompletionClient's ``create`` and
  ``create_stream`` become steps ``llm:<model>:<digest>`` (lil._tool's
  rule), the digest over the messages, the tools' names, ``tool_choice``,
  ``json_output`` and ``extra_create_args``.  The CreateResult is
  journaled (a stream as its chunks and result) and replayed without
  reaching the model.
- ``durable_tools(tools)``: AutoGen tool objects (FunctionTool, ...) and
  functions whose ``run`` is the step ``tool:<name>:<digest>`` of its
  arguments.  An ``async def`` decorated with ``lil.durable_tool`` is the
  same when given to ``AssistantAgent(tools=[...])`` (a plain ``def`` is
  not: AutoGen runs it on a thread that does not see the workflow).
- ``await run(team, task)``: one run of a team, the step
  ``autogen:run:<digest of the task>``.  When it ends, the team's
  ``save_state()`` and the run's messages are journaled; a replay of a
  finished run loads that state (``load_state``) and returns the same
  TaskResult without running the team.  A run that was in flight starts
  again from the state the previous run left, and its model calls and
  tool calls replay from the journal up to the one that was in flight,
  which runs again (at least once).

AutoGen is imported when these are called, never by ``import lil``.
"""

import functools

from .. import _tool

_MARK = "_lil_durable"


def _dump(obj):
    return obj.model_dump() if hasattr(obj, "model_dump") else obj


def _tool_name(tool):
    return getattr(tool, "name", None) or (tool.get("name") if isinstance(tool, dict) else None)


def _create_key(messages, kwargs):
    tools = sorted(str(_tool_name(t)) for t in kwargs.get("tools") or [])
    choice = kwargs.get("tool_choice", "auto")
    json_output = kwargs.get("json_output")
    if isinstance(json_output, type):
        json_output = f"{json_output.__module__}.{json_output.__qualname__}"
    return ([_dump(m) for m in messages], tools, _tool_name(choice) or choice, json_output,
            dict(kwargs.get("extra_create_args") or {}))


def _model_name(client):
    info = getattr(client, "_raw_config", None) or {}
    return info.get("model") if isinstance(info, dict) and info.get("model") else \
        type(client).__name__


def durable_client(client):
    """Make ``client`` (an autogen_core ChatCompletionClient) journal its
    completions as steps of the current workflow (module doc).  Idempotent;
    returns the client."""
    if getattr(client, _MARK, False):
        return client
    name = _model_name(client)
    create, create_stream = client.create, client.create_stream

    @functools.wraps(create)
    async def durable_create(messages, **kwargs):
        return await _tool.async_call_once("llm", name, create, (messages,), kwargs,
                                           key=_create_key(messages, kwargs))

    @functools.wraps(create_stream)
    async def durable_create_stream(messages, **kwargs):
        async def collect():
            return [chunk async for chunk in create_stream(messages, **kwargs)]
        chunks = await _tool.async_call_once("llm", name, collect, (), {},
                                             key=_create_key(messages, kwargs))
        for chunk in chunks:
            yield chunk

    client.create = durable_create
    client.create_stream = durable_create_stream
    setattr(client, _MARK, True)
    return client


def _wrap_tool(tool):
    if getattr(tool, _MARK, False):
        return tool
    if not hasattr(tool, "run_json"):  # a function: AutoGen's FunctionTool of it
        from autogen_core.tools import FunctionTool

        tool = FunctionTool(tool, description=(tool.__doc__ or tool.__name__).strip())
    run_tool = tool.run

    @functools.wraps(run_tool)
    async def durable_run(args, cancellation_token):
        async def call():
            return await run_tool(args, cancellation_token)
        return await _tool.async_call_once("tool", tool.name, call, (), {},
                                           key=(_dump(args),))

    tool.run = durable_run
    setattr(tool, _MARK, True)
    return tool


def durable_tools(tools):
    """Make each AutoGen tool object (autogen_core.tools.BaseTool) of
    ``tools`` run once per call identity (module doc); a function becomes
    a FunctionTool first.  Returns the list.  The step is taken in the event
    loop, where the workflow is current: AutoGen runs a plain function's
    FunctionTool on an executor thread, which does not see the workflow, so
    a function decorated with ``lil.durable_tool`` must be an ``async def``
    there, or go through here."""
    return [_wrap_tool(t) for t in tools]


def _encode_result(team_state, result) -> dict:
    return {"state": team_state, "stop_reason": result.stop_reason,
            "messages": list(result.messages)}


async def run(team, task=None, *, on_message=None):
    """Run ``team`` on ``task`` as the step ``autogen:run:<digest>`` of the
    current async workflow and return its TaskResult.  A run the journal
    holds loads the team's journaled state and returns the journaled
    result.  ``on_message(message)`` is called for each message and event
    the team yields while it runs (not on a replay)."""
    from autogen_agentchat.base import TaskResult

    ran = []

    async def run_team():
        ran.append(True)
        result = None
        async for item in team.run_stream(task=task):
            if isinstance(item, TaskResult):
                result = item
            elif on_message is not None:
                on_message(item)
        return _encode_result(await team.save_state(), result)

    task_key = [_dump(m) for m in task] if isinstance(task, (list, tuple)) else _dump(task)
    done = await _tool.async_call_once("autogen", "run", run_team, (), {}, key=(task_key,))
    if not ran:
        await team.load_state(done["state"])
    return TaskResult(messages=done["messages"], stop_reason=done["stop_reason"])

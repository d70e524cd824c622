"""test_adapter_autogen.py -- an AutoGen AgentChat team (the real packages,
bindings/python/requirements/autogen.txt: autogen-agentchat and
autogen-ext's OpenAIChatCompletionClient) made durable by
lil.adapters.autogen, talking to a fake OpenAI server, SIGKILLed and run
again (adapter_crash.py has the campaigns):

- killed after a message of the team: no model call and no tool call runs
  twice;
- killed inside a tool after its side effect: that call runs once more
  (at least once), nothing else does;
- killed at random moments: each kill repeats at most what was in flight;
- the result is right; a run after completion runs nothing, and a second
  team run on the same team continues from the journaled state.

Run as ``python test_adapter_autogen.py worker STORE SIDE URL`` it is the
worker.
"""

import asyncio
import json
import os
import sys
import unittest

from adapter_crash import (AdapterCrashCase, add_tool_body, adding_step, kill_point,
                           quiet_env)

MODEL_INFO = {"vision": False, "function_calling": True, "json_output": False,
              "family": "unknown", "structured_output": False}


def final_text(total):
    return f"total={total} TERMINATE"


def build_team(side, url):
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.conditions import TextMentionTermination
    from autogen_agentchat.teams import RoundRobinGroupChat
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    import lil
    from lil.adapters import autogen as lil_autogen

    def add(a: int, b: int) -> str:
        """Adds b to the running total a."""
        return add_tool_body(side, a, b)

    @lil.durable_tool
    async def double(a: int) -> str:
        """Doubles a (offered, never asked for: an async durable_tool)."""
        return str(2 * a)

    client = lil_autogen.durable_client(OpenAIChatCompletionClient(
        model="fake-model", base_url=url, api_key="sk-fake", model_info=MODEL_INFO,
        max_retries=0))
    adder = AssistantAgent("adder", model_client=client,
                           tools=lil_autogen.durable_tools([add]) + [double],
                           system_message="You add numbers with the add tool.")
    return RoundRobinGroupChat([adder], termination_condition=TextMentionTermination("TERMINATE"),
                               max_turns=12)


def worker(store, side, url):
    os.environ.update({k: v for k, v in quiet_env().items() if k not in os.environ})
    from autogen_agentchat.messages import BaseChatMessage

    import lil
    from lil.adapters import autogen as lil_autogen

    def on_message(message):
        if isinstance(message, BaseChatMessage):
            kill_point("step")

    @lil.durable(goal_id="autogen-adding", dir=store)
    async def run():
        team = build_team(side, url)
        result = await lil_autogen.run(team, "Add the numbers one to four, one at a time.",
                                       on_message=on_message)
        again = await lil_autogen.run(team, "Say the total again.")
        return [result.messages[-1].to_text(), result.stop_reason,
                again.messages[-1].to_text()]

    print("ready", flush=True)
    print("result " + json.dumps(asyncio.run(run())), flush=True)


class Crash(AdapterCrashCase):
    WORKER = __file__

    def script(self, request):
        texts = [str(m.get("content")) for m in request.get("messages", [])]
        if any("Say the total again" in t for t in texts):
            return "again: " + final_text(max(self.totals(request)))
        return adding_step(request, final_text)

    @staticmethod
    def totals(request):
        from adapter_crash import totals_seen
        return totals_seen(request)

    def test_run_once(self):
        rc, result, err = self.run_worker()
        self.assert_done_right(rc, result, err)
        self.assertEqual(result[0], "total=10 TERMINATE")
        self.assertEqual(result[2], "again: total=10 TERMINATE")
        self.assertEqual(len(self.llm_calls()), 6)
        self.assertEqual(self.repeats(self.llm_calls()), 0)

    def test_kill_after_message(self):
        self.check_kill_at_step(3)

    def test_kill_inside_tool(self):
        self.check_kill_in_tool(2)

    def test_random_kills(self):
        self.check_random_kills()


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "worker":
        worker(*sys.argv[2:])
    else:
        unittest.main()

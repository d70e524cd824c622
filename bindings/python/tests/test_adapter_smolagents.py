"""test_adapter_smolagents.py -- a smolagents ToolCallingAgent (the real
package, bindings/python/requirements/smolagents.txt) made durable by
lil.adapters.smolagents, talking to a fake OpenAI server through
smolagents' OpenAIServerModel, SIGKILLed and run again
(adapter_crash.py has the campaigns):

- killed after a finished step: no model call and no tool call runs twice;
- killed inside a tool after its side effect: that call runs once more
  (at least once), nothing else does;
- killed at random moments: each kill repeats at most what was in flight;
- the final answer is right, and a run after completion runs nothing;
- a CodeAgent's tools, called from its code's own thread, replay too;
- a replay that rebuilds another memory step raises
  NonDeterministicReplayError.

Run as ``python test_adapter_smolagents.py worker STORE SIDE URL`` it is
the worker.
"""

import json
import os
import sys
import unittest

from adapter_crash import (AdapterCrashCase, add_tool_body, adding_step, kill_point,
                           quiet_env)
from helpers import LilCase, lil


def final_answer(total):
    return {"tool_calls": [{"name": "final_answer", "arguments": {"answer": f"total={total}"}}]}


def worker(store, side, url):
    os.environ.update({k: v for k, v in quiet_env().items() if k not in os.environ})
    import smolagents
    from smolagents.memory import ActionStep
    import lil
    from lil.adapters import smolagents as lil_smolagents

    @smolagents.tool
    def add(a: int, b: int) -> str:
        """Adds two numbers and reports the running total.

        Args:
            a: the running total so far
            b: the number to add
        """
        return add_tool_body(side, a, b)

    @lil.durable(goal_id="smol-adding", dir=store)
    def run():
        model = smolagents.OpenAIServerModel(model_id="fake-model", api_base=url,
                                             api_key="sk-fake")
        agent = smolagents.ToolCallingAgent(
            tools=[add], model=model, max_steps=10, verbosity_level=0)
        lil_smolagents.durable(agent)
        agent.step_callbacks.register(ActionStep, lambda memory_step: kill_point("step"))
        return str(agent.run("Add the numbers one to four, one at a time."))

    print("ready", flush=True)
    print("result " + json.dumps(run()), flush=True)


class Crash(AdapterCrashCase):
    WORKER = __file__

    def script(self, request):
        return adding_step(request, final_answer)

    def test_run_once(self):
        rc, result, err = self.run_worker()
        self.assert_done_right(rc, result, err)
        self.assertEqual(len(self.llm_calls()), 5)
        self.assertEqual(self.repeats(self.llm_calls()), 0)

    def test_kill_after_step(self):
        self.check_kill_at_step(2)

    def test_kill_inside_tool(self):
        self.check_kill_in_tool(3)

    def test_random_kills(self):
        self.check_random_kills()


class CodeAgentReplay(LilCase):
    """A CodeAgent runs its code, and so its tools, on a thread of its own:
    the tools still take their steps in the workflow, and a second
    execution replays them (a Model subclass scripts the code)."""

    def test_code_tools_replay(self):
        import smolagents
        from smolagents.models import ChatMessage, MessageRole, Model

        from lil.adapters import smolagents as lil_smolagents

        @smolagents.tool
        def add(a: int, b: int) -> str:
            """Adds two numbers.

            Args:
                a: the first number
                b: the second number
            """
            self.record(f"add {a} {b}")
            return f"total={a + b}"

        class Scripted(Model):
            def generate(self, messages, stop_sequences=None, **kwargs):
                done = any("total=3" in str(m.content) for m in messages)
                code = "final_answer('three')" if done else "print(add(a=1, b=2))"
                return ChatMessage(role=MessageRole.ASSISTANT,
                                   content=f"Thought: add\n```py\n{code}\n```")

        model = Scripted()  # the model and the tool serve both executions' agents

        @lil.durable(goal_id="code-agent", dir=self.dir)
        def run(stop):
            agent = smolagents.CodeAgent(tools=[add], model=model, verbosity_level=0)
            answer = str(lil_smolagents.durable(agent).run("Add one and two."))
            if stop:
                raise RuntimeError("stopped before the end")
            return answer

        with self.assertRaises(RuntimeError):
            run(True)
        self.assertEqual(self.lines(), ["add 1 2"])
        self.assertEqual(run(False), "three")
        self.assertEqual(self.lines(), ["add 1 2"])


    def test_another_step_on_replay_is_refused(self):
        from smolagents.memory import ActionStep
        from smolagents.monitoring import Timing

        from lil.adapters import smolagents as lil_smolagents

        @lil.durable(goal_id="steps", dir=self.dir)
        def run(observations, stop):
            lil_smolagents._journal_step(ActionStep(step_number=1, timing=Timing(start_time=0.0),
                                                    model_output="go",
                                                    observations=observations))
            if stop:
                raise RuntimeError("stopped before the end")
            return observations

        with self.assertRaises(RuntimeError):
            run("total=3", True)
        with self.assertRaisesRegex(lil.NonDeterministicReplayError, "step 1 replayed"):
            run("total=4", False)
        self.assertEqual(run("total=3", False), "total=3")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "worker":
        worker(*sys.argv[2:])
    else:
        unittest.main()

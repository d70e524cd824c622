"""test_adapter_crewai.py -- a CrewAI crew (the real package,
bindings/python/requirements/crewai.txt) made durable by
lil.adapters.crewai, its agent's LLM talking to a fake OpenAI server,
SIGKILLed and run again (adapter_crash.py has the campaigns):

- killed after an agent step: no model call and no tool call runs twice;
- killed inside a tool after its side effect: that call runs once more
  (at least once), nothing else does;
- killed at random moments: each kill repeats at most what was in flight;
- both tasks' outputs are right; a run after completion runs nothing.

Run as ``python test_adapter_crewai.py worker STORE SIDE URL`` it is the
worker.
"""

import json
import os
import sys
import unittest

from adapter_crash import (AdapterCrashCase, add_tool_body, adding_step, kill_point,
                           quiet_env, totals_seen)


def final_text(total):
    return f"total={total}"


def worker(store, side, url):
    os.environ.update({k: v for k, v in quiet_env().items() if k not in os.environ})
    from crewai import LLM, Agent, Crew, Task
    from crewai.tools import tool

    import lil
    from lil.adapters import crewai as lil_crewai

    @tool("add")
    def add(a: int, b: int) -> str:
        """Adds b to the running total a."""
        return add_tool_body(side, a, b)

    @lil.durable(goal_id="crewai-adding", dir=store)
    def run():
        llm = LLM(model="openai/fake-model", base_url=url, api_key="sk-fake", max_retries=0)
        adder = Agent(role="Adder", goal="Add numbers with the add tool",
                      backstory="You add numbers.", llm=llm, tools=[add], verbose=False,
                      allow_delegation=False, cache=False, max_iter=10)
        adding = Task(description="Add the numbers one to four, one at a time.",
                      expected_output="The total", agent=adder)
        again = Task(description="Say the total again.", expected_output="The total",
                     agent=adder)
        crew = Crew(agents=[adder], tasks=[adding, again], verbose=False,
                    step_callback=lambda step: kill_point("step"))
        lil_crewai.durable(crew)
        out = crew.kickoff()
        return [t.raw for t in out.tasks_output]

    print("ready", flush=True)
    print("result " + json.dumps(run()), flush=True)


class Crash(AdapterCrashCase):
    WORKER = __file__
    RANDOM_KILLS = 2  # a CrewAI process takes seconds to start
    KILL_WINDOW = 3.0

    def script(self, request):
        texts = [str(m.get("content")) for m in request.get("messages", [])]
        if any("Say the total again" in t for t in texts):
            return "again: " + final_text(max(totals_seen(request, ("tool", "user",
                                                                    "assistant"))))
        return adding_step(request, final_text)

    def test_kill_after_step(self):
        # (no test of a run without a kill: a CrewAI process takes seconds)
        result = self.check_kill_at_step(2)
        self.assertEqual(result, ["total=10", "again: total=10"])

    def test_kill_inside_tool(self):
        self.check_kill_in_tool(3)

    def test_random_kills(self):
        self.check_random_kills()


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "worker":
        worker(*sys.argv[2:])
    else:
        unittest.main()

"""What the framework adapters' crash tests share.

A test module (test_adapter_<framework>.py) is also its own worker: run as
``python test_adapter_X.py worker STORE SIDE URL`` it builds the
framework's agent against the fake OpenAI server at URL, runs it in a lil
workflow with the store STORE, prints ``ready`` once its imports are done
and ``result <json>`` at the end.  Its tools append ``tool <name> <args>``
lines to SIDE (one per real call); the fake server appends one line per
model call to SIDE + ".llm".

``LIL_PY_ADAPTER_KILLS`` sets the number of random kills (the slow tests
python_adapter_<framework>_long: 40); ``LIL_PY_CRASH_SEED`` the seed.

``LIL_TEST_KILL_AT=<kind>:<n>`` makes the worker SIGKILL itself at the n-th
event of a kind (1-based, counted in that process): ``step`` when the
framework reports a finished step (after the adapter journaled it),
``tool`` inside a tool after its side effect (before its result is
journaled).

The scripted model ("the adding script"): while fewer than N_ADDS tool
results ``total=<t>`` are in the conversation, it asks for the tool
``add(a=<last total>, b=<k>)``; then it answers ``total=<sum of 1..N_ADDS>``
as the framework's final answer wants it.
"""

import json
import os
import random
import re
import signal
import subprocess
import sys

from fake_openai import FakeOpenAI, message_text
from helpers import HERE, LilCase, append_line, read_lines

N_ADDS = 4
EXPECTED_TOTAL = N_ADDS * (N_ADDS + 1) // 2
TOTAL = re.compile(r"total=(\d+)")


def totals_seen(request, roles=("tool", "user", "function")):
    """The distinct ``total=<t>`` values in the request's tool results, in
    increasing order (a framework may show a tool's result twice)."""
    totals = set()
    for m in request.get("messages", []):
        if m.get("role") in roles:
            totals.update(int(t) for t in TOTAL.findall(message_text(m)))
    return sorted(totals)


def adding_step(request, final):
    """The adding script's reply: the next add call, or final(total)."""
    totals = totals_seen(request)
    k = len(totals) + 1
    if k > N_ADDS:
        return final(totals[-1])
    return {"tool_calls": [{"name": "add", "arguments": {"a": totals[-1] if totals else 0,
                                                          "b": k}}]}


def add_tool_body(side, a, b):
    """The add tool's work: a counted side effect, then the new total."""
    total = int(a) + int(b)
    append_line(side, f"tool add {int(a)} {int(b)}")
    kill_point("tool")
    return f"total={total}"


_counts = {}


def kill_point(kind):
    """SIGKILL this process at the n-th ``kind`` event (LIL_TEST_KILL_AT)."""
    at = os.environ.get("LIL_TEST_KILL_AT", "")
    if not at.startswith(kind + ":"):
        return
    _counts[kind] = _counts.get(kind, 0) + 1
    if _counts[kind] == int(at.split(":", 1)[1]):
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)


def quiet_env():
    """Environment for a worker: no telemetry, no network but the fake."""
    env = dict(os.environ)
    env.update({"OTEL_SDK_DISABLED": "true", "CREWAI_DISABLE_TELEMETRY": "true",
                "CREWAI_DISABLE_TRACKING": "true", "CREWAI_TRACING_ENABLED": "false",
                "DO_NOT_TRACK": "1", "ANONYMIZED_TELEMETRY": "false",
                "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
                "LITELLM_TELEMETRY": "False", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                "OPENAI_API_KEY": "sk-fake", "NO_PROXY": "127.0.0.1,localhost",
                "no_proxy": "127.0.0.1,localhost"})
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(HERE), HERE,
                                         env.get("PYTHONPATH", "")])
    return env


def script_of(module_file):
    return os.path.join(HERE, os.path.basename(module_file))


class AdapterCrashCase(LilCase):
    """A fake model for each test; workers run test module ``WORKER``."""

    WORKER = None     # the test module's file
    DELAY = 0.02      # seconds the fake model takes to answer
    RANDOM_KILLS = 6  # kills of check_random_kills ($LIL_PY_ADAPTER_KILLS overrides)
    KILL_WINDOW = 1.2  # a random kill comes within this many seconds of "ready"

    def script(self, request):
        raise NotImplementedError

    def setUp(self):
        super().setUp()
        self.fake = FakeOpenAI(self.script, self.side + ".llm", delay=self.DELAY)
        self.rnd = random.Random(int(os.environ.get("LIL_PY_CRASH_SEED", "20240601")))
        self.random_kills = int(os.environ.get("LIL_PY_ADAPTER_KILLS", self.RANDOM_KILLS))

    def tearDown(self):
        self.fake.close()
        super().tearDown()

    def start(self, kill_at=None):
        env = quiet_env()
        env.pop("LIL_TEST_KILL_AT", None)
        if kill_at:
            env["LIL_TEST_KILL_AT"] = kill_at
        return subprocess.Popen(
            [sys.executable, script_of(self.WORKER), "worker", self.dir, self.side,
             self.fake.url], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, cwd=self.tmp)

    def run_worker(self, kill_at=None):
        """Run a worker to its end: (returncode, result or None, stderr)."""
        p = self.start(kill_at)
        out, err = p.communicate(timeout=240)
        return p.returncode, self._result(out), err

    @staticmethod
    def _result(out):
        for line in out.splitlines():
            if line.startswith("result "):
                return json.loads(line[len("result "):])
        return None

    def run_killed_at_random(self):
        """Start a worker and SIGKILL it at a random moment after it is ready;
        (killed, result): result when it finished first."""
        p = self.start()
        line = p.stdout.readline()
        self.assertEqual(line.strip(), "ready", p.stderr.read() if not line else line)
        try:
            out, err = p.communicate(timeout=self.rnd.uniform(0.0, self.KILL_WINDOW))
            self.assertEqual(p.returncode, 0, err)
            return False, self._result(out)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            return True, None

    # ---- what the logs say ---------------------------------------------------------

    def llm_calls(self):
        return [line.split()[0] for line in read_lines(self.side + ".llm")]

    def tool_calls(self):
        return [line for line in read_lines(self.side) if line.startswith("tool ")]

    def repeats(self, calls):
        """How many calls repeat an earlier one."""
        return len(calls) - len(set(calls))

    def assert_done_right(self, rc, result, err):
        self.assertEqual(rc, 0, err[-3000:])
        self.assertIsNotNone(result, err[-3000:])
        self.assertIn(f"total={EXPECTED_TOTAL}", str(result))
        self.assertEqual(len(set(self.tool_calls())), N_ADDS)

    # ---- the campaigns ---------------------------------------------------------------

    def check_kill_at_step(self, n):
        """Killed after the n-th finished step: nothing runs twice."""
        rc, _, err = self.run_worker(kill_at=f"step:{n}")
        self.assertEqual(rc, -signal.SIGKILL, err[-3000:])
        before = len(self.llm_calls())
        self.assertGreater(before, 0)
        rc, result, err = self.run_worker()
        self.assert_done_right(rc, result, err)
        self.assertEqual(self.repeats(self.llm_calls()), 0, self.llm_calls())
        self.assertEqual(self.repeats(self.tool_calls()), 0, self.tool_calls())
        return result

    def check_kill_in_tool(self, n):
        """Killed inside the n-th tool call, after its side effect: that call
        runs again (at least once), no other one and no model call does."""
        rc, _, err = self.run_worker(kill_at=f"tool:{n}")
        self.assertEqual(rc, -signal.SIGKILL, err[-3000:])
        self.assertEqual(len(self.tool_calls()), n)
        rc, result, err = self.run_worker()
        self.assert_done_right(rc, result, err)
        calls = self.tool_calls()
        self.assertEqual(self.repeats(calls), 1, calls)
        self.assertEqual(calls.count(calls[n - 1]), 2, calls)
        self.assertEqual(self.repeats(self.llm_calls()), 0, self.llm_calls())

    def check_random_kills(self):
        """Rounds of a worker killed at random moments until it finishes,
        each round with a new store and new logs, until random_kills kills:
        each kill repeats at most the one model call and the one tool call
        in flight, the result is right, and a run after completion runs
        nothing."""
        kills = rounds = 0
        while kills < self.random_kills:
            rounds += 1
            self.new_round(rounds)
            kills += self.random_round(self.random_kills - kills)
        print(f"{kills} random kills in {rounds} rounds", file=sys.stderr)
        return kills

    def new_round(self, n):
        self.dir = os.path.join(self.tmp, f"store-{n}")
        self.side = os.path.join(self.tmp, f"side-{n}.log")
        self.fake.log_path = self.side + ".llm"

    def random_round(self, at_most):
        """One round: at most at_most kills, then a run to the end."""
        kills, result = 0, None
        while result is None:
            killed, result = self.run_killed_at_random()
            kills += killed
            if kills >= at_most and result is None:
                rc, result, err = self.run_worker()
                self.assert_done_right(rc, result, err)
        self.assertIn(f"total={EXPECTED_TOTAL}", str(result))
        self.assertLessEqual(self.repeats(self.llm_calls()), kills, self.llm_calls())
        self.assertLessEqual(self.repeats(self.tool_calls()), kills, self.tool_calls())
        self.assertEqual(len(set(self.tool_calls())), N_ADDS)
        llm, tools = len(self.llm_calls()), len(self.tool_calls())
        rc, again, err = self.run_worker()
        self.assertEqual((rc, again), (0, result), err[-3000:])
        self.assertEqual((len(self.llm_calls()), len(self.tool_calls())), (llm, tools))
        return kills

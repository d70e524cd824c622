#!/usr/bin/env python3
"""t_agent.py -- agent steps with the llm harness through `lil run`, against
the OpenAI-compatible server of the tests (tests/http/llm_server.py on
127.0.0.1): the model's fenced JSON saved into the state, the provider's
usage metering the run until a usd budget trips (1M + 1M tokens of
gpt-4o-mini cost $0.75 a call), the API key in no output and no journal
byte, and a loop whose LLM is not configured failing before any call."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, test  # noqa: E402

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "http",
                      "llm_server.py")
KEY = "sk-e2e-secret-9f8e7d6c5b4a"

SPEC = """
    loopspec: "0.1"
    id: ask
    pattern: react
    state:
      vars:
        answer: {type: int, init: 0}
        n: {type: int, init: 0}
    body:
      - id: think
        kind: agent
        harness: llm
        prompt: "answer, round ${state.n}"
        save: {answer: "$.answer"}
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 5}"}
    caps:
      max_iterations: 10
      on_cap_exceeded: fail
      budget: {usd: 1.0}
"""

_DROP = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY",
         "OPENROUTER_API_KEY", "AI_GATEWAY_API_KEY", "http_proxy", "HTTP_PROXY",
         "all_proxy", "ALL_PROXY")


def llm_server(t):
    p = subprocess.Popen([sys.executable, SERVER], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
    port = int(p.stdout.readline())
    t.llm = p
    return "http://127.0.0.1:%d" % port


def clean_env(t):
    for name in list(t.env):
        if name in _DROP or name.startswith(("LIL_LLM_", "LOOPY_LLM_", "LIL_AGENT_",
                                             "LOOPY_AGENT_")):
            del t.env[name]


def stop(t):
    t.llm.stdin.close()
    t.llm.wait(timeout=10)


@test
def usd_budget_trips(t):
    clean_env(t)
    url = llm_server(t)
    try:
        env = {"LIL_LLM_BASE_URL": url + "/fenced/v1", "LIL_LLM_API_KEY": KEY,
               "LOOPY_LLM_MODEL": "openai/gpt-4o-mini", "LIL_LLM_STREAM": "on"}
        t.spec(SPEC)
        res = expect(t.run("--run-id", "r1", env=env), 1, status="failed",
                     reason="usd-budget", iteration=1)
        eq(res["state"].get("answer"), 42, "the model's answer, fence stripped")
        log = t.lil("log", "r1", "--jsonl").out
        eq(log.count('\\"usd\\":0.75,\\"model'), 2,
           "two calls of $0.75 metered: the second passes the $1 budget")
        for out in (t.last.out, t.last.err, log, t.lil("inspect", "r1", "--json").out):
            check(KEY not in out, "the key is in an output")
        check(KEY.encode() not in t.journal_bytes("r1"), "the key is in the journal")
    finally:
        stop(t)


@test
def not_configured(t):
    clean_env(t)
    t.spec(SPEC)
    res = expect(t.run("--run-id", "r2"), 1, status="failed")
    check("needs an LLM configured" in (res.get("reason") or "") + t.last.err,
          "the reason says what to set")


RAW_CONTROLS = ("\x1b", "\x07", "\r", "\u0085", "\u202e")


@test
def server_text_cannot_steer_the_terminal(t):
    """A provider's error body with ESC, BEL, CR, a C1 control and a bidi
    override reaches the failure reason; `lil run` prints it escaped, in
    text and in --json (which then still parses to the same characters)."""
    clean_env(t)
    url = llm_server(t)
    try:
        env = {"LIL_LLM_BASE_URL": url + "/ansi/v1", "LIL_LLM_API_KEY": KEY,
               "LOOPY_LLM_MODEL": "openai/gpt-4o-mini"}
        t.spec(SPEC)
        t.run("--run-id", "r3", env=env)
        eq(t.last.rc, 1, "exit status of a failed run")
        text = t.lil("run", t.path("loop.yaml"), "--run-id", "r3", env=env)
        for c in RAW_CONTROLS:
            check(c not in text.out and c not in text.err,
                  "no raw %r in what lil run prints" % c)
        check("\\u001b[31mred" in text.out + text.err, "ESC shown escaped")
        check("\\u202e" in text.out + text.err, "the bidi override shown escaped")
        res = expect(t.run("--run-id", "r3", env=env), 1, status="failed")
        check("\u202e evil" in res.get("reason", ""),
              "--json still carries the reason's own characters")
        check("\u202e" not in t.last.out, "the raw override is not in the JSON text")
        ls = t.lil("ls")
        for c in RAW_CONTROLS:
            check(c not in ls.out, "no raw %r in lil ls" % c)
    finally:
        stop(t)


if __name__ == "__main__":
    loopt.main()

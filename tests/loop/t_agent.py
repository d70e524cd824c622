#!/usr/bin/env python3
"""t_agent.py -- agent steps with the llm harness through `lil run`, against
the OpenAI-compatible server of the tests (tests/http/llm_server.py on
127.0.0.1): the model's fenced JSON saved into the state, the provider's
usage metering the run until a usd budget trips (1M + 1M tokens of
gpt-4o-mini cost $0.75 a call), the API key in no output and no journal
byte, a loop whose LLM is not configured failing before any call, and the
result `save` reads carrying the reported usage ({"tokens", "usd"}), also
when it is replayed; a streamed call's running tokens in the progress
lines (plain and json), not in a call that is not streamed."""

import json
import os
import re
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


STREAM_SPEC = """
    loopspec: "0.1"
    id: long
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: write
        kind: agent
        harness: llm
        prompt: "write a long answer"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 1}"}
    caps: {max_iterations: 3, budget: {tokens: 100000}}
"""


@test
def streamed_call_shows_its_running_tokens(t):
    clean_env(t)
    url = llm_server(t)
    try:
        env = {"LIL_LLM_BASE_URL": url + "/big/2000/v1", "LIL_LLM_API_KEY": KEY,
               "LIL_LLM_MODEL": "gpt-4o-mini", "LIL_LLM_STREAM": "on"}
        t.spec(STREAM_SPEC)
        res = t.lil("run", t.spec_path, "--run-id", "p1", "--progress", "plain", env=env)
        eq(res.rc, 0, "the run completes: %r" % res.err)
        got = [int(n) for n in re.findall(
            r"iteration 0: agent write streaming: (\d+) tokens so far", res.err)]
        check(len(got) >= 4, "running tokens told as the reply came: %r" % res.err)
        check(all(b - a >= 100 for a, b in zip(got, got[1:])),
              "each at least 100 more than the last: %r" % got)
        check(got[-1] > 2000 // 4 - 100, "up to the reply's 2000 bytes: %r" % got)
        check(re.search(r"iteration 1 starts  tokens 5  \$0\.0*[1-9]\d?\n", res.err),
              "the spend of 5 tokens ($0.00000165) shown non-zero: %r" % res.err)
        res = t.lil("run", t.spec_path, "--run-id", "p2", "--progress", "json", env=env)
        eq(res.rc, 0, "the run completes (json progress)")
        events = [json.loads(line) for line in res.err.splitlines()
                  if line.startswith("{")]
        toks = [e for e in events if e["event"] == "tokens"]
        check(len(toks) >= 4, "tokens events: %r" % events)
        eq({(e["effect"], e["step"], e["iteration"]) for e in toks},
           {("agent", "write", 0)}, "the call they belong to")
        check(all(e["tokens"] == 0 for e in toks),
              "the meters count the call only once it is journaled")
        eq([e["call_tokens"] for e in toks][:1], [got[0]], "the same first count")
        env["LIL_LLM_STREAM"] = "off"
        res = t.lil("run", t.spec_path, "--run-id", "p3", "--progress", "plain", env=env)
        eq(res.rc, 0, "the run completes (not streamed)")
        check("streaming" not in res.err, "no running tokens without a stream")
    finally:
        stop(t)


@test
def not_configured(t):
    clean_env(t)
    t.spec(SPEC)
    # refused before the run exists: nothing journaled, the message says what
    # to set (docs/loops.md, "Effects")
    res = t.run("--run-id", "r2")
    eq(res.rc, 1, "exit status of a run whose harness is not configured")
    eq(res.out, "", "no result: the run was never created")
    check("needs an LLM configured" in res.err and "nothing journaled" in res.err,
          "the message says what to set: %r" % res.err)
    check(not t.has_run("r2"), "the run does not exist")


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


# What `save` reads of an agent result: the reply object plus the usage the
# provider reported, {"tokens", "usd"}; a breakpoint after the call makes
# the first run pause, so the approval replays the journaled result.
USAGE_SPEC = """
    loopspec: "0.1"
    id: metered
    pattern: react
    state:
      vars:
        whole: {type: json}
        t: {type: json}
        u: {type: json}
    body:
      - id: think
        kind: agent
        harness: llm
        prompt: "answer"
        save: {whole: "$", t: "$.usage.tokens", u: "$.usage.usd"}
      - id: look
        kind: breakpoint
        ask: "seen ${state.t} tokens?"
    terminate: {signal: state-predicate, until: "${iteration >= 1}"}
    caps: {max_iterations: 3}
"""


def usage_seen(t, scenario, model, run_id):
    """The state after one call of scenario, paused then approved."""
    env = {"LIL_LLM_BASE_URL": t.llm_url + "/%s/v1" % scenario, "LIL_LLM_API_KEY": KEY,
           "LOOPY_LLM_MODEL": model}
    t.spec(USAGE_SPEC)
    first = expect(t.run("--run-id", run_id, env=env), 3, status="paused")
    eq(first["state"], {}, "the paused iteration committed nothing")
    res = expect(t.lil("--dir", t.store, "approve", t.spec_path, "--run-id", run_id,
                       "--reason", "ok", "--json", env=env), 0, status="completed")
    recs = t.log(run_id)
    eq(loopt.intents(recs), ["0.0"], "one call, replayed after the approval")
    journaled = loopt.outcome(recs, "0.0").p["result"]
    eq(journaled, res["state"].get("whole"), "the result as journaled is what save read")
    return res["state"]


@test
def usage_in_the_result(t):
    clean_env(t)
    t.llm_url = llm_server(t)
    try:
        # the provider's cost
        state = usage_seen(t, "cost", "openai/gpt-4o-mini", "r1")
        eq(state, {"whole": {"ok": True, "usage": {"tokens": 15, "usd": 0.0123}},
                   "t": 15, "u": 0.0123}, "state")
        # priced from the table: 10^6 + 10^6 tokens of gpt-4o-mini; the
        # model's own usage key is replaced
        state = usage_seen(t, "fenced", "gpt-4o-mini", "r2")
        eq(state, {"whole": {"answer": 42, "usage": {"tokens": 2000000, "usd": 0.75}},
                   "t": 2000000, "u": 0.75}, "state")
        # a model without a price: tokens only
        state = usage_seen(t, "text", "m", "r3")
        eq(state, {"whole": {"result": "hello there", "usage": {"tokens": 5}}, "t": 5},
           "state")
        # no usage reported: none in the result (lil's estimate meters the
        # run only)
        state = usage_seen(t, "nousage", "gpt-4o-mini", "r4")
        eq(state, {"whole": {"result": "four score and seven"}}, "state")
        usage = loopt.outcome(t.log("r4"), "0.0").p.get("usage") or {}
        check(usage.get("estimated") is True, "the outcome's usage is estimated: %r" % usage)
    finally:
        stop(t)


if __name__ == "__main__":
    loopt.main()

#!/usr/bin/env python3
"""t_agentview.py -- what `lil ls` and `lil inspect` show of agent costs,
on runs of the real harnesses: the llm harness against the
OpenAI-compatible server of the tests (tests/http/llm_server.py on
127.0.0.1) and coding-agent CLIs faked by shell scripts.

Every figure is computed here from what the fakes report and compared
exactly, in text and in --json: per call (tokens, usd or "unpriced", the
model, "~" and "(estimated)" for an estimate), per iteration (the sum, its
marks), per run (the totals, and what is left of the token, usd and
wallclock budgets).  The cases: a provider that reports its cost; a
provider that reports nothing (each call counted at its reservation,
priced from the table, and said why); a model without a price; claude-code
reporting tokens and cost and codex reporting nothing (at its reservation,
unpriced) in the same iteration.  The
provider that reports its cost passes the price table's worst case of a
call: that call is shown marked OVERRAN with its reservation.  The API key
is in no output.
"""

import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, test  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "..", "http", "llm_server.py")
KEY = "sk-view-secret-0a9b8c7d6e"
SYSTEM = ("You are executing one step of an agent loop. If the step needs a "
          "structured result, reply with a single JSON object; otherwise reply "
          "with plain text.")

SPEC = """
    loopspec: "0.1"
    id: view
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: think
        kind: agent
        harness: @FIRST@
        prompt: "think @N@"
        on_done: {incr: n}
      - id: check
        kind: agent
        harness: @SECOND@
        prompt: "check it"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 4}"}
    caps:
      max_iterations: 10
      budget: {tokens: 100000, usd: 2.5, wallclock: 1h}
"""

_DROP = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY",
         "OPENROUTER_API_KEY", "AI_GATEWAY_API_KEY", "http_proxy", "HTTP_PROXY",
         "all_proxy", "ALL_PROXY")

FAKE = """#!/bin/sh
cat "$(dirname "$0")/%s"
"""

CLAUDE_REPLY = ('{"type":"result","result":"{\\"ok\\":true}",'
                '"usage":{"input_tokens":120,"output_tokens":30},"total_cost_usd":0.02,'
                '"modelUsage":{"claude-sonnet-4-5":{}}}')
CODEX_REPLY = "all good here"  # 13 bytes


def clean_env(t):
    for name in list(t.env):
        if name in _DROP or name.startswith(("LIL_LLM_", "LOOPY_LLM_", "LIL_AGENT_",
                                             "LOOPY_AGENT_")):
            del t.env[name]


def with_server(fn):
    """Run fn(t, url) with the llm server up; stop it after."""
    def run(t):
        clean_env(t)
        p = subprocess.Popen([sys.executable, SERVER], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
        try:
            fn(t, "http://127.0.0.1:%d" % int(p.stdout.readline()))
        finally:
            p.stdin.close()
            p.wait(timeout=10)
    run.__name__ = fn.__name__
    return run


def estimate(prompt_bytes, output_bytes):
    """lil's estimate: ceil(bytes / 4) tokens in and out."""
    return (prompt_bytes + 3) // 4, (output_bytes + 3) // 4


def usd_text(usd):
    """As lil prints it: six decimals under a cent."""
    return ("$%.6f" if 0 < usd < 0.01 else "$%.4f") % usd


def line_of(text, prefix):
    for line in text.splitlines():
        if line.startswith(prefix):
            return line
    return ""


def run_ok(t, env, run_id):
    expect(t.run("--run-id", run_id, "--sync", "off", env=env), 0, status="completed",
           iteration=2)


def inspect(t, run_id):
    res = t.lil("inspect", run_id)
    eq(res.rc, 0, "inspect exit status")
    js = t.lil("inspect", run_id, "--json")
    eq(js.rc, 0, "inspect --json exit status")
    return res.out, js.json["loop"]


def ls_line(t, run_id):
    res = t.lil("ls")
    eq(res.rc, 0, "ls exit status")
    return line_of(res.out, run_id + " ")


def ls_loop(t, run_id):
    res = t.lil("ls", "--json")
    return [r for r in res.json["runs"] if r["id"] == run_id][0]["loop"]


def close(a, b, what):
    check(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), "%s: %r != %r" % (what, a, b))


def check_budget(loop, tokens, usd):
    b = loop["budget"]
    eq(b["tokens"], {"limit": 100000, "used": tokens, "reserved": 0,
                     "left": 100000 - tokens}, "tokens budget")
    eq(b["usd"]["reserved"], 0, "usd reserved")
    eq(b["usd"]["limit"], 2.5, "usd limit")
    close(b["usd"]["used"], usd, "usd used")
    close(b["usd"]["left"], 2.5 - usd, "usd left")
    w = b["wallclock_ms"]
    eq(w["limit"], 3600000, "wallclock limit")
    check(0 <= w["used"] < 60000, "wallclock used %r" % w["used"])
    eq(w["left"], w["limit"] - w["used"], "wallclock left")


@test
@with_server
def provider_reports_cost(t, url):
    """10 + 5 tokens and $0.0123 a call (the provider's cost)."""
    env = {"LIL_LLM_BASE_URL": url + "/cost/v1", "LIL_LLM_API_KEY": KEY}
    t.spec(SPEC, FIRST="llm", SECOND="llm", N="${state.n}")
    run_ok(t, env, "cost")
    text, loop = inspect(t, "cost")
    eq(line_of(text, "usage "), "usage         60 tokens, $0.0492 in 4 calls", "run")
    budget = line_of(text, "budget ")
    check(budget.startswith("budget        tokens 60/100000 (99940 left)  usd "
                            "0.0492/2.5000 (2.4508 left)  wallclock ") and
          budget.endswith(" left)"), "budget: " + budget)
    eq(line_of(text, "  iteration 1"),
       "  iteration 1  usage: 30 tokens, $0.0246 in 2 calls", "iteration")
    # the provider's cost passes the price table's worst case ("check it":
    # 16 + 149 + 8 tokens at $0.15/M and 2000 at $0.60/M): marked
    worst = 16 + len(SYSTEM) + len("check it")
    check(line_of(text, "    1.1 ").endswith(
        "  15 tokens, $0.0123 (gpt-4o-mini); OVERRAN its reservation of %d tokens, %s"
        % (worst + 2000, usd_text((worst * 0.15 + 2000 * 0.60) / 1e6))),
        "call: " + line_of(text, "    1.1 "))
    eq(loop["usage"], {"calls": 4, "tokens": 60, "usd": loop["usage"]["usd"],
                       "estimated": False, "estimated_calls": 0, "unpriced_calls": 0,
                       "at_reservation_calls": 0},
       "usage")
    close(loop["usage"]["usd"], 0.0492, "usd")
    check_budget(loop, 60, 0.0492)
    call = loop["history"][1]["effects"][1]
    eq((call["tokens"], call["usd"], call["estimated"], call["model"], call["overran"]),
       (15, 0.0123, False, "gpt-4o-mini", True), "one call")
    eq((call["reserved"]["attempts"], call["reserved"]["tokens"]),
       (1, len(SYSTEM) + len("check it") + 16 + 2000), "its reservation")
    check("60 tok $0.0492" in ls_line(t, "cost"), "ls: " + ls_line(t, "cost"))
    check("left: 99940 tok $2.4508 " in ls_line(t, "cost"), "ls: " + ls_line(t, "cost"))
    for out in (text, t.lil("ls").out, t.lil("inspect", "cost", "--json").out,
                t.lil("log", "cost").out):
        check(KEY not in out, "the key is in an output")


@test
@with_server
def no_usage_counts_at_reservation(t, url):
    """Nothing reported: against a budget each call counts at its
    reservation (its worst case: the prompt's bytes + 16 tokens of framing
    + the 2000 it may write, priced from the table -- gpt-4o-mini: $0.15
    in, $0.60 out per million), and inspect says so, with why."""
    env = {"LIL_LLM_BASE_URL": url + "/nousage/v1"}
    t.spec(SPEC, FIRST="llm", SECOND="llm", N="now")
    run_ok(t, env, "est")
    per = []
    for prompt in ("think now", "check it"):
        worst = 16 + len(SYSTEM) + len(prompt)
        per.append((worst + 2000, (worst * 0.15 + 2000 * 0.60) / 1e6))
    tokens = 2 * sum(p[0] for p in per)
    usd = 2 * sum(p[1] for p in per)
    text, loop = inspect(t, "est")
    eq(line_of(text, "usage "), "usage         %d tokens, %s in 4 calls (%d tokens, %s of "
       "it counted at reservations)" % (tokens, usd_text(usd), tokens, usd_text(usd)),
       "run")
    check(line_of(text, "budget ").startswith(
        "budget        tokens %d/100000 (%d left)" % (tokens, 100000 - tokens)),
        "budget: " + line_of(text, "budget "))
    eq(line_of(text, "  iteration 0"), "  iteration 0  usage: %d tokens, "
       "%s in 2 calls" % (per[0][0] + per[1][0], usd_text(per[0][1] + per[1][1])),
       "iteration")
    check(line_of(text, "    0.0 ").endswith(
        "  counted at its reservation: %d tokens, %s (gpt-4o-mini), usage not counted: "
        "no usage reported" % (per[0][0], usd_text(per[0][1]))),
        "call: " + line_of(text, "    0.0 "))
    eq((loop["usage"]["tokens"], loop["usage"]["estimated"],
        loop["usage"]["estimated_calls"], loop["usage"]["at_reservation_calls"]),
       (tokens, False, 0, 4), "usage: the reservations, no estimate")
    check_budget(loop, tokens, usd)
    call = loop["history"][0]["effects"][0]
    eq((call["at_reservation"], call["unreported"]), (True, "no usage reported"),
       "the call counted at its reservation, and why")
    check(("%d tok %s" % (tokens, usd_text(usd))) in ls_line(t, "est"),
          "ls: " + ls_line(t, "est"))


@test
@with_server
def model_without_price(t, url):
    env = {"LIL_LLM_BASE_URL": url + "/text/v1", "LIL_LLM_MODEL": "my-local-model"}
    t.spec(SPEC, FIRST="llm", SECOND="llm", N="x")
    run_ok(t, env, "free")
    text, loop = inspect(t, "free")
    eq(line_of(text, "usage "), "usage         20 tokens, unpriced in 4 calls", "run")
    check(line_of(text, "    0.1 ").endswith("  5 tokens, unpriced (my-local-model)"),
          "call: " + line_of(text, "    0.1 "))
    check("(2.5000 left) + unpriced calls" in line_of(text, "budget "),
          "budget: " + line_of(text, "budget "))
    eq(loop["history"][0]["effects"][1]["usd"], None, "usd of an unpriced call")
    eq(loop["usage"]["unpriced_calls"], 4, "unpriced calls")
    check("20 tok $?" in ls_line(t, "free"), "ls: " + ls_line(t, "free"))


@test
def cli_harnesses(t):
    """claude-code reports 150 tokens and $0.02; codex nothing (counted at
    its reservation; no model: unpriced)."""
    clean_env(t)
    env = {}
    for name, reply, var in (("claude", CLAUDE_REPLY, "LIL_CLAUDE_CODE_BIN"),
                             ("codex", CODEX_REPLY, "LIL_CODEX_BIN")):
        t.write(name + ".reply", reply)
        path = t.write("fake-" + name, FAKE % (name + ".reply"))
        os.chmod(path, 0o755)
        env[var] = path
    t.spec(SPEC, FIRST="claude-code", SECOND="codex", N="x")
    run_ok(t, env, "clis")
    # codex reports nothing: at its reservation, the prompt's bytes + 2000
    est = len("check it") + 2000
    text, loop = inspect(t, "clis")
    eq(line_of(text, "usage "), "usage         %d tokens, $0.0400 + unpriced (2 of 4 "
       "calls) in 4 calls (%d tokens, $0.0000 of it counted at reservations)"
       % (300 + 2 * est, 2 * est), "run")
    eq(line_of(text, "  iteration 1"), "  iteration 1  usage: %d tokens, $0.0200 + "
       "unpriced (1 of 2 calls) in 2 calls" % (150 + est), "iteration")
    check(line_of(text, "    1.0 ").endswith("  150 tokens, $0.0200 (claude-sonnet-4-5)"),
          "call: " + line_of(text, "    1.0 "))
    check(line_of(text, "    1.1 ").endswith(
        "  counted at its reservation: %d tokens, usage not counted: no usage reported"
        % est), "call: " + line_of(text, "    1.1 "))
    eq((loop["usage"]["calls"], loop["usage"]["estimated_calls"],
        loop["usage"]["unpriced_calls"], loop["usage"]["at_reservation_calls"]),
       (4, 0, 2, 2), "usage counts")
    check_budget(loop, 300 + 2 * est, 0.04)
    check(("%d tok $0.0400+?" % (300 + 2 * est)) in ls_line(t, "clis"),
          "ls: " + ls_line(t, "clis"))


if __name__ == "__main__":
    loopt.main()

#!/usr/bin/env python3
"""t_agent_cli.py -- agent steps with the coding-agent CLI harnesses
through `lil run` (docs/loops.md, "Agent harnesses"), against fake CLIs
written by the test
(shell scripts selected with LIL_<NAME>_BIN or LOOPY_<NAME>_BIN).

A claude-code fake that reports 15 tokens and $0.01 a call, with
LIL_AGENT_MAX_TOKENS 5 (each call reserves its 18-byte prompt + 5 = 23
tokens), meets a token budget of 40 at the third call: 30 are spent, the
third's worst case would pass the budget, so it does not start -- with
on_cap_exceeded fail the run fails (token-budget), with breakpoint it
pauses; `lil log` shows each call's usage in its effect outcome, with the
model the envelope names.  A codex fake reports nothing: its usage is
estimated and marked so, and the estimate alone moves the token budget.  A harness whose binary is not there
fails the run before any intent is journaled, naming the variable to set.
The CLI gets a scrubbed environment (not lil's whole one, as in the
reference): a variable reaches it only when --env-allow names it (or it is
its harness's own provider key), and a secret it echoes back is redacted in
the journal like any other effect result.  The result `save` reads carries
the usage the CLI reported ({"tokens", "usd"}, only the parts reported),
never the model's own or an estimate.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, named, test  # noqa: E402

FAKE = """#!/bin/sh
d=$(dirname "$0")
for a in "$@"; do printf '[%s]' "$a"; done >> "$d/argv.log"
echo >> "$d/argv.log"
cat "$d/reply"
"""

CLAUDE_REPLY = ('{"type":"result","result":"{\\"done\\":false}",'
                '"usage":{"input_tokens":10,"output_tokens":5},"total_cost_usd":0.01,'
                '"modelUsage":{"claude-sonnet-4-5":{}}}')

SPEC = """
    loopspec: "0.1"
    id: agentic
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: think
        kind: agent
        harness: @HARNESS@
        prompt: "think about step ${state.n}"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 10}"}
    caps: @CAPS@
"""


def fake(t, reply):
    path = t.write("fake-cli", FAKE)
    os.chmod(path, 0o755)
    t.write("reply", reply)
    return path


def calls(t):
    try:
        with open(t.path("argv.log"), encoding="utf-8") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def usages(recs):
    return [r.p.get("usage") for r in recs if r.is_effect_outcome() and r.p]


@test
def claude_code_usage_trips_token_budget(t):
    env = {"LIL_CLAUDE_CODE_BIN": fake(t, CLAUDE_REPLY), "LIL_AGENT_MAX_TOKENS": "5"}
    t.spec(SPEC, HARNESS="claude-code",
           CAPS="{max_iterations: 10, on_cap_exceeded: fail, budget: {tokens: 40}}")
    res = expect(t.run(env=env), 1, status="failed", reason="token-budget")
    eq(res["meters"]["tokens"], {"used": 30, "base": 0, "reserved": 0, "budget": 40},
       "spent when the third call was refused")
    eq(calls(t), ["[-p][--output-format][json][--][think about step %d]" % i
                  for i in range(2)], "argv of each call")
    recs = t.log("agentic")
    eq(usages(recs), [{"tokens": 15, "usd": 0.01, "model": "claude-sonnet-4-5"}] * 2,
       "usage in the effect outcomes")
    eq([r.p.get("result") for r in recs if r.is_effect_outcome()],
       [{"done": False, "usage": {"tokens": 15, "usd": 0.01}}] * 2,
       "results: the reply and the reported usage")
    eq([r.p.get("reason") for r in named(recs, "cap")], ["token-budget"], "cap records")
    eq([r.p.get("tokens") for r in named(recs, "reserve")], [23, 23],
       "each call reserved its prompt (18 bytes) + LIL_AGENT_MAX_TOKENS")


@test
def token_budget_breakpoint_pauses(t):
    env = {"LOOPY_CLAUDE_CODE_BIN": fake(t, CLAUDE_REPLY), "LOOPY_AGENT_MAX_TOKENS": "5"}
    t.spec(SPEC, HARNESS="claude-code",
           CAPS="{max_iterations: 10, on_cap_exceeded: breakpoint, budget: {tokens: 40}}")
    expect(t.run(env=env), 3, status="paused", reason="token-budget")
    eq(len(calls(t)), 2, "calls before the pause")


SAVE_SPEC = """
    loopspec: "0.1"
    id: saved
    pattern: react
    state:
      vars:
        whole: {type: json}
        t: {type: json}
    body:
      - id: think
        kind: agent
        harness: @HARNESS@
        prompt: "think"
        save: {whole: "$", t: "$.usage.tokens"}
    terminate: {signal: state-predicate, until: "${iteration >= 1}"}
    caps: {max_iterations: 3}
"""


@test
def claude_code_usage_in_the_result(t):
    # the model's own usage is replaced by the envelope's
    reply = ('{"type":"result","result":"{\\"done\\":true,\\"score\\":0.9,'
             '\\"usage\\":{\\"tokens\\":1}}",'
             '"usage":{"input_tokens":10,"output_tokens":5},"total_cost_usd":0.01}')
    env = {"LIL_CLAUDE_CODE_BIN": fake(t, reply)}
    t.spec(SAVE_SPEC, HARNESS="claude-code")
    res = expect(t.run("--run-id", "r1", env=env), 0, status="completed")
    eq(res["state"], {"whole": {"done": True, "score": 0.9,
                                "usage": {"tokens": 15, "usd": 0.01}}, "t": 15}, "state")
    # a cost without token counts: usd only
    t.write("reply", '{"type":"result","result":"{\\"done\\":true}","total_cost_usd":0.5}')
    res = expect(t.run("--run-id", "r2", env=env), 0, status="completed")
    eq(res["state"], {"whole": {"done": True, "usage": {"usd": 0.5}}}, "state")
    # codex reports nothing: its estimate is no usage of the result
    env = {"LIL_CODEX_BIN": fake(t, '{"done": true, "usage": {"tokens": 1}}')}
    t.spec(SAVE_SPEC, HARNESS="codex")
    res = expect(t.run("--run-id", "r3", env=env), 0, status="completed")
    eq(res["state"], {"whole": {"done": True}}, "state")


@test
def codex_usage_is_estimated(t):
    out = '{"answer": 42, "usage": {"tokens": 1}}'  # 39 bytes: 10 tokens
    env = {"LIL_CODEX_BIN": fake(t, out), "LOOPY_CODEX_BIN": "/nonexistent/codex",
           "LIL_AGENT_MAX_TOKENS": "5"}
    t.spec(SPEC, HARNESS="codex",
           CAPS="{max_iterations: 10, on_cap_exceeded: fail, budget: {tokens: 40}}")
    expect(t.run(env=env), 1, status="failed", reason="token-budget")
    eq(calls(t)[0], "[exec][--skip-git-repo-check][--][think about step 0]", "argv")
    recs = t.log("agentic")
    # "think about step 0" is 18 bytes: 5 tokens, + 10 for the output; codex
    # reports nothing: the call counts at its reservation (18 + 5 = 23 of
    # the 40 tokens), so the second call does not fit
    eq(usages(recs), [{"tokens": 15, "estimated": True,
                       "unreported": "no usage reported", "at_reservation": True}],
       "estimated usage, counted at the reservation")
    eq([r.p.get("result") for r in recs if r.is_effect_outcome()], [{"answer": 42}],
       "the model's own usage is not the result's")


@test
def missing_cli_fails_before_the_intent(t):
    env = {"LIL_OPENCODE_BIN": "/nonexistent/opencode"}
    t.spec(SPEC, HARNESS="opencode", CAPS="{max_iterations: 3}")
    res = t.run(env=env)
    eq(res.rc, 1, "exit status of a run whose harness cannot run here")
    check("LIL_OPENCODE_BIN or LOOPY_OPENCODE_BIN" in res.err,
          "the message names the variable: %r" % res.err)
    check(not t.has_run("agentic"), "nothing journaled: the run does not exist")
    # the cause fixed, the same command starts the run
    env = {"LIL_OPENCODE_BIN": fake(t, '{"answer": 1}')}
    t.run(env=env)
    check(t.has_run("agentic"), "the run exists once the harness can run")
    check(len(calls(t)) >= 1, "the harness ran: %r" % calls(t))


@test
def cli_gets_only_allowed_variables_and_secrets_are_redacted(t):
    script = t.write("echo-key", '#!/bin/sh\nprintf \'{"key":"%s"}\' "$SERVICE_API_KEY"\n')
    os.chmod(script, 0o755)
    secret = "sk-live-5ecret-value-0123456789"
    env = {"LIL_AGENT_CMD": script, "SERVICE_API_KEY": secret}
    t.spec(SPEC, HARNESS="cli", CAPS="{max_iterations: 1, on_cap_exceeded: exit-clean}")
    t.run(env=env)
    results = [r.p.get("result") for r in t.log("agentic") if r.is_effect_outcome()]
    eq([r.get("key") for r in results], [""], "without --env-allow the CLI sees nothing")
    t.run("--run-id", "allowed", "--env-allow", "SERVICE_API_KEY", env=env)
    results = [r.p.get("result") for r in t.log("allowed") if r.is_effect_outcome()]
    eq(len(results), 1, "one call")
    check(results[0].get("key") not in ("", None), "the CLI saw the allowed variable")
    check(secret.encode() not in t.journal_bytes("allowed"), "the secret is not journaled")


loopt.main()

#!/usr/bin/env python3
"""t_budget.py -- token and usd budgets that an agent call cannot overshoot
(docs/loops.md, "Budgets"), through `lil run` against the OpenAI-compatible
server of the tests (tests/http/llm_server.py) in its `bill` scenario: it
bills every request as a call that used its whole limit (the bytes of the
system message and the prompt + 9, and max_tokens) the moment it reads it,
and writes that to a ledger file -- the outside world's count of requests
and of tokens billed, which each test checks against lil's.

With LIL_AGENT_MAX_TOKENS 100 a call of the loop ("round N", 7 bytes)
reserves 16 + 149 + 7 + 100 = 272 tokens and is billed 265.  A budget of
700 tokens admits two calls (530 billed); the third would pass it, so it
does not start -- no request reaches the server -- and the cap's action
applies: fail, exit-clean, or breakpoint, where an approval rebases the
budget and two more calls run.  The same with a usd budget of $0.25 and
calls priced at $0.10 (LIL_LLM_PRICE_IN 0, _OUT 1 per million, 100000
tokens of limit).

Also: a call whose worst case is more than the whole budget fails the run
at once, saying what to change, whatever the action; a model without a
price reserves what the usd budget has left; a call SIGKILLed while the
server works on it is uncertain and counts at its reservation, after
`lil recover --retry` (the retry reserves again), --abort and
--assume-done alike, and every process that reads the journal again finds
the same meters; a retry of the spec's `retry` policy is reserved again
and not made when it does not fit; a call that reports more than it
reserved is counted at its real figure and marked `overran`; the limit is
sent as max_tokens (max_completion_tokens for reasoning models) and a bad
value fails before any intent; a spec without a token or usd budget
journals no reservation.  In every test the tokens the server billed are
at most what lil counts as spent, and that is at most the budget.

And in every test what `lil inspect` and `lil ls` show of the run, text and
--json, is what the runner counts: their meters, the budget used, reserved
and left, the status and its reason equal the result of `lil run --json`
exactly (views_agree) -- reservations of uncertain calls, failed attempts
counted at theirs, an overrun marked on its call.
"""

import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "http"))
import llm_server  # noqa: E402
import loopt  # noqa: E402
from loopt import check, eq, expect, has, named, test  # noqa: E402

SERVER = os.path.join(HERE, "..", "http", "llm_server.py")
SYSTEM_BYTES = len(llm_server.SYSTEM.encode())  # 149
LIMIT = 100
PROMPT0 = "round 0"
RESERVE = 16 + SYSTEM_BYTES + len(PROMPT0) + LIMIT  # 272 (rounds 0..9: same size)
BILLED = SYSTEM_BYTES + len(PROMPT0) + 9 + LIMIT  # 265
# gpt-4o-mini: $0.15 in, $0.60 out per million: what a reservation holds
RESERVE_USD = ((RESERVE - LIMIT) * 0.15 + LIMIT * 0.60) / 1e6
RESERVED_TEXT = "%d tokens, $%.6f" % (RESERVE, RESERVE_USD)

SPEC = """
    loopspec: "0.1"
    id: spend
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: think
        kind: agent
        harness: llm
        prompt: "round ${state.n}"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= @N@}"}
    caps:
      max_iterations: 20
      on_cap_exceeded: @ACTION@
      budget: @BUDGET@
"""

_DROP = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY",
         "OPENROUTER_API_KEY", "AI_GATEWAY_API_KEY", "http_proxy", "HTTP_PROXY",
         "all_proxy", "ALL_PROXY")


def server(t, max_tokens=LIMIT):
    """Start the llm server with its ledger; the test's cleanup kills it."""
    for name in list(t.env):
        if name in _DROP or name.startswith(("LIL_LLM_", "LOOPY_LLM_", "LIL_AGENT_",
                                             "LOOPY_AGENT_")):
            del t.env[name]
    argv = [sys.executable, SERVER, "--ledger", t.path("ledger.jsonl")]
    if max_tokens is not None:
        argv += ["--max-tokens", str(max_tokens)]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    t._procs.append(p)  # noqa: SLF001 -- ended (by pid) with the test
    return "http://127.0.0.1:%d" % int(p.stdout.readline())


def llm(url, scenario="bill", **extra):
    env = {"LIL_LLM_BASE_URL": "%s/%s/v1" % (url, scenario), "LIL_LLM_API_KEY": "sk-t",
           "LIL_LLM_MODEL": "gpt-4o-mini", "LIL_AGENT_MAX_TOKENS": str(LIMIT)}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def usd_env(url, scenario="bill"):
    """Calls of $0.10: 100000 tokens of limit at $1 per million, prompts free."""
    return llm(url, scenario, LIL_AGENT_MAX_TOKENS=100000, LIL_LLM_PRICE_IN=0,
               LIL_LLM_PRICE_OUT=1)


def ledger(t):
    try:
        with open(t.path("ledger.jsonl"), encoding="utf-8") as f:
            return [json.loads(x) for x in f.read().splitlines() if x.strip()]
    except FileNotFoundError:
        return []


def billed(t):
    return sum(x["prompt_tokens"] + x["completion_tokens"] for x in ledger(t))


def spec(t, budget, action="fail", n=10):
    t.spec(SPEC, BUDGET=budget, ACTION=action, N=n)


def meter(res, name):
    """The result's meter of tokens or usd (its "meters")."""
    m = (res or {}).get("meters")
    check(isinstance(m, dict), "the result has meters: %r" % (res,))
    return m[name]


def within_budget(t, res, budget):
    """The server billed no more than lil counts as spent, and lil's spent is
    within the budget (tokens)."""
    used = meter(res, "tokens")["used"] + meter(res, "tokens")["base"]
    check(billed(t) <= used, "billed %d <= spent %d" % (billed(t), used))
    check(used <= budget, "spent %d <= budget %d" % (used, budget))


def reserves(t, run_id="spend"):
    return [r.p for r in named(t.log(run_id), "reserve")]


def line_of(text, prefix):
    for line in text.splitlines():
        if line.startswith(prefix):
            return line
    return ""


def budget_text(meter, fmt):
    """The budget line's part for a meter: "544/700 (272 reserved, 156 left)"."""
    left = max(meter["budget"] - meter["used"], 0)
    text = (fmt + "/" + fmt + " (") % (meter["used"], meter["budget"])
    if meter["reserved"]:
        text += (fmt + " reserved, ") % meter["reserved"]
    return text + (fmt + " left)") % left


def views_agree(t, res, run_id="spend"):
    """`lil inspect` and `lil ls` count what the runner counts: res is a result
    of `lil run --json` (or another loop verb) on run_id, nothing written
    since.  Their meters and budgets (used, reserved, left), status and
    reason equal the runner's exactly, in --json and in the text.  Returns
    inspect's "loop" object."""
    m = res["meters"]
    loop = t.lil("inspect", run_id, "--json").json["loop"]
    ls = [r for r in t.lil("ls", "--json").json["runs"] if r["id"] == run_id][0]["loop"]
    runner = loop["meters"]["runner"]
    for key in ("tokens", "usd", "iteration", "iteration_base", "max_iterations",
                "pending", "ended", "on_cap_exceeded"):
        eq(runner[key], m[key], "inspect's meters: " + key)
    for name in ("tokens", "usd"):
        meter = m[name]
        want = None
        if "budget" in meter:
            want = {"limit": meter["budget"], "used": meter["used"],
                    "reserved": meter["reserved"],
                    "left": max(meter["budget"] - meter["used"], 0)}
        eq(loop["budget"][name], want, "inspect --json's %s budget" % name)
        eq(ls["budget"][name], want, "ls --json's %s budget" % name)
    for view, what in ((loop, "inspect"), (ls, "ls")):
        eq(view["status"], res["status"], what + "'s status")
        eq(view["reason"], res.get("reason"), what + "'s reason")
        eq(view["iterations"], res["iteration"], what + "'s iterations")
    text = t.lil("inspect", run_id).out
    ls_text = line_of(t.lil("ls").out, run_id + " ")
    eq(line_of(text, "loop status"), "loop status   " + res["status"], "inspect's status")
    if "budget" in m["tokens"]:
        part = "tokens " + budget_text(m["tokens"], "%d")
        check(part in line_of(text, "budget "), "%r in inspect's %r"
              % (part, line_of(text, "budget ")))
        left = "left: %d tok" % max(m["tokens"]["budget"] - m["tokens"]["used"], 0)
        check(left in ls_text, "%r in ls's %r" % (left, ls_text))
    if "budget" in m["usd"]:
        part = "usd " + budget_text(m["usd"], "%.4f")
        check(part in line_of(text, "budget "), "%r in inspect's %r"
              % (part, line_of(text, "budget ")))
    return loop


def slot_line(t, slot, run_id="spend"):
    """The line of slot in `lil inspect`'s iterations."""
    return line_of(t.lil("inspect", run_id).out, "    %s " % slot)


# ---------------------------------------------------------------------------
# The cap's actions


@test
def token_budget_fail_refuses_the_third_call(t):
    url = server(t)
    spec(t, "{tokens: 700}", "fail")
    res = expect(t.run(env=llm(url)), 1, status="failed", reason="token-budget",
                 iteration=2)
    eq(len(ledger(t)), 2, "requests the server received")
    eq(billed(t), 2 * BILLED, "tokens billed")
    eq(meter(res, "tokens"), {"used": 2 * BILLED, "base": 0, "reserved": 0,
                              "budget": 700}, "token meter")
    within_budget(t, res, 700)
    recs = t.log("spend")
    eq(loopt.intents(recs), ["0.0", "1.0"], "intents: the third call never started")
    eq([(p["slot"], p["tokens"], p["limit"]) for p in reserves(t)],
       [("0.0", RESERVE, LIMIT), ("1.0", RESERVE, LIMIT)], "reserve records")
    eq([r.p["reason"] for r in named(recs, "cap")], ["token-budget"], "cap records")
    check(all(p.get("model") == "gpt-4o-mini" for p in reserves(t)), "the model priced")
    views_agree(t, res)
    line = slot_line(t, "1.0")
    check(("  %d tokens, $" % BILLED) in line and line.endswith(" (gpt-4o-mini)"),
          "a call's line: what it reported: " + line)


@test
def token_budget_exit_clean(t):
    url = server(t)
    spec(t, "{tokens: 700}", "exit-clean")
    res = expect(t.run(env=llm(url)), 5, status="stopped", reason="token-budget",
                 iteration=2)
    eq(len(ledger(t)), 2, "requests")
    within_budget(t, res, 700)
    views_agree(t, res)


@test
def token_budget_breakpoint_then_approve_rebases(t):
    url = server(t)
    spec(t, "{tokens: 700}", "breakpoint")
    res = expect(t.run(env=llm(url)), 3, status="paused", reason="token-budget",
                 iteration=2)
    eq(len(ledger(t)), 2, "requests before the pause")
    again = expect(t.run(env=llm(url)), 3, status="paused", reason="token-budget")
    eq(meter(again, "tokens"), meter(res, "tokens"), "the meters read back")
    eq(len(ledger(t)), 2, "a paused run calls nothing")
    loop = views_agree(t, again)
    has(loop["waiting_for"], {"kind": "cap", "cap": "token-budget", "action": "breakpoint",
                              "iteration": 2}, "what the run waits for")
    res = expect(t.run("--reason", "two more", env=llm(url), verb="approve"), 3,
                 status="paused", reason="token-budget", iteration=4)
    eq(len(ledger(t)), 4, "two more calls after the approval")
    eq(meter(res, "tokens"), {"used": 2 * BILLED, "base": 2 * BILLED, "reserved": 0,
                              "budget": 700}, "the window after the approval")
    eq(billed(t), 4 * BILLED, "billed")
    eq([r.p["reason"] for r in named(t.log("spend"), "cap_cleared")], ["token-budget"],
       "cap_cleared records")
    views_agree(t, res)


@test
def usd_budget_each_action(t):
    url = server(t, max_tokens=100000)
    for action, code, status in (("fail", 1, "failed"), ("exit-clean", 5, "stopped"),
                                 ("breakpoint", 3, "paused")):
        spec(t, "{usd: 0.25}", action)
        res = expect(t.run("--run-id", action, env=usd_env(url)), code, status=status,
                     reason="usd-budget", iteration=2)
        u = meter(res, "usd")
        check(abs(u["used"] - 0.2) < 1e-9 and u["reserved"] == 0 and u["budget"] == 0.25,
              "%s: usd meter %r" % (action, u))
        eq([p["usd"] for p in reserves(t, action)], [0.1, 0.1], action + ": reservations")
        views_agree(t, res, action)
    eq(len(ledger(t)), 6, "two calls a run")
    res = expect(t.run("--run-id", "breakpoint", "--reason", "more", env=usd_env(url),
                       verb="approve"), 3, status="paused", reason="usd-budget",
                 iteration=4)
    eq(len(ledger(t)), 8, "two more calls after the approval")
    views_agree(t, res, "breakpoint")


# ---------------------------------------------------------------------------
# Calls that can never start, and calls without a price


def never_sentence(tokens_budget):
    return ("agent step 'think' cannot start: its worst case, %d tokens (prompt %d + "
            "LIL_AGENT_MAX_TOKENS 2000), is more than the whole token budget (%d): "
            "raise caps.budget.tokens or lower LIL_AGENT_MAX_TOKENS"
            % (RESERVE + 1900, RESERVE - LIMIT, tokens_budget))


def made_then_stopped(t, env, *args):
    """The run made with a token limit the budget admits (a new run whose
    budget can never admit a call is refused before it exists) and stopped
    before its first step: the limit of env applies at the call of the
    resume that follows."""
    eq(t.lil("stop", t.spec_path, "--reason", "made first", *args).rc, 0, "stop")
    expect(t.run(*args, env=dict(env, LIL_AGENT_MAX_TOKENS="1")), 5, status="stopped",
           iteration=0)


@test
def worst_case_above_the_whole_token_budget_is_the_cap(t):
    """The cap of the budget, with what to change as its detail: the spec's
    on_cap_exceeded applies (fail, exit-clean, breakpoint)."""
    url = server(t, max_tokens=None)
    for action, code, status in (("fail", 1, "failed"), ("exit-clean", 5, "stopped"),
                                 ("breakpoint", 3, "paused")):
        spec(t, "{tokens: 200}", action)
        res = t.run("--run-id", action, env=llm(url, LIL_AGENT_MAX_TOKENS=""))
        eq(res.rc, 1, action + ": a new run is refused")
        check("more than caps.budget.tokens 200" in res.err and
              not t.has_run(action), action + ": refused before it exists: " + res.err)
        made_then_stopped(t, llm(url), "--run-id", action)
        res = expect(t.run("--run-id", action, env=llm(url, LIL_AGENT_MAX_TOKENS=""),
                           verb="resume"),
                     code, status=status, reason="token-budget", iteration=0,
                     detail=never_sentence(200))
        recs = t.log(action)
        eq(loopt.intents(recs), [], action + ": no intent")
        eq(named(recs, "reserve"), [], action + ": no reservation")
        eq([(r.p["reason"], r.p["action"], r.p.get("detail")) for r in named(recs, "cap")],
           [("token-budget", action, never_sentence(200))], action + ": the cap record")
        again = expect(t.run("--run-id", action, env=llm(url, LIL_AGENT_MAX_TOKENS="")),
                       code, status=status, reason="token-budget",
                       detail=never_sentence(200))
        views_agree(t, again, action)
    out = t.lil("run", t.spec_path, "--run-id", "breakpoint",
                env=llm(url, LIL_AGENT_MAX_TOKENS="")).out
    check("  detail: " + never_sentence(200) in out, "the text shows the detail: " + out)
    eq(ledger(t), [], "no request")


@test
def worst_case_above_the_whole_budget_breakpoint_raise_and_approve(t):
    """Paused on the cap: the operator raises the budget in the spec and
    approves; the call starts."""
    url = server(t, max_tokens=None)
    env = llm(url, LIL_AGENT_MAX_TOKENS="")
    spec(t, "{tokens: 200}", "breakpoint", n=1)
    made_then_stopped(t, env)
    expect(t.run(env=env, verb="resume"), 3, status="paused", reason="token-budget",
           detail=never_sentence(200))
    res = expect(t.run("--reason", "no budget", env=env, verb="approve"), 3,
                 status="paused", reason="token-budget", detail=never_sentence(200))
    eq(ledger(t), [], "an approval alone makes no room")
    spec(t, "{tokens: 5000}", "breakpoint", n=1)
    # the run is bound to its spec: the raised budget is a change to accept
    expect(t.run("--reason", "raised to 5000", env=env, verb="approve"), 1)
    check("caps" in t.last.err and "--accept-spec-change" in t.last.err,
          "the refusal names the part changed and the way out: " + t.last.err)
    res = expect(t.run("--reason", "raised to 5000", "--accept-spec-change", env=env,
                       verb="approve"), 0,
                 status="completed", iteration=1, absent=("detail",))
    eq(len(ledger(t)), 1, "the call started")
    recs = t.log("spend")
    eq([r.p["changed"] for r in named(recs, "spec_changed")], [["caps"]],
       "the accepted change is journaled")
    eq([r.p["reason"] for r in named(recs, "cap")], ["token-budget"] * 2, "cap records")
    eq([(r.p["reason"], r.p["why"]) for r in named(recs, "cap_cleared")],
       [("token-budget", "no budget"), ("token-budget", "raised to 5000")],
       "cap_cleared records")
    within_budget(t, res, 5000)


@test
def worst_case_above_the_whole_usd_budget_is_the_cap(t):
    url = server(t, max_tokens=None)
    spec(t, "{usd: 0.01}", "breakpoint")
    made_then_stopped(t, llm(url, LIL_LLM_MODEL="gpt-4o"))
    # gpt-4o: 172 tokens of prompt at $2.5 and 2000 at $10 per million: $0.02043
    res = expect(t.run(env=llm(url, LIL_LLM_MODEL="gpt-4o", LIL_AGENT_MAX_TOKENS=""),
                       verb="resume"),
                 3, status="paused", reason="usd-budget")
    eq(res.get("detail"),
       "agent step 'think' cannot start: its worst case, $0.02043 (172 tokens at "
       "$2.5/M + LIL_AGENT_MAX_TOKENS 2000 at $10/M, gpt-4o), is more than the whole "
       "usd budget ($0.01): raise caps.budget.usd or lower LIL_AGENT_MAX_TOKENS",
       "the detail")
    eq(ledger(t), [], "no request")


@test
def worst_case_above_the_whole_budget_warned_by_validate_and_doctor(t):
    path = t.spec(SPEC, BUDGET="{tokens: 1500}", ACTION="fail", N=2)
    line = [i for i, x in enumerate(open(path, encoding="utf-8").read().splitlines(), 1)
            if "- id: think" in x][0]
    want = ("agent step 'think' can never start: its worst case, the prompt plus "
            "LIL_AGENT_MAX_TOKENS 2000 tokens, is more than the whole token budget "
            "(1500): raise caps.budget.tokens or lower LIL_AGENT_MAX_TOKENS")
    res = t.lil("validate", path, "--json")
    eq(res.rc, 0, "a warning: the spec is valid")
    diags = [d for d in res.json["diagnostics"] if d["code"] == "call-over-budget"]
    eq([(d["severity"], d["message"], d["line"]) for d in diags],
       [("warning", want, line)], "validate --json's warning")
    text = t.lil("validate", path).out + t.lil("validate", path).err
    check(("loop.yaml:%d:" % line) in text and "call-over-budget" in text,
          "validate's text names file:line:column and the code: " + text)
    env = {"LIL_AGENT_MAX_TOKENS": "1000"}
    res = t.lil("validate", path, "--json", env=env)
    eq([d for d in res.json["diagnostics"] if d["code"] == "call-over-budget"], [],
       "a limit that leaves room: no warning")
    doc = t.lil("doctor", path)
    check(("⚠ %s:%d:5: %s [call-over-budget]" % (path, line, want)) in doc.out,
          "doctor warns: " + doc.out)
    checks = [c for c in t.lil("doctor", path, "--json").json["checks"]
              if c["check"] == "call-over-budget"]
    eq([c["level"] for c in checks], ["warning"], "doctor --json's check")
    check("call-over-budget" not in t.lil("doctor", path, env=env).out,
          "doctor: no warning with a lower limit")


@test
def unpriced_model_reserves_what_the_usd_budget_has_left(t):
    url = server(t)
    spec(t, "{usd: 1.0}", "fail", n=2)
    res = expect(t.run(env=llm(url, LIL_LLM_MODEL="house-model")), 0,
                 status="completed", iteration=2)
    eq([(p["usd"], p.get("unpriced"), p.get("model")) for p in reserves(t)],
       [(1.0, True, "house-model")] * 2, "each call reserves the whole rest")
    eq(meter(res, "usd")["used"], 0, "no usd reported, none spent")
    views_agree(t, res)
    eq(len(ledger(t)), 2, "requests")


# ---------------------------------------------------------------------------
# A call killed while the server works on it


def kill_during_call(t, env):
    """Start `lil run`, SIGKILL it once the server has the request."""
    p = t.spawn("run", t.spec_path, "--json", env=env)
    t.wait_for(lambda: len(ledger(t)) == 1, "the request at the server", proc=p)
    p.kill()
    p.wait()
    return p


def uncertain_meters(t, env, tokens):
    """Every reader of the journal finds the killed call uncertain, counted at
    its reservation: the runner, `lil inspect` and `lil ls` alike."""
    for verb in ("run", "step"):
        res = expect(t.run(verb=verb, env=env), 2, status="uncertain")
        eq(meter(res, "tokens"), {"used": tokens, "base": 0, "reserved": RESERVE,
                                  "budget": 700}, "meters of the uncertain run")
    eq(len(ledger(t)), 1, "nothing called while uncertain")
    loop = views_agree(t, res)
    held = loop["meters"]["reservations"]
    eq([(r["slot"], r["tokens"]) for r in held], [("0.0", RESERVE)],
       "the reservation the uncertain call holds")
    check(math.isclose(held[0]["usd"], RESERVE_USD, rel_tol=1e-9),
          "its usd %r" % held[0]["usd"])
    eq(loop["uncertain"]["slot"], "0.0", "the uncertain call")
    line = slot_line(t, "0.0")
    check(" uncertain " in line and line.endswith("reserved " + RESERVED_TEXT),
          "the uncertain call's line: " + line)
    check(("tokens %d (base 0, %d reserved)" % (tokens - RESERVE, RESERVE))
          in t.lil("inspect", "spend").out, "inspect's meters line")
    ls = line_of(t.lil("ls").out, "spend ")
    check((", reserved: %d tok" % RESERVE) in ls, "ls shows the reservation: " + ls)


@test
def killed_call_then_recover_retry_reserves_again(t):
    url = server(t)
    spec(t, "{tokens: 700}", "fail")
    kill_during_call(t, llm(url, "bill/30000"))
    uncertain_meters(t, llm(url), RESERVE)
    res = expect(t.run("--retry", "--reason", "again", env=llm(url), verb="recover"), 1,
                 status="failed", reason="token-budget", iteration=1)
    # the killed call counts at its reservation; the retry at what it was billed
    eq(meter(res, "tokens")["used"], RESERVE + BILLED, "spent")
    eq(len(ledger(t)), 2, "the retry reached the server; the next call did not")
    within_budget(t, res, 700)
    again = expect(t.run(env=llm(url)), 1, status="failed")
    eq(meter(again, "tokens"), meter(res, "tokens"), "the meters read back")
    eq([p["slot"] for p in reserves(t)], ["0.0", "0.0"], "a reservation per attempt")
    views_agree(t, again)
    check(slot_line(t, "0.0").endswith(
        " (gpt-4o-mini); 1 earlier attempt counted at its reservation: " + RESERVED_TEXT),
        "the retried call's line: " + slot_line(t, "0.0"))


@test
def killed_call_then_recover_abort(t):
    url = server(t)
    spec(t, "{tokens: 700}", "fail")
    kill_during_call(t, llm(url, "bill/30000"))
    res = expect(t.run("--abort", "--reason", "stop", env=llm(url), verb="recover"), 5,
                 status="stopped")
    eq(meter(res, "tokens"), {"used": RESERVE, "base": 0, "reserved": 0, "budget": 700},
       "the aborted call counts at its reservation")
    again = expect(t.run(env=llm(url)), 5, status="stopped")
    eq(meter(again, "tokens"), meter(res, "tokens"), "the meters read back")
    within_budget(t, res, 700)
    views_agree(t, res)
    line = slot_line(t, "0.0")
    check(" aborted " in line and line.endswith(
        "counted at its reservation: " + RESERVED_TEXT), "the aborted call: " + line)


@test
def killed_call_then_recover_assume_done(t):
    url = server(t)
    spec(t, "{tokens: 700}", "exit-clean")
    kill_during_call(t, llm(url, "bill/30000"))
    res = expect(t.run("--assume-done", "--result-json", '{"ok": true}', "--reason",
                       "it answered", env=llm(url), verb="recover"), 5,
                 status="stopped", reason="token-budget", iteration=2)
    eq(meter(res, "tokens")["used"], RESERVE + BILLED,
       "the assumed call counts at its reservation, the next at its bill")
    eq(len(ledger(t)), 2, "requests")
    within_budget(t, res, 700)
    views_agree(t, res)
    line = slot_line(t, "0.0")
    check(" assumed-done " in line and line.endswith(
        "counted at its reservation: " + RESERVED_TEXT), "the assumed call: " + line)


@test
def killed_unpriced_call_spent_all_that_was_left(t):
    url = server(t)
    spec(t, "{usd: 1.0}", "fail")
    kill_during_call(t, llm(url, "bill/30000", LIL_LLM_MODEL="house-model"))
    res = expect(t.run(env=llm(url, LIL_LLM_MODEL="house-model")), 2,
                 status="uncertain")
    eq(meter(res, "usd")["reserved"], 1.0, "the whole rest is reserved")
    views_agree(t, res)
    check(slot_line(t, "0.0").endswith("reserved %d tokens, all usd left" % RESERVE),
          "the unpriced call's line: " + slot_line(t, "0.0"))
    res = expect(t.run("--retry", "--reason", "again",
                       env=llm(url, LIL_LLM_MODEL="house-model"), verb="recover"), 1,
                 status="failed", reason="usd-budget")
    eq(meter(res, "usd")["used"], 1.0, "the killed call spent all that was left")
    eq(len(ledger(t)), 1, "the retry did not start")
    views_agree(t, res)


UNPRICED_HELD = ("the agent call in slot 0.0 is counted at its reservation, %d tokens and "
                 "all that the usd budget had left ($1: its model has no price), whatever "
                 "is decided, since what it cost is unknown" % RESERVE)


@test
def killed_unpriced_call_recover_says_what_counts_and_approves_in_one_step(t):
    """A breakpoint budget: `recover --retry` pauses on usd-budget, its detail
    saying that the killed call counts at its whole reservation; `recover
    --retry --approve` journals the cap and its approval with the recovery's
    actor and reason, and the retry starts at once."""
    url = server(t)
    env = llm(url, LIL_LLM_MODEL="house-model")
    for run_id in ("plain", "approved"):
        spec(t, "{usd: 1.0}", "breakpoint", n=2)
        p = t.spawn("run", t.spec_path, "--run-id", run_id, "--json",
                    env=llm(url, "bill/30000", LIL_LLM_MODEL="house-model"))
        t.wait_for(lambda: len(ledger(t)) == (1 if run_id == "plain" else 2),
                   "the request at the server", proc=p)
        p.kill()
        p.wait()
        res = expect(t.run("--run-id", run_id, env=env), 2, status="uncertain")
        check(res.get("detail", "").startswith(UNPRICED_HELD),
              "the uncertain result says what is counted: %r" % res.get("detail"))
        out = t.lil("run", t.spec_path, "--run-id", run_id, env=env).out
        check("  detail: " + UNPRICED_HELD in out, "and its text: " + out)
    res = expect(t.run("--run-id", "plain", "--retry", "--reason", "again", env=env,
                       verb="recover"), 3, status="paused", reason="usd-budget")
    eq(res.get("detail"),
       "the usd budget has spent $1 of $1 at the start of iteration 0; $1 of what it "
       "spent is reservations of calls whose outcome is unknown, counted in full",
       "the paused recovery's detail")
    eq(len(ledger(t)), 2, "the retry did not start")
    views_agree(t, res, "plain")
    res = expect(t.run("--run-id", "approved", "--retry", "--approve", "--actor", "ops",
                       "--reason", "the call never answered", env=env, verb="recover"),
                 0, status="completed", iteration=2)
    eq(len(ledger(t)), 4, "the retry and the next call ran")
    recs = t.log("approved")
    eq([(r.p["reason"], r.p["action"]) for r in named(recs, "cap")],
       [("usd-budget", "breakpoint")], "the cap the retry tripped")
    eq([(r.p["reason"], r.p["actor"], r.p["why"]) for r in named(recs, "cap_cleared")],
       [("usd-budget", "ops", "the call never answered")], "its approval, journaled")
    check(named(recs, "cap")[0].seq < named(recs, "cap_cleared")[0].seq, "cap first")
    eq(meter(res, "usd")["used"], 0, "the budget counts from the approval")
    eq(meter(res, "usd")["base"], 1.0, "the killed call's $1 before it")
    views_agree(t, res, "approved")
    usage = t.lil("recover", t.spec_path, "--run-id", "approved", "--abort", "--approve",
                  "--reason", "x")
    eq(usage.rc, 64, "--approve goes only with --retry")


# ---------------------------------------------------------------------------
# Retries, overruns, the limit sent, no budget


@test
def retries_inside_the_intent_are_reserved_too(t):
    url = server(t)
    spec(t, "{tokens: 700}", "fail")
    with open(t.spec_path, "a", encoding="utf-8") as f:
        f.write("retry: {max: 5, backoff_ms: 1}\n")
    res = expect(t.run(env=llm(url, "status/500")), 1, status="failed",
                 reason_has="no retry: the token budget has %d left and another "
                 "attempt may cost %d; the last attempt: LLM request failed (500)"
                 % (700 - 2 * RESERVE, RESERVE))
    eq(len(ledger(t)), 2, "two attempts reached the server")
    eq([(p["slot"], p.get("retry")) for p in reserves(t)], [("0.0", None), ("0.0", 2)],
       "a reservation per attempt")
    again = expect(t.run(env=llm(url)), 1, status="failed")
    eq(meter(again, "tokens")["used"], 2 * RESERVE,
       "failed attempts count at their reservations")
    views_agree(t, again)
    text = t.lil("inspect", "spend").out
    check("tokens %d/700 (%d left)" % (2 * RESERVE, 700 - 2 * RESERVE) in text,
          "inspect counts the failed attempts")
    check(line_of(text, "usage ").endswith(
        "%d tokens, $%.6f in 0 calls (%d tokens, $%.6f of it counted at reservations)"
        % (2 * RESERVE, 2 * RESERVE_USD, 2 * RESERVE, 2 * RESERVE_USD)),
        "inspect's usage line: " + line_of(text, "usage "))
    eq(again["meters"]["tokens"]["used"],
       t.lil("inspect", "spend", "--json").json["loop"]["counted_at_reservations"]["tokens"],
       "counted at reservations: all of it")
    line = slot_line(t, "0.0")
    check(" failed " in line and line.endswith(
        "counted at its reservation: %d tokens, $%.6f (2 attempts)"
        % (2 * RESERVE, 2 * RESERVE_USD)), "the failed call: " + line)


@test
def a_call_that_reports_more_is_counted_and_marked(t):
    url = server(t)
    spec(t, "{tokens: 5000}", "fail")
    res = expect(t.run(env=llm(url, "fenced")), 1, status="failed",
                 reason="token-budget", iteration=0)
    eq(meter(res, "tokens")["used"], 2000000, "counted at its real figure")
    usage = [r.p["usage"] for r in t.log("spend") if r.is_effect_outcome()]
    eq([(u["tokens"], u.get("overran")) for u in usage], [(2000000, True)],
       "the outcome's usage is marked")
    loop = views_agree(t, res)
    call = loop["history"][0]["effects"][0]
    eq((call["tokens"], call["overran"], call["reserved"]["tokens"]),
       (2000000, True, RESERVE), "inspect --json: the call, marked")
    check(slot_line(t, "0.0").endswith("; OVERRAN its reservation of " + RESERVED_TEXT),
          "the call's line: " + slot_line(t, "0.0"))


@test
def the_limit_is_sent_as_max_tokens(t):
    url = server(t, max_tokens=77)
    spec(t, "{tokens: 5000}", "fail", n=1)
    expect(t.run("--run-id", "a", env=llm(url, LIL_AGENT_MAX_TOKENS=77)), 0,
           status="completed")
    env = llm(url, LIL_LLM_MODEL="o3-mini", LOOPY_AGENT_MAX_TOKENS=77)
    del env["LIL_AGENT_MAX_TOKENS"]
    expect(t.run("--run-id", "b", env=env), 0, status="completed")
    eq([x["max_tokens"] for x in ledger(t)], [77, 77], "max_tokens the server saw")
    eq(reserves(t, "b")[0]["limit"], 77, "the reservation's limit")


@test
def a_bad_limit_fails_before_the_intent(t):
    url = server(t)
    spec(t, "{tokens: 5000}", "fail")
    for var, value in (("LIL_AGENT_MAX_TOKENS", "12x"), ("LOOPY_AGENT_MAX_TOKENS", "0")):
        env = llm(url)
        del env["LIL_AGENT_MAX_TOKENS"]
        env[var] = value
        # a new run: refused before it is created (docs/loops.md, "Effects")
        res = t.run("--run-id", var, env=env)
        eq(res.rc, 1, "exit status of a bad limit")
        want = "%s must be a positive integer; got '%s'" % (var, value)
        check(want in res.err, "%r in %r" % (want, res.err))
        check(not t.has_run(var), "nothing journaled: no run %s" % var)
    eq(ledger(t), [], "no request")


@test
def no_budget_no_reservation(t):
    url = server(t)
    t.spec(SPEC.replace("budget: @BUDGET@", "budget: {wallclock: 1h}"), ACTION="fail",
           N=2)
    res = expect(t.run(env=llm(url)), 0, status="completed", absent=("meters",))
    eq(reserves(t), [], "no reserve record")
    eq(len(ledger(t)), 2, "requests")
    check(res is not None, "a result")
    loop = t.lil("inspect", "spend", "--json").json["loop"]
    eq((loop["budget"]["tokens"], loop["budget"]["usd"]), (None, None), "no budget")
    eq(loop["meters"]["tokens"], 2 * BILLED, "the tokens counted all the same")


if __name__ == "__main__":
    loopt.main()

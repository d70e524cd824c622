#!/usr/bin/env python3
"""t_cassette.py -- cassettes of loop runs (docs/loops.md, "Cassettes"):
`lil run --record FILE` keeps every shell, http and agent result of a real
run (a shell step, an http server of the test, the internal harness and
the llm harness against tests/http/llm_server.py); `lil run --replay FILE`
then runs the loop with the servers stopped, no LLM configured and shell
commands that would leave a trace, and must reach the same state, meter
the same usage, run nothing and leave the real run's journal alone.  Also:
a spec whose request changed fails naming the step, the wanted and the
nearest request; a truncated cassette fails at the first effect it lacks;
a malformed line is an error naming the file and the line; a cassette
recorded over `lil step`s (a resumed run) is complete, and a replay made
of `lil step`s goes on where it was; no secret is in a cassette."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, expect_usage, test  # noqa: E402

LLM_SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "http",
                          "llm_server.py")
KEY = "sk-cassette-secret-4b3a2c1d"
TOKEN = "tok-cassette-5ecr3t-77aa"

# Each iteration: a shell step whose command is the same every time but
# whose output is not (the replay must hand out the answers in order), an
# http request with a secret header, an internal and an llm agent call.
SPEC = """
    loopspec: "0.1"
    id: tape
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
        lines: {type: json}
        web: {type: json}
        ai: {type: json}
        llm: {type: json}
    body:
      - id: bump
        kind: shell
        cmd: "echo x >> @SIDE@; wc -l < @SIDE@"
        save: {lines: "$"}
        on_done: {incr: n}
      - id: fetch
        kind: http
        request:
          method: GET
          url: "@URL@/echo"
          headers: {Authorization: "Bearer ${env.MY_API_TOKEN}"}
        save: {web: "$.path"}
      - id: think
        kind: agent
        harness: internal
        prompt: "n is ${state.n}"
        save: {ai: "$"}
      - id: ask
        kind: agent
        harness: llm
        prompt: "count @WORD@ ${state.n}"
        save: {llm: "$"}
    terminate: {signal: state-predicate, until: "${state.n >= 2}"}
    caps:
      max_iterations: 5
      budget: {tokens: 10000}  # room for an llm call's worst case (2000 + prompt)
"""


def clean_env(t):
    for name in list(t.env):
        if name.startswith(("LIL_LLM_", "LOOPY_LLM_", "LIL_AGENT_", "LOOPY_AGENT_")) \
                or name.endswith("_API_KEY") or name.lower().endswith("_proxy"):
            del t.env[name]
    t.env["MY_API_TOKEN"] = TOKEN


def start_llm(t):
    p = subprocess.Popen([sys.executable, LLM_SERVER], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
    port = int(p.stdout.readline())
    t.llm = p
    return {"LIL_LLM_BASE_URL": "http://127.0.0.1:%d/cost/v1" % port,
            "LIL_LLM_API_KEY": KEY, "LOOPY_LLM_MODEL": "openai/gpt-4o-mini"}


def stop_llm(t):
    if getattr(t, "llm", None):
        t.llm.stdin.close()
        t.llm.wait(timeout=10)
        t.llm = None


def setup(t, word="apples"):
    """The spec, and the servers of a real run: (http server, llm env)."""
    clean_env(t)
    srv = t.server()
    t.spec(SPEC, URL=srv.url(""), WORD=word)
    return srv, start_llm(t)


def lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(x) for x in f.read().splitlines() if x.strip()]


def usage_in_log(t, run_id):
    """(tokens, usd) summed over the run's journaled agent usage."""
    tokens, usd = 0, 0.0
    for r in t.log(run_id):
        if r.is_effect_outcome() and isinstance(r.p, dict) and "usage" in r.p:
            tokens += r.p["usage"].get("tokens", 0)
            usd += r.p["usage"].get("usd", 0.0)
    return tokens, round(usd, 9)


def record(t, srv, env, cassette="c.jsonl"):
    try:
        res = expect(t.run("--record", cassette, env=env), 0, status="completed")
    finally:
        stop_llm(t)
        srv.close()
    return res


@test
def record_then_replay(t):
    srv, env = setup(t)
    rec = record(t, srv, env)
    eq(rec["state"]["lines"], 2, "the second count of the side file")
    eq(t.side(), ["x", "x"], "the real run ran its shell step twice")
    entries = lines(t.path("c.jsonl"))
    eq([(e["kind"], e.get("step")) for e in entries],
       [("shell", "bump"), ("http", "fetch"), ("agent", "think"), ("agent", "ask")] * 2,
       "one line per effect, in journal order")
    for e in entries:
        check({"kind", "identity", "result"} <= set(e), "an entry has its fields")
        json.loads(e["identity"])  # canonical identity JSON text
    check(all("usage" in e for e in entries if e.get("step") == "ask"),
          "the llm calls' usage is recorded")
    raw = open(t.path("c.jsonl"), "rb").read()
    check(KEY.encode() not in raw and TOKEN.encode() not in raw,
          "no secret in the cassette")
    before = t.journal_bytes("tape")
    os.chmod(t.side_path, 0o444)  # a shell step that ran would fail now
    res = expect(t.run("--replay", "c.jsonl"), 0, status="completed",
                 iteration=rec["iteration"])
    eq(res["state"], rec["state"], "the replay reaches the recorded state")
    eq(t.side(), ["x", "x"], "nothing ran: the side file is untouched")
    eq(t.journal_bytes("tape"), before, "the real run's journal is untouched")
    check(os.path.exists(t.journal("tape-replay")), "the replay is run tape-replay")
    eq(usage_in_log(t, "tape-replay"), usage_in_log(t, "tape"),
       "the replay meters the recorded usage")
    check(usage_in_log(t, "tape")[0] > 0, "the llm calls were metered")
    expect(t.run("--replay", "c.jsonl", "--run-id", "again"), 0,
           status="completed")
    eq(t.lil("run", t.spec_path, "--record", "a", "--replay", "b").rc, 64,
       "--record and --replay together")


@test
def replay_of_edited_spec_names_the_request(t):
    srv, env = setup(t)
    record(t, srv, env)
    t.spec(SPEC, URL=srv.url(""), WORD="pears")
    res = expect(t.run("--replay", "c.jsonl"), 1, status="failed",
                 reason_has=["step 'ask'", "agent", "count pears 1",
                             "nearest by edit distance", "count apples 1"])
    check("count apples 0" not in res["reason"], "the nearest is the closest entry")
    eq(t.side(), ["x", "x"], "nothing ran")


@test
def truncated_cassette(t):
    srv, env = setup(t)
    record(t, srv, env)
    with open(t.path("c.jsonl"), encoding="utf-8") as f:
        text = f.read().splitlines(keepends=True)
    t.write("cut.jsonl", "".join(text[:5]) + text[5][: len(text[5]) // 2])
    res = expect(t.run("--replay", "cut.jsonl"), 1, status="failed",
                 reason_has=["step 'fetch'", "http", "1 recorded, all used"])
    eq(res["state"]["n"], 1, "the first iteration was committed")
    eq(t.side(), ["x", "x"], "nothing ran")


@test
def malformed_line(t):
    srv, env = setup(t)
    record(t, srv, env)
    with open(t.path("c.jsonl"), encoding="utf-8") as f:
        text = f.read().splitlines(keepends=True)
    t.write("bad.jsonl", "".join(text[:2]) + "{not json\n" + "".join(text[3:]))
    res = t.run("--replay", "bad.jsonl")
    eq(res.rc, 1, "exit status of a malformed cassette")
    check("bad.jsonl line 3" in res.err, "the error names the file and the line")
    t.write("odd.jsonl", '{"kind": "ftp", "identity": "{}", "result": 1}\n')
    res = t.run("--replay", "odd.jsonl", "--run-id", "odd")
    eq(res.rc, 1, "exit status of a line that is not an entry")
    check("odd.jsonl line 1" in res.err and "not a cassette entry" in res.err,
          "the error says the line is not an entry")
    res = t.run("--replay", "missing.jsonl", "--run-id", "none")
    eq(res.rc, 1, "exit status of a missing cassette")
    check("missing.jsonl" in res.err, "the error names the file")


@test
def stepped_record_and_replay(t):
    srv, env = setup(t)
    try:
        expect(t.run("--record", "c.jsonl", verb="step", env=env), 4, status="waiting")
        eq(len(lines(t.path("c.jsonl"))), 4, "one iteration recorded")
        rec = expect(t.run("--record", "c.jsonl", env=env), 0, status="completed")
    finally:
        stop_llm(t)
        srv.close()
    eq(len(lines(t.path("c.jsonl"))), 8, "the resumed run's cassette is complete")
    out = None
    for _ in range(4):
        out = t.run("--replay", "c.jsonl", verb="step")
        if out.rc != 4:
            break
    res = expect(out, 0, status="completed")
    eq(res["state"], rec["state"], "a stepped replay reaches the recorded state")
    eq(t.side(), ["x", "x"], "nothing ran")


HOOKS = """
    loopspec: "0.1"
    id: hooks
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: bump
        kind: shell
        cmd: "echo body >> @SIDE@"
        on_done: {incr: n}
    terminate:
      signal: state-predicate
      until: "${state.n >= 1}"
      on_exit: {kind: shell, cmd: "echo exit >> @SIDE@"}
    observe:
      hooks:
        completed: {kind: shell, cmd: "echo hook >> @SIDE@"}
    caps: {max_iterations: 3}
"""


@test
def exit_action_and_hook(t):
    clean_env(t)
    t.spec(HOOKS)
    expect(t.run("--record", "c.jsonl"), 0, status="completed")
    eq(t.side(), ["body", "exit", "hook"], "the real run")
    eq([e["identity"].split(">>")[0] for e in lines(t.path("c.jsonl"))],
       ['{"cmd":"echo body ', '{"cmd":"echo exit ', '{"cmd":"echo hook '],
       "the body, the exit action and the completion hook recorded")
    expect(t.run("--replay", "c.jsonl"), 0, status="completed")
    eq(t.side(), ["body", "exit", "hook"], "nothing ran in the replay")
    observers = [r.p.get("status") for r in t.log("hooks-replay")
                 if (r.key or "").startswith("observer.")]
    eq(observers, ["started", "done"], "the replayed hook answered from the cassette")


@test
def usage_errors(t):
    clean_env(t)
    t.spec(SPEC, URL="http://127.0.0.1:9", WORD="w")
    expect_usage(t.lil("run", t.spec_path, "--record", ""), "run")
    expect_usage(t.lil("step", t.spec_path, "--record", "a", "--replay", "b"), "step")


if __name__ == "__main__":
    loopt.main()

#!/usr/bin/env python3
"""t_bigeffect.py -- effects whose identity is far over 4 KiB (docs/loops.md,
"Big effects"; docs/format.md, the request record): an agent step whose
prompt is 1 MiB against the OpenAI-compatible server of the tests
(tests/http/llm_server.py, billing each call in its ledger as it arrives),
and an http step posting a 10 MiB body to a server of the test.

Each call is killed mid-flight (SIGKILL to lil while the server holds the
request), then: every verb reports the run uncertain, naming the effect with
its identity cut to its first 4 KiB and its size (stdout of `--json`, and
the text a terminal sees, stay small); `lil log` and `lil inspect` show the
intent small and the whole request in a record of its own; recover
--assume-done takes the result without calling again, recover --retry calls
once more with the same request; a completed effect is never called again
(the ledger and the server count the calls).  A big effect that is not
killed completes and replays in the same way."""

import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, test  # noqa: E402

LLM_SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "http",
                          "llm_server.py")
KEY = "sk-big-effect-0a1b2c3d"
MIB = 1024 * 1024
SMALL = 64 * 1024  # what a terminal or --json may receive for such a run

AGENT = """
    loopspec: "0.1"
    id: ask
    pattern: react
    inputs:
      prompt: {type: string}
    state:
      vars:
        ok: {type: boolean, init: false}
        n: {type: int, init: 0}
    body:
      - id: think
        kind: agent
        harness: llm
        prompt: "${inputs.prompt}"
        save: {ok: "$.ok"}
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 1}"}
    caps: {max_iterations: 3}
"""

HTTP = """
    loopspec: "0.1"
    id: post
    pattern: react
    inputs:
      body: {type: string}
    state:
      vars:
        got: {type: int, init: 0}
        n: {type: int, init: 0}
    body:
      - id: upload
        kind: http
        request:
          method: POST
          url: "@URL@/hold"
          headers: {Content-Type: text/plain}
          body: "${inputs.body}"
        save: {got: "$.len"}
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 1}"}
    caps: {max_iterations: 3}
"""


def prompt_of(n):
    """n bytes of text with multi-byte characters (cut points fall inside
    them) and the quotes and newlines that JSON escapes."""
    unit = 'prompt "é" line\n'
    text = (unit * (n // len(unit.encode()) + 1)).encode()[:n]
    return text.decode("utf-8", "ignore")


class HoldServer(loopt.Server):
    """loopt.Server with /hold: answers {"len": bytes received} once
    released (at once after release())."""

    def __init__(self):
        self.go = threading.Event()
        super().__init__()

    def release(self):
        self.go.set()

    def route(self, h, req):
        if req["path"] == "/hold":
            self.go.wait(60)
            try:
                self.reply(h, 200, "application/json",
                           json.dumps({"len": len(req["body"].encode())}))
            except OSError:  # the client was killed while the request was held
                pass
        else:
            super().route(h, req)


def start_llm(t, ledger):
    p = subprocess.Popen([sys.executable, LLM_SERVER, "--ledger", ledger],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    t._procs.append(p)
    return "http://127.0.0.1:%d" % int(p.stdout.readline())


def llm_env(t, url):
    for name in list(t.env):
        if name.startswith(("LIL_LLM_", "LOOPY_LLM_", "LIL_AGENT_", "LOOPY_AGENT_")) \
                or name.endswith("_API_KEY"):
            del t.env[name]
    t.env.update({"LIL_LLM_BASE_URL": url, "LIL_LLM_API_KEY": KEY,
                  "LOOPY_LLM_MODEL": "openai/gpt-4o-mini"})


def calls(ledger):
    try:
        with open(ledger, encoding="utf-8") as f:
            return len(f.read().splitlines())
    except FileNotFoundError:
        return 0


def kill_mid_call(t, proc, in_flight, what):
    """Wait until the server holds the call (in_flight()), then SIGKILL lil."""
    t.wait_for(in_flight, what, timeout=60, proc=proc)
    proc.kill()
    res = t.finish(proc)
    eq(res.rc, -9, "lil was killed in the middle of the call")


def check_uncertain(t, run_id, kind, full_len):
    """Every way of looking at the run says uncertain and shows the effect
    small: its identity cut, with its size."""
    obj = expect(t.run("--run-id", run_id, verb="resume"), 2, status="uncertain")
    check(len(t.last.out) < SMALL, "--json is %d bytes" % len(t.last.out))
    u = obj.get("uncertain") or {}
    eq((u.get("kind"), u.get("identity_cut"), u.get("identity_len")),
       (kind, True, full_len), "the uncertain effect in the result")
    check(len(u.get("identity", "").encode()) <= 4096, "the identity is cut to 4 KiB")
    res = t.lil("resume", t.spec_path, "--run-id", run_id)
    eq(res.rc, 2, "resume without --json")
    check(len(res.out) + len(res.err) < 4096 and "(%d bytes)" % full_len in res.out,
          "the text names the effect cut, with its size: %r" % res.out[:600])
    for args in (("log", run_id), ("inspect", run_id)):
        res = t.lil(*args)
        check(len(res.out) < SMALL, "`lil %s` printed %d bytes" % (" ".join(args),
                                                                   len(res.out)))
    doc = json.loads(t.lil("inspect", run_id, "--json").out)
    eq(t.last.rc, 2, "inspect of an uncertain run exits 2")
    (doc.get("loop") or {}).pop("inputs", None)  # the run's inputs, as given
    check(len(json.dumps(doc)) < SMALL, "`lil inspect --json` holds %d bytes besides "
          "the inputs" % len(json.dumps(doc)))
    recs = t.log(run_id)
    req = [r for r in recs if r.type == "request"]
    intent = [r for r in recs if r.type == "intent"]
    eq((len(req), len(intent)), (1, 1), "one request record, one intent")
    eq(len(req[0].payload.encode()), len(kind) + 1 + full_len,
       "the request record holds the whole identity")
    check(intent[0].size < 2048, "the intent is small: %d bytes" % intent[0].size)


def big_agent(t, recover_args, want_calls):
    ledger = t.path("ledger.jsonl")
    url = start_llm(t, ledger)
    prompt = prompt_of(MIB)
    inputs = t.write("in.json", json.dumps({"prompt": prompt}))
    t.spec(AGENT)
    llm_env(t, url + "/bill/60000/v1")  # billed on arrival, answered a minute later
    p = t.spawn("run", t.spec_path, "--json", "--run-id", "big", "--inputs", inputs)
    kill_mid_call(t, p, lambda: calls(ledger) == 1, "the llm call")
    identity = json.dumps({"harness": "llm", "prompt": prompt}, ensure_ascii=False,
                          separators=(",", ":"))
    check_uncertain(t, "big", "agent", len(identity.encode()) + t_extra(t, "big"))
    eq(calls(ledger), 1, "no call while uncertain")
    llm_env(t, url + "/bill/v1")  # answers at once
    expect(t.run("--run-id", "big", *recover_args, verb="recover"), 0,
           status="completed")
    eq(calls(ledger), want_calls, "llm calls after the recovery")
    expect(t.run("--run-id", "big", "--inputs", inputs), 0, status="completed")
    eq(calls(ledger), want_calls, "a completed call is never made again")


def t_extra(t, run_id):
    """The identity's bytes beyond {"harness","prompt"}: the journaled one
    is the measure (tools and options the harness adds)."""
    recs = t.log(run_id)
    req = [r for r in recs if r.type == "request"][0].payload
    ident = json.loads(req.split(" ", 1)[1])
    prompt_only = json.dumps({"harness": ident["harness"], "prompt": ident["prompt"]},
                             ensure_ascii=False, separators=(",", ":"))
    check(ident["prompt"] == prompt_of(MIB), "the journaled prompt is the prompt")
    return len(req.split(" ", 1)[1].encode()) - len(prompt_only.encode())


@test
def agent_1mib_prompt_killed_then_assumed_done(t):
    big_agent(t, ("--assume-done", "--result-json", '{"ok": true}', "--reason", "seen"), 1)


@test
def agent_1mib_prompt_killed_then_retried(t):
    big_agent(t, ("--retry", "--reason", "again"), 2)


def big_http(t, recover_args, want_requests):
    srv = HoldServer()
    t._servers.append(srv)
    body = prompt_of(10 * MIB)
    inputs = t.write("in.json", json.dumps({"body": body}))
    t.spec(HTTP, URL="http://127.0.0.1:%d" % srv.port)
    p = t.spawn("run", t.spec_path, "--json", "--run-id", "up", "--inputs", inputs)
    kill_mid_call(t, p, lambda: srv.count("/hold") == 1, "the http request")
    recs = t.log("up")
    ident = [r for r in recs if r.type == "request"][0].payload.split(" ", 1)[1]
    eq(json.loads(ident).get("body"), body, "the journaled request has the whole body")
    check_uncertain(t, "up", "http", len(ident.encode()))
    eq(srv.count("/hold"), 1, "no request while uncertain")
    srv.release()
    res = expect(t.run("--run-id", "up", *recover_args, verb="recover"), 0,
                 status="completed")
    eq(srv.count("/hold"), want_requests, "requests after the recovery")
    if want_requests == 2:
        eq(res["state"]["got"], len(body.encode()), "the server got the whole body")
        eq(srv.requests[-1]["body"], body, "the body sent again")
    expect(t.run("--run-id", "up", "--inputs", inputs), 0, status="completed")
    eq(srv.count("/hold"), want_requests, "a completed request is never sent again")


@test
def http_10mib_body_killed_then_retried(t):
    big_http(t, ("--retry", "--reason", "again"), 2)


@test
def http_10mib_body_killed_then_assumed_done(t):
    big_http(t, ("--assume-done", "--result-json", '{"len": 1}', "--reason", "seen"), 1)


@test
def big_effect_completes_and_replays(t):
    """Not killed: the 10 MiB request goes once, the run completes, and
    running it again sends nothing; `lil log` stays quick for the other
    records."""
    srv = HoldServer()
    t._servers.append(srv)
    srv.release()
    body = prompt_of(10 * MIB)
    inputs = t.write("in.json", json.dumps({"body": body}))
    t.spec(HTTP, URL="http://127.0.0.1:%d" % srv.port)
    expect(t.run("--run-id", "ok", "--inputs", inputs), 0, status="completed",
           state={"got": len(body.encode()), "n": 1})
    expect(t.run("--run-id", "ok", "--inputs", inputs), 0, status="completed")
    eq(srv.count("/hold"), 1, "requests")
    t0 = time.monotonic()
    res = t.lil("log", "ok")
    eq(res.rc, 0, "lil log")
    check(len(res.out) < SMALL, "`lil log` printed %d bytes" % len(res.out))
    check(time.monotonic() - t0 < 10, "lil log took %.1fs" % (time.monotonic() - t0))


if __name__ == "__main__":
    loopt.main()

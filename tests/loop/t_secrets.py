#!/usr/bin/env python3
"""t_secrets.py -- secrets that must reach no journal byte and no message
(docs/security.md, "Secrets and usage"): a secret as a JSON object key or as
a JSON number in a result, an input named like a secret, credentials in
the llm harness's base URL, credential headers across a redirect to
another origin, the keyed digests of credential headers; and the usage a
provider reports: missing or invalid usage counted at the call's
reservation, and said so by `lil inspect`."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, test  # noqa: E402


def no_secret(t, run_id, secrets, outputs, env=None):
    """No secret in outputs ({name: text}), in what lil log and lil inspect
    print of run_id, nor in any byte of the store."""
    outputs = dict(outputs)
    for name, args in (("lil log", ("log", run_id)),
                       ("lil log --jsonl", ("log", run_id, "--jsonl")),
                       ("lil inspect", ("inspect", run_id)),
                       ("lil inspect --json", ("inspect", run_id, "--json"))):
        r = t.lil(*args, env=env)
        eq(r.rc, 0, name + " exit status")
        outputs[name] = r.out + r.err
    for s in secrets:
        for name, text in outputs.items():
            check(s not in text, "%r is in the output of %s" % (s, name))
        for f, data in t.store_bytes():
            check(s.encode() not in data, "%r is in the bytes of %s" % (s, f))


KEYS = """
    loopspec: "0.1"
    id: keys
    pattern: react
    state:
      vars:
        got: {type: json}
        n: {type: int, init: 0}
    body:
      - id: emit
        kind: shell
        cmd: "printf '{\\"%s\\": {\\"pin\\": %s, \\"ok\\": 1}}' ${env.MY_API_TOKEN} ${env.MY_PIN_SECRET}"
        save: {got: "$"}
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 1}"}
    caps: {max_iterations: 2}
"""
TOKEN = "tok-5ecr3t-6f1d2a9c7b"
PIN = "73519864"


@test
def secret_keys_and_numbers(t):
    """A result whose object key is a secret, and a secret of digits that
    the result holds as a JSON number: neither is journaled nor printed;
    the run goes on with what was journaled."""
    env = {"MY_API_TOKEN": TOKEN, "MY_PIN_SECRET": PIN}
    t.spec(KEYS)
    res = t.run(env=env)
    got = expect(res, 0, status="completed")["state"].get("got")
    eq(got, {"[redacted]": {"pin": "[redacted]", "ok": 1}}, "the result as the loop saw it")
    again = expect(t.run(env=env), 0, status="completed")
    eq(again["state"].get("got"), got, "the replay")
    no_secret(t, "keys", [TOKEN, PIN], {"lil run": res.out + res.err}, env=env)


INPUTS = """
    loopspec: "0.1"
    id: sin
    pattern: react
    inputs:
      api_key: {type: string, required: true}
      n_max: {type: int, default: 2}
    state:
      vars:
        n: {type: int, init: 0}
        got: {type: json}
    body:
      - id: use
        kind: shell
        cmd: "printf '{\\"k\\": \\"%s\\"}' ${shq(inputs.api_key)}; echo ${shq(inputs.api_key)} >> @SIDE@.k"
        save: {got: "$"}
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= inputs.n_max}"}
    caps: {max_iterations: 5, budget: {wallclock: 1h}}
"""
INPUT_KEY = "sk-live-0123456789abc"


@test
def secret_inputs_are_never_journaled(t):
    """--input api_key=...: the start record holds a seal, not the value;
    the value is redacted from results and messages; a resume without it
    is refused naming the input and how to give it, nothing written; a
    resume with another value is refused without showing either; the
    environment variable (API_KEY) gives it again; every step saw the
    real value."""
    t.spec(INPUTS)
    first = t.run("--input", "api_key=" + INPUT_KEY, verb="step")
    expect(first, 4, status="waiting")
    before = t.journal_bytes("sin")
    res = t.run(verb="step")
    expect(res, 1)
    check("input 'api_key' is a secret, never journaled" in res.err and
          "--input api_key=VALUE" in res.err and "API_KEY" in res.err,
          "the refusal says what to give: %r" % res.err)
    eq(t.journal_bytes("sin"), before, "nothing written by the refused resume")
    other = t.run("--input", "api_key=sk-other-value-999", verb="step")
    expect(other, 1)
    check("not the value the run started with" in other.err, "another value: %r" % other.err)
    check("sk-other-value-999" not in other.out + other.err, "the other value is shown")
    eq(t.journal_bytes("sin"), before, "nothing written by the refused value")
    last = t.run(env={"API_KEY": INPUT_KEY})
    got = expect(last, 0, status="completed")["state"]["got"]
    eq(got, {"k": "[redacted]"}, "the value in a result is redacted")
    with open(t.side_path + ".k", encoding="utf-8") as f:
        eq(f.read().split(), [INPUT_KEY] * 2, "each step saw the value")
    start = [r.p for r in t.log("sin") if r.key == "loop"][0]
    check(start["inputs"]["api_key"]["secret"].startswith("hmac-sha256:"),
          "the start record holds a seal: %r" % start["inputs"])
    eq(start["inputs"]["n_max"], 2, "other inputs are journaled as they are")
    no_secret(t, "sin", [INPUT_KEY], {"lil step": first.out + first.err,
                                      "lil run": last.out + last.err})


SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "http",
                      "llm_server.py")
_LLM_DROP = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY",
             "OPENROUTER_API_KEY", "AI_GATEWAY_API_KEY", "http_proxy", "HTTP_PROXY",
             "all_proxy", "ALL_PROXY")


def llm_server(t, *args):
    """tests/http/llm_server.py, ended by the test's cleanup; its base URL
    http://127.0.0.1:PORT."""
    for name in list(t.env):
        if name in _LLM_DROP or name.startswith(("LIL_LLM_", "LOOPY_LLM_", "LIL_AGENT_",
                                                 "LOOPY_AGENT_")):
            del t.env[name]
    p = subprocess.Popen([sys.executable, SERVER] + list(args), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
    t._procs.append(p)
    return "127.0.0.1:%d" % int(p.stdout.readline())


ASK = """
    loopspec: "0.1"
    id: ask
    pattern: react
    state:
      vars:
        got: {type: json}
        n: {type: int, init: 0}
    body:
      - id: think
        kind: agent
        harness: llm
        prompt: "round ${state.n}"
        save: {got: "$"}
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= @N@}"}
    caps:
      max_iterations: 10
@BUDGET@
"""


@test
def llm_base_url_credentials(t):
    """Credentials in the llm harness's base URL (user:password@, a key in
    its query) and in a secret header of LLM_HEADERS, echoed back by the
    server in an error (as Basic credentials, the path, the headers): the
    failure names none of them, in no output and no journal byte."""
    host = llm_server(t)
    pw, qkey, hkey = "pa55-w0rd-77x1", "qk-5ecret-1234", "hk-5ecret-5678"
    basic = "dXNlcjpwYTU1LXcwcmQtNzd4MQ=="  # base64("user:" + pw)
    t.spec(ASK, N=1, BUDGET="")
    cases = (("userinfo", {"LIL_LLM_BASE_URL": "http://user:%s@%s/echoerr/401/v1" % (pw, host)},
              "Basic [redacted]"),
             ("query", {"LIL_LLM_BASE_URL": "http://%s/echoerr/401/v1?api-key=%s" % (host, qkey)},
              "api-key=[redacted]"),
             ("header", {"LIL_LLM_BASE_URL": "http://%s/echoerr/401/v1" % host,
                         "LIL_LLM_HEADERS": json.dumps({"X-Api-Key": hkey})},
              "\"X-Api-Key\": \"[redacted]\""))
    outs = {}
    for name, env, shown in cases:
        res = t.run("--run-id", name, env=env)
        expect(res, 1, status="failed", reason_has=shown)
        outs["lil run " + name] = res.out + res.err
    for name, _, _ in cases:
        no_secret(t, name, [pw, qkey, hkey, basic], outs)


SYSTEM_BYTES = 149  # the llm harness's system message (tests/http/llm_server.py)
BAD_USAGE = (("neg", "prompt_tokens is negative"),
             ("zero", "prompt_tokens is 0 for a call that answered"),
             ("huge", "completion_tokens is more than one call uses"),
             ("frac", "prompt_tokens is not a whole number"),
             ("str", "prompt_tokens is not a number"),
             ("cost", "cost is not a number in [0, 1e+06]"))


def outcome_usages(t, run_id):
    return [r.p.get("usage") for r in t.log(run_id) if r.is_effect_outcome()]


@test
def invalid_usage_counts_at_reservation(t):
    """A provider that reports a usage that is none (negative, zero for a
    call that answered, absurd, fractional, not a number, a negative cost):
    against a token budget the call counts at its reservation (prompt bytes
    + 16 of framing + the 2000 it may write), live and when the journal is
    read back; inspect says which call and why, in text and --json."""
    host = llm_server(t)
    reserve = SYSTEM_BYTES + len("round 0") + 16 + 2000
    t.spec(ASK, N=1, BUDGET="      budget: {tokens: 100000}")
    for kind, why in BAD_USAGE:
        env = {"LIL_LLM_BASE_URL": "http://%s/usage/%s/v1" % (host, kind),
               "LIL_LLM_MODEL": "my-local-model"}
        run = "u-" + kind
        expect(t.run("--run-id", run, env=env), 0, status="completed")
        [u] = outcome_usages(t, run)
        eq((u.get("unreported"), u.get("at_reservation")), (why, True),
           kind + ": the outcome's usage says why, and that it counts at the reservation")
        text = t.lil("inspect", run).out
        check("counted at its reservation: %d tokens (my-local-model), usage not counted: "
              "%s" % (reserve, why) in text, kind + ": inspect's line:\n" + text)
        loop = json.loads(t.lil("inspect", run, "--json").out)["loop"]
        eq(loop["meters"]["tokens"], reserve, kind + ": the meters count the reservation")
        eq(loop["usage"]["at_reservation_calls"], 1, kind + ": calls at their reservation")
        call = loop["history"][0]["effects"][0]
        eq((call["at_reservation"], call["unreported"]), (True, why), kind + ": the call")
        # read back (a resumed run folds its journal): the same meters
        again = expect(t.run("--run-id", run, env=env), 0, status="completed")
        eq(json.loads(t.lil("inspect", run, "--json").out)["loop"]["meters"]["tokens"],
           reserve, kind + ": the meters read back")
        check(again is not None, kind)
    # a good usage is believed: 3 + 2 tokens
    env = {"LIL_LLM_BASE_URL": "http://%s/text/v1" % host, "LIL_LLM_MODEL": "my-local-model"}
    expect(t.run("--run-id", "good", env=env), 0, status="completed")
    eq(outcome_usages(t, "good"), [{"tokens": 5, "model": "my-local-model"}], "a good usage")
    # without a budget nothing is reserved: the estimate counts, marked
    t.spec(ASK, N=1, BUDGET="")
    env = {"LIL_LLM_BASE_URL": "http://%s/usage/neg/v1" % host,
           "LIL_LLM_MODEL": "my-local-model"}
    expect(t.run("--run-id", "free", env=env), 0, status="completed")
    [u] = outcome_usages(t, "free")
    eq((u.get("estimated"), u.get("unreported"), u.get("at_reservation")),
       (True, "prompt_tokens is negative", None), "no budget: the estimate, and why")


class Redirector:
    """An HTTP/1.0 server on 127.0.0.1 (another port: another origin) whose
    /r/CODE/PORT/PATH answers CODE with Location
    http://127.0.0.1:PORT/PATH; every request kept as loopt.Server keeps
    them."""

    def __init__(self, t):
        self.srv = t.server()
        self.srv.route = self.route
        self.requests = self.srv.requests
        self.port = self.srv.port

    def route(self, h, req):
        parts = req["path"].split("/", 4)  # "", "r", CODE, PORT, PATH
        if len(parts) == 5 and parts[1] == "r":
            h.send_response_only(int(parts[2]))
            h.send_header("Location", "http://127.0.0.1:%s/%s" % (parts[3], parts[4]))
            h.send_header("Content-Length", "0")
            h.end_headers()
        else:
            loopt.Server.route(self.srv, h, req)


REDIRECT = """
    loopspec: "0.1"
    id: redir
    pattern: react
    state:
      vars:
        got: {type: json}
        n: {type: int, init: 0}
    body:
      - id: call
        kind: http
        request:
          method: @METHOD@
          url: "@URL@"
          headers:
            Authorization: "Bearer ${env.MY_API_TOKEN}"
            X-Api-Key: "${env.MY_API_TOKEN}"
            X-Vendor-Token: "${env.MY_API_TOKEN}"
            X-Session-Id: "sess-1"
            Cookie: "a=b"
            X-Plain: "plain-1"
@BODY@
        save: {got: "$"}
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 1}"}
    caps: {max_iterations: 2}
"""
CREDENTIAL_HEADERS = ("authorization", "x-api-key", "x-vendor-token", "x-session-id",
                      "cookie")


@test
def redirect_to_another_origin(t):
    """A redirect to another port (another origin) drops every header lil
    classes as a credential, keeps the others; the same origin keeps them
    all; a 307 or 308 of a body to another origin is refused, the body not
    sent, and the run fails without retrying."""
    env = {"MY_API_TOKEN": TOKEN}
    target = t.server()
    red = Redirector(t)
    for code, method, body in (("302", "GET", ""), ("307", "GET", ""),
                               ("301", "POST", "          body: {k: 1}")):
        del target.requests[:]
        url = "http://127.0.0.1:%d/r/%s/%d/echo" % (red.port, code, target.port)
        t.spec(REDIRECT, URL=url, METHOD=method, BODY=body)
        expect(t.run("--run-id", "r" + code, env=env), 0, status="completed")
        eq(len(target.requests), 1, "%s: requests that reached the other origin" % code)
        seen = target.requests[0]["headers"]
        for h in CREDENTIAL_HEADERS:
            check(h not in seen, "%s: %s went to the other origin: %r" % (code, h, seen))
        eq(seen.get("x-plain"), "plain-1", "%s: a header that is no credential" % code)
    # the same origin: everything goes along
    del red.requests[:]
    t.spec(REDIRECT, URL="http://127.0.0.1:%d/r/307/%d/echo" % (red.port, red.port),
           METHOD="POST", BODY="          body: {k: 1}")
    expect(t.run("--run-id", "same", env=env), 0, status="completed")
    seen = red.requests[-1]
    eq(seen["path"], "/echo", "the same origin's redirect was followed")
    for h in CREDENTIAL_HEADERS:
        check(h in seen["headers"], "the same origin lost %s" % h)
    eq(seen["body"], '{"k":1}', "the same origin gets the body again")
    # a body to another origin: refused, nothing sent there
    for code in ("307", "308"):
        del target.requests[:]
        url = "http://127.0.0.1:%d/r/%s/%d/echo" % (red.port, code, target.port)
        t.spec(REDIRECT, URL=url, METHOD="POST", BODY="          body: {k: 1}")
        before = len(red.requests)
        res = t.run("--run-id", "body" + code, env=env)
        expect(res, 1, status="failed", reason_has="another origin")
        eq(target.requests, [], "%s: the other origin got nothing" % code)
        eq(len(red.requests) - before, 1, "%s: not retried" % code)
    no_secret(t, "body308", [TOKEN], {"lil run": res.out + res.err}, env=env)


DIGEST = """
    loopspec: "0.1"
    id: digest
    pattern: react
    state:
      vars:
        got: {type: json}
        n: {type: int, init: 0}
    body:
      - id: call
        kind: http
        request:
          method: GET
          url: "@URL@/json"
          headers: {X-Db-Password: "${env.MY_DB_PASSWORD}"}
        save: {got: "$"}
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 2}"}
    caps: {max_iterations: 3}
"""


@test
def credential_digests_are_keyed(t):
    """A weak password in a credential header: the identity journaled and
    recorded in a cassette holds its HMAC under the run's own key, never
    its plain SHA-256 (which anyone holding the cassette could test
    guesses against); two runs digest it differently; the cassette still
    replays in another store, with another password or none."""
    import hashlib
    pw = "hunter22"
    plain = hashlib.sha256(pw.encode()).hexdigest()
    srv = t.server()
    t.spec(DIGEST, URL=srv.url(""))
    env = {"MY_DB_PASSWORD": pw}
    expect(t.run("--run-id", "a", "--record", "c.jsonl", env=env), 0, status="completed")
    expect(t.run("--run-id", "b", env=env), 0, status="completed")
    with open(t.path("c.jsonl"), encoding="utf-8") as f:
        tape = f.read()
    check(plain not in tape, "the plain SHA-256 of the password is in the cassette")
    check("hmac-sha256:" in tape, "the cassette holds keyed digests: %r" % tape[:300])
    for run in ("a", "b"):
        for _, data in t.store_bytes():
            check(plain.encode() not in data, "the plain digest is in the store")
    ids = [[r.p["identity"] for r in t.log(run) if r.is_effect_outcome()]
           for run in ("a", "b")]
    check(ids[0] and ids[1] and "hmac-sha256:" in ids[0][0] and ids[0][0] != ids[1][0],
          "two runs, two digests of one password: %r" % ids)
    replay = t.lil("--dir", t.path("other"), "run", t.spec_path, "--json", "--replay",
                   "c.jsonl", env={"MY_DB_PASSWORD": "another-one"})
    expect(replay, 0, status="completed")
    eq(len(srv.requests), 4, "the replay called nothing")


@test
def pg_uri_password_keys(t):
    """A PostgreSQL URI whose password is given under a percent-encoded key
    (libpq decodes keys: pass%77ord is password), in either case of hex, or
    as sslpassword: the value is "***" in every message (no server is
    needed: the store cannot be reached, and the message names it)."""
    pw = "s3cr3t-pw-4a1b"
    base = "postgresql:///x?host=/nonexistent"
    for key in ("pass%77ord", "pass%57ord", "%70assword", "%70%61%73%73word",
                "password", "sslpassword", "Pass%77ord"):
        uri = "%s&%s=%s" % (base, key, pw)
        for how in ("--dir", "LIL_DIR"):
            argv = [loopt.LIL, "--dir", uri, "ls"] if how == "--dir" else [loopt.LIL, "ls"]
            p = subprocess.run(argv, cwd=t.dir, capture_output=True,
                               env=dict(t.env, LIL_DIR=uri))
            r = t.last = loopt.Result(argv, p.returncode, p.stdout.decode(),
                                      p.stderr.decode(), 0)
            eq(r.rc, 1, "lil ls with %s %s: exit status" % (how, key))
            check("PostgreSQL" in r.err, "the message names the store: %r" % r.err)
            check(pw not in r.out + r.err, "the password is in the message of lil ls "
                  "with %s %s: %r" % (how, key, r.err))
            check(key + "=***" in r.err, "the key is shown, its value hidden: %r" % r.err)


loopt.main()

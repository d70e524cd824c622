#!/usr/bin/env python3
"""t_http.py -- http steps through `lil run` against a server of the test
(loopt.Server, 127.0.0.1): the results of docs/loopspec.md, "Effects" (the parsed
body, `{status, raw}` for a body that is not JSON, the envelope, error
statuses as results), what the server received, a credential that must
appear in no output and no journal byte, and the retry policy (`retry.max`,
docs/loopspec.md, "Retry"): a request that gets no answer is tried 1 + max times, then
the run fails."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, test  # noqa: E402

RESULTS = """
    loopspec: "0.1"
    id: web
    pattern: react
    state:
      vars:
        green: {type: json}
        raw503: {type: json}
        env503: {type: json}
        envplain: {type: json}
        posted: {type: json}
        done: {type: boolean, init: false}
    body:
      - id: green
        kind: http
        request: {method: GET, url: "@URL@/json"}
        save: {green: "$"}
      - id: text503
        kind: http
        request: {method: GET, url: "@URL@/text503"}
        save: {raw503: "$"}
      - id: json503
        kind: http
        envelope: true
        request: {method: GET, url: "@URL@/json503"}
        save: {env503: "$"}
      - id: plain
        kind: http
        envelope: true
        request: {method: GET, url: "@URL@/plain"}
        save: {envplain: "$"}
      - id: post
        kind: http
        request:
          method: POST
          url: "@URL@/echo"
          headers: {X-Iteration: "it-${iteration}"}
          body: {k: [1, 2], s: "${state.done}"}
        save: {posted: "$"}
        on_done: {set: {done: "${true}"}}
    terminate: {signal: oracle, until: "${state.done}"}
    caps: {max_iterations: 2}
"""


@test
def http_results(t):
    srv = t.server()
    t.spec(RESULTS, URL=srv.url(""))
    res = expect(t.run(), 0, status="completed", iteration=1)
    st = res["state"]
    eq(st.get("green"), {"state": "green"}, "a JSON body")
    eq(st.get("raw503"), {"status": 503, "raw": "not json"}, "a body that is not JSON")
    eq(st.get("env503"), {"status": 503, "ok": False,
                          "headers": {"content-type": "application/json",
                                      "content-length": "15"},
                          "body": {"state": "red"}}, "an envelope of a JSON 503")
    eq(st.get("envplain"), {"status": 200, "ok": True,
                            "headers": {"content-type": "text/plain",
                                        "content-length": "8"},
                            "body": "plain ok"}, "an envelope of a text body")
    posted = st.get("posted") or {}
    eq(posted.get("method"), "POST", "method the server saw")
    eq(posted.get("body"), '{"k":[1,2],"s":"${state.done}"}',
       "a body that is not a string: JSON, never rendered")
    eq(posted.get("headers", {}).get("x-iteration"), "it-0", "a rendered header")
    eq(posted.get("headers", {}).get("content-type"), "text/plain;charset=UTF-8",
       "content type of a JSON body (as fetch labels a string)")
    for path in ("/json", "/text503", "/json503", "/plain", "/echo"):
        eq(srv.count(path), 1, "requests to " + path)
    expect(t.run(), 0, status="completed", iteration=1)
    eq(len(srv.requests), 5, "requests after running the completed run again")


SECRET = """
    loopspec: "0.1"
    id: secret
    pattern: react
    state:
      vars:
        auth: {type: json}
        n: {type: int, init: 0}
    body:
      - id: call
        kind: http
        request:
          method: GET
          url: "@URL@/echo"
          headers: {Authorization: "Bearer ${env.MY_API_TOKEN}"}
        save: {auth: "$.headers.authorization"}
      - id: count
        kind: shell
        cmd: "echo ${env.MY_API_TOKEN} | wc -c"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 1}"}
    caps: {max_iterations: 2}
"""
TOKEN = "tok-5ecr3t-6f1d2a9c7b"


@test
def http_secret_never_written(t):
    srv = t.server()
    t.spec(SECRET, URL=srv.url(""))
    res = t.run(env={"MY_API_TOKEN": TOKEN})
    expect(res, 0, status="completed", iteration=1)
    eq([r["headers"].get("authorization") for r in srv.requests], ["Bearer " + TOKEN],
       "the Authorization header the server received")
    auth = res.json["state"].get("auth")
    check(isinstance(auth, str) and auth.startswith("Bearer ") and TOKEN not in auth,
          "the echoed header is in the state, redacted: %r" % auth)
    outputs = {"lil run --json": res.out + res.err}
    for name, args in (("lil log", ("log", "secret")),
                       ("lil log --jsonl", ("log", "secret", "--jsonl")),
                       ("lil log --json", ("log", "secret", "--json")),
                       ("lil inspect", ("inspect", "secret")),
                       ("lil run again", ("run", t.spec_path, "--json"))):
        r = t.lil(*args, env={"MY_API_TOKEN": TOKEN})
        eq(r.rc, 0, name + " exit status")
        outputs[name] = r.out + r.err
    for name, text in outputs.items():
        check(TOKEN not in text, "the token is in the output of " + name)
    for f, data in t.store_bytes():
        check(TOKEN.encode() not in data, "the token is in the bytes of " + f)


RETRY = """
    loopspec: "0.1"
    id: retry
    pattern: react
    @RETRY@
    state:
      vars:
        r: {type: json}
        n: {type: int, init: 0}
    body:
      - id: flaky
        kind: http
        request: {method: GET, url: "@URL@"}
        save: {r: "$"}
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 1}"}
    caps: {max_iterations: 2}
"""


@test
def http_retry_then_fail(t):
    srv = t.server()
    t.spec(RETRY, URL=srv.url("/drop"), RETRY="retry: {max: 2, backoff_ms: 10}")
    expect(t.run(), 1, status="failed", iteration=0, state={"n": 0}, reason_has="/drop")
    eq(srv.count("/drop"), 3, "attempts (1 + retry.max)")
    expect(t.run(), 1, status="failed", iteration=0)
    eq(srv.count("/drop"), 3, "attempts after running the failed run again")


@test
def http_no_retry_by_default(t):
    srv = t.server()
    t.spec(RETRY, URL=srv.url("/drop"), RETRY="")
    expect(t.run(), 1, status="failed", iteration=0, reason_has="/drop")
    eq(srv.count("/drop"), 1, "attempts without retry")


@test
def http_closed_port_fails(t):
    port = loopt.closed_port()
    t.spec(RETRY, URL="http://127.0.0.1:%d/nothing" % port,
           RETRY="retry: {max: 1, backoff_ms: 10}")
    expect(t.run(), 1, status="failed", iteration=0, reason_has=str(port))


if __name__ == "__main__":
    loopt.main()

#!/usr/bin/env python3
"""t_verify.py -- `lil verify` and `lil score` over whole specs: every
reference example, every spec `lil new` writes, and requests a dry run's
mock answers although a real run would refuse to send them.

A dry run sends nothing: an http step whose URL comes from an input that
verify samples as "x" is answered by the mock like any other, and the
report says, in an `unsendable-request` issue, that a real run needs a real
URL there (docs/loops.md, "Verify and score").  `lil run` with the same
input still fails before anything is sent.
"""

import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, test  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "data", "reference-examples")
PATTERNS = ["react", "plan-execute-reflect", "evaluator-optimizer", "loop-until-dry",
            "map-reduce", "poll-until", "cron"]


def verify_ok(t, path, *args):
    """`lil verify PATH --json` and `lil score PATH --json` both exit 0 with
    an ok report; returns verify's report."""
    rep = expect(t.lil("verify", path, "--json", *args), 0)
    check(rep["ok"] and rep["bounded"] and rep["deterministic"] and rep["resumeStable"],
          "%s: verify passes" % os.path.basename(path))
    score = expect(t.lil("score", path, "--json", *args), 0)
    check(score["ok"], "%s: score's report is ok" % os.path.basename(path))
    check(0 <= score["score"]["total"] <= 100, "a total out of 100")
    return rep


def codes(rep, code):
    return [i for i in rep["issues"] if i["code"] == code]


@test
def every_reference_example_verifies(t):
    files = sorted(glob.glob(os.path.join(EXAMPLES, "*.yaml")))
    eq(len(files), 13, "reference examples")
    for f in files:
        with t.soft():
            rep = verify_ok(t, f)
            check(rep["dryRun"]["status"] != "failed" or
                  "http request" not in rep["dryRun"].get("reason", ""),
                  "%s: no dry run fails on a request it never sends" % f)


@test
def every_blueprint_and_pattern_verifies(t):
    res = t.lil("new", "--list", "--json")
    names = [b["name"] for b in expect(res, 0)]
    check(len(names) >= 7, "blueprints listed")
    made = []
    for name in names:
        made.append(t.path("b-%s.yaml" % name))
        eq(t.lil("new", "b-" + name, "--blueprint", name, "--out", made[-1]).rc, 0,
           "lil new --blueprint " + name)
    for p in PATTERNS:
        made.append(t.path("p-%s.yaml" % p))
        eq(t.lil("new", "p-" + p, "--pattern", p, "--out", made[-1]).rc, 0,
           "lil new --pattern " + p)
    made.append(t.path("shell.yaml"))
    eq(t.lil("new", "sh", "--from-shell", "true", "--until", "state.code == 0",
             "--out", made[-1]).rc, 0, "lil new --from-shell")
    for path in made:
        with t.soft():
            verify_ok(t, path)


URL_FROM_INPUT = """
loopspec: "0.1"
id: poll
pattern: poll-until
inputs:
  status_url: { type: string, required: true }
state: { vars: { status: { type: string, init: "" } } }
body:
  - id: fetch
    kind: http
    request: { method: GET, url: "${inputs.status_url}" }
    save: { status: "$.status" }
terminate: { signal: oracle, until: "${state.status == 'ready'}" }
caps: { max_iterations: 5 }
"""


@test
def url_from_a_sampled_input_is_answered_and_noted(t):
    spec = t.spec(URL_FROM_INPUT)
    fx = t.write("fx.json", '{"http": {"status": "ready"}}')
    rep = verify_ok(t, spec, "--fixtures", fx)
    eq((rep["dryRun"]["status"], rep["dryRun"]["iteration"]), ("completed", 1),
       "the mock's answer ends the loop")
    eq(rep["dryRun"]["state"]["status"], "ready", "saved from the fixture")
    notes = codes(rep, "unsendable-request")
    eq(len(notes), 1, "one note for the step, however often it ran")
    eq(notes[0]["severity"], "info", "a sampled input: info")
    check("step 'fetch'" in notes[0]["message"] and
          "sample inputs" in notes[0]["message"] and
          "url is not an http: or https: URL" in notes[0]["message"],
          "the note names the step, the samples and the reason")
    text = t.lil("verify", spec, "--fixtures", fx)
    eq(text.rc, 0, "exit status of verify (text)")
    check(text.out.startswith("\u2713 verify PASSED"), "verify PASSED")
    check("[unsendable-request]" in text.out, "the note is printed")


@test
def without_a_fixture_it_ends_on_its_cap(t):
    spec = t.spec(URL_FROM_INPUT)
    rep = verify_ok(t, spec)
    eq(rep["dryRun"]["status"], "paused", "no exit under an empty mock: the cap's "
       "breakpoint (poll-until's default action)")
    eq(rep["dryRun"]["reason"], "max_iterations", "the cap, not the request")
    eq(rep["dryRun"]["iteration"], 5, "iterations")


@test
def a_real_run_still_refuses_the_url(t):
    t.spec(URL_FROM_INPUT)
    res = t.run("--input", "status_url=x")
    obj = expect(res, 1, status="failed")
    check("url is not an http: or https: URL" in obj.get("reason", "") + res.err,
          "the reason names the url")


@test
def an_input_with_a_real_url_draws_no_note(t):
    spec = t.spec(URL_FROM_INPUT.replace(
        "{ type: string, required: true }",
        '{ type: string, default: "https://status.example/api" }'))
    rep = verify_ok(t, spec)
    eq(codes(rep, "unsendable-request"), [], "nothing to note")


@test
def a_bad_request_without_samples_is_a_warning(t):
    # no input is sampled: the spec itself builds a request a real run
    # refuses (a header value with a line break, a url without a host)
    spec = t.spec("""
        loopspec: "0.1"
        id: bad
        pattern: react
        state: { vars: { n: { type: int, init: 0 } } }
        body:
          - id: post
            kind: http
            request:
              method: POST
              url: "https:///nohost"
              headers: { X-Note: "a${'\\n'}b" }
              body: "${state.n}"
            on_done: { incr: n }
        terminate: { signal: state-predicate, until: "${state.n >= 2}" }
        caps: { max_iterations: 4 }
        """)
    rep = verify_ok(t, spec)
    eq((rep["dryRun"]["status"], rep["dryRun"]["iteration"]), ("completed", 2),
       "answered by the mock")
    notes = codes(rep, "unsendable-request")
    eq(len(notes), 1, "one note")
    eq(notes[0]["severity"], "warning", "no sample to blame: a warning")
    check("step 'post'" in notes[0]["message"] and
          "sample inputs" not in notes[0]["message"], "names the step only")


loopt.main()

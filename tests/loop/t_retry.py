#!/usr/bin/env python3
"""t_retry.py -- `lil resume --retry-failed` (docs/loops.md, "Retrying a failed
run"): a run that failed in an effect goes on from the failed iteration once
the cause is fixed, the iterations and effects it completed kept (never run
again: counted in the side file), the failed effect run again; a run that
the max_iterations cap failed goes on once the spec raises the cap; the
refusals (a run that has not failed, a cap that still stops it, a run held
by another process) write nothing; the record (retried.N) in `lil log` and
the history; the hints of a failed run; a budget smaller than one agent
call refused before the run exists."""

import os
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, named, test  # noqa: E402

# Two effects an iteration: a shell step that counts itself in the side
# file, then an http call the test's server drops until it is told not to.
FLAKY = """
    loopspec: "0.1"
    id: flaky
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: count
        kind: shell
        cmd: "echo count-${state.n} >> @SIDE@"
      - id: call
        kind: http
        request: {method: GET, url: "@URL@"}
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 3}"}
    caps: {max_iterations: 10}
"""


def has(text, part, what):
    check(part in (text or ""), "%s: %r does not hold %r" % (what, text, part))


def flaky_server(t):
    """A server that answers /flip once, then drops it (no answer: a network
    error) until ok[0] is set."""
    srv = t.server()
    ok = [False]
    plain = srv.route

    def route(h, req):
        if req["path"] == "/flip" and srv.count("/flip") > 1 and not ok[0]:
            h.close_connection = True
        else:
            plain(h, req)

    srv.route = route
    return srv, ok


def fail_at_second_iteration(t):
    """Run FLAKY until iteration 1's http call fails: returns (srv, ok)."""
    srv, ok = flaky_server(t)
    t.spec(FLAKY, URL=srv.url("/flip"))
    expect(t.run(), 1, status="failed", iteration=1, reason_has="/flip")
    eq(t.side(), ["count-0", "count-1"], "side file when it failed")
    return srv, ok


@test
def effect_failure_retried(t):
    srv, ok = fail_at_second_iteration(t)
    before = t.log("flaky")
    expect(t.run(), 1, status="failed", iteration=1)  # failed for good, as ever
    loopt.same_records(t, "flaky", before, "records after running it again")
    ok[0] = True
    res = expect(t.run("--retry-failed", "--reason", "server fixed", verb="resume"),
                 0, status="completed", iteration=3, state={"n": 3})
    check("hints" not in res, "a completed run has no hints")
    # iteration 1's shell step completed before the failure: replayed, not run
    eq(t.side(), ["count-0", "count-1", "count-2"], "side file after the retry")
    eq(srv.count("/flip"), 4, "/flip calls: iteration 0, the failed one, then "
       "iterations 1 and 2")
    recs = t.log("flaky")
    retried = named(recs, "retried")
    eq(len(retried), 1, "retried records")
    p = retried[0].p
    eq((p.get("actor"), p.get("reason"), p.get("iteration"), p.get("slots")),
       ("loopt", "server fixed", 1, ["1.1"]), "retried record")
    has(p.get("failure"), "/flip", "the failure it lifts")
    check("cap" not in p, "no cap failed this run")
    resolves = [r for r in recs if r.type == "resolve"]
    eq([r.key for r in resolves], ["1.1"], "the failed effect's resolve record")
    eq([r.type for r in recs].count("run-failed"), 1, "run-failed records")
    eq([r.type for r in recs].count("run-done"), 1, "run-done records")


@test
def retried_run_shows_in_inspect_and_events(t):
    srv, ok = fail_at_second_iteration(t)
    res = t.lil("inspect", "flaky", "--json")
    eq(res.rc, 0, "inspect exit")
    eq(res.json["loop"]["status"], "failed", "inspect status before the retry")
    ok[0] = True
    expect(t.run("--retry-failed", "--actor", "ops", verb="resume"), 0,
           status="completed")
    res = t.lil("inspect", "flaky", "--json")
    eq(res.json["loop"]["status"], "completed", "inspect status after the retry")
    res = t.lil("log", "flaky")
    eq(res.rc, 0, "log exit")
    has(res.out, "failed run retried by ops at iteration 1", "lil log's line")
    res = t.lil("inspect", "flaky", "--json")
    ids = [(e.get("type"), e.get("identity")) for e in res.json["timeline"]]
    check(("step", "retried.1") in ids and ("resolve", "1.1") in ids,
          "the timeline shows the retry: %r" % ids)


@test
def retry_keeps_failing_until_fixed(t):
    srv, ok = fail_at_second_iteration(t)
    expect(t.run("--retry-failed", verb="resume"), 1, status="failed", iteration=1,
           reason_has="/flip")
    eq(t.side(), ["count-0", "count-1"], "iteration 1's shell step is not run again")
    ok[0] = True
    expect(t.run("--retry-failed", verb="resume"), 0, status="completed", iteration=3)
    recs = t.log("flaky")
    eq(len(named(recs, "retried")), 2, "retried records")
    eq([r.type for r in recs].count("run-failed"), 2, "run-failed records")
    eq(t.side(), ["count-0", "count-1", "count-2"], "side file")


CAPPED = """
    loopspec: "0.1"
    id: capped
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: bump
        kind: shell
        cmd: "echo bump-${state.n} >> @SIDE@"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 4}"}
    caps: {max_iterations: @MAX@, on_cap_exceeded: fail}
"""


@test
def cap_failure_retried_after_raise(t):
    t.spec(CAPPED, MAX=2)
    expect(t.run(), 1, status="failed", iteration=2, reason="max_iterations")
    before = t.log("capped")
    res = t.run("--retry-failed", verb="resume")
    eq(res.rc, 1, "exit of a retry the cap still stops")
    has(res.err, "max_iterations cap still stops it", "refusal")
    has(res.err, "caps.max_iterations 2", "refusal names the limit")
    loopt.same_records(t, "capped", before, "records after the refused retry")
    t.spec(CAPPED, MAX=10)
    res = t.run("--retry-failed", verb="resume")
    eq(res.rc, 1, "a changed spec without --accept-spec-change")
    has(res.err, "--accept-spec-change", "refusal of another spec")
    loopt.same_records(t, "capped", before, "records after the refused spec")
    expect(t.run("--retry-failed", "--accept-spec-change", "--reason", "more room",
                 verb="resume"), 0, status="completed", iteration=4, state={"n": 4})
    eq(t.side(), ["bump-%d" % i for i in range(4)], "side file")
    recs = t.log("capped")
    p = named(recs, "retried")[0].p
    eq((p.get("cap"), p.get("iteration"), p.get("slots")), ("max_iterations", 2, []),
       "retried record of a cap")
    names = [r.key for r in recs]
    check(names.index("retried.%d" % int(named(recs, "retried")[0].key.split(".")[1]))
          < names.index(named(recs, "spec_changed")[0].key),
          "spec_changed comes after retried")


@test
def refused_when_not_failed(t):
    t.spec(CAPPED, MAX=10)
    expect(t.run(verb="step"), 4, status="waiting", iteration=1)
    before = t.log("capped")
    res = t.run("--retry-failed", verb="resume")
    eq(res.rc, 1, "exit for a waiting run")
    has(res.err, "it has not failed (it is waiting)", "refusal")
    expect(t.run(), 0, status="completed")
    before = t.log("capped")
    res = t.run("--retry-failed", verb="resume")
    eq(res.rc, 1, "exit for a completed run")
    has(res.err, "it has not failed (it is completed)", "refusal")
    loopt.same_records(t, "capped", before, "records after the refusal")


@test
def refused_when_held(t):
    t.spec(CAPPED.replace('echo bump-${state.n} >> @SIDE@',
                          'echo bump-${state.n} >> @SIDE@; sleep 30'), MAX=10)
    p = t.spawn("run", t.spec_path, "--json")
    t.wait_for(lambda: t.side() == ["bump-0"], "the first effect", proc=p)
    before = t.log("capped")
    res = t.run("--retry-failed", verb="resume")
    eq(res.rc, 75, "exit for a run another process holds")
    check(str(p.pid) in res.err, "the holder's pid is named: %r" % res.err)
    p.kill()
    t.finish(p)
    loopt.same_records(t, "capped", before, "records after the refusal")


@test
def failed_result_hints(t):
    fail_at_second_iteration(t)
    res = t.run()
    eq(res.rc, 1, "exit")
    hints = res.json.get("hints")
    check(isinstance(hints, dict), "a failed result has hints")
    eq(hints["retry"], "lil --dir %s resume %s --retry-failed" % (shlex.quote(t.store), t.spec_path),
       "retry hint")
    eq(hints["rm"], "lil --dir %s rm flaky" % shlex.quote(t.store), "rm hint")
    has(hints["fresh"], "run %s --fresh" % t.spec_path, "fresh hint")
    res = t.lil("run", t.spec_path)
    has(res.out, "`lil --dir %s resume %s --retry-failed` goes on from the failed "
        "iteration" % (shlex.quote(t.store), t.spec_path), "text hint")
    res = t.lil("inspect", "flaky")
    has(res.out, "lil --dir %s resume %s --retry-failed" % (shlex.quote(t.store), t.spec_path),
        "inspect's hint")


@test
def run_id_in_hint(t):
    srv, ok = flaky_server(t)
    t.spec(FLAKY, URL=srv.url("/flip"))
    expect(t.run("--run-id", "other"), 1, status="failed", iteration=1)
    res = t.run("--run-id", "other")
    eq(res.json["hints"]["retry"],
       "lil --dir %s resume %s --run-id other --retry-failed"
       % (shlex.quote(t.store), t.spec_path),
       "retry hint with the run id")
    ok[0] = True
    expect(t.run("--run-id", "other", "--retry-failed", verb="resume"), 0,
           status="completed")


AGENT = """
    loopspec: "0.1"
    id: thinker
    pattern: react
    state:
      vars:
        done: {type: boolean, init: false}
    body:
      - id: think
        kind: agent
        harness: llm
        prompt: "hello"
        save: {done: "$.done"}
    terminate: {signal: state-predicate, until: "${state.done}"}
    caps: {max_iterations: 3, budget: {tokens: 500}}
"""


@test
def budget_below_one_call_refused(t):
    t.spec(AGENT, valid=None)
    env = {"LIL_LLM_URL": "http://127.0.0.1:%d/v1" % loopt.closed_port(),
           "LIL_LLM_MODEL": "gpt-4o-mini", "LIL_LLM_API_KEY": "k"}
    res = t.run(env=env)
    eq(res.rc, 1, "exit")
    has(res.err, "more than caps.budget.tokens 500", "the key and the budget")
    has(res.err, "tokens before its prompt (LIL_AGENT_MAX_TOKENS 2000", "the reservation")
    has(res.err, "nothing journaled", "nothing written")
    check(not t.has_run("thinker"), "no run was created")
    res = t.run(env=dict(env, LIL_AGENT_MAX_TOKENS="100"))
    check("caps.budget.tokens" not in res.err, "a limit that fits is not refused")
    check(t.has_run("thinker"), "the run was created")


if __name__ == "__main__":
    loopt.main()

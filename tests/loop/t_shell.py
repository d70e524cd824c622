#!/usr/bin/env python3
"""t_shell.py -- shell steps through `lil run`: the results of
docs/loopspec.md, "Effects", as `save` stores them, `args` run without a
shell, `on_done`
(incr, a typed `${expr}`, a template, append), the working directory, and
the scrubbed environment of the commands (src/effects/effect_env.h).

There is no command-line option for the effects' time limit
(lil_loop_opts.effect_timeout_ms), so the timeout of a shell step is
tested below the runner (tests/loop/test_shell.c), not here."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, test  # noqa: E402

# (step id, the step's command fields, the result `save: {r_ID: "$"}` stores)
VECTORS = [
    ("echo", {"cmd": "echo hi"}, {"stdout": "hi", "code": 0}),
    ("fail3", {"cmd": "echo out; echo err 1>&2; exit 3"},
     {"stdout": "out\n", "stderr": "err\n", "code": 3}),
    ("blanks", {"cmd": "echo '  {\"a\":1}  '"}, {"a": 1}),
    ("true", {"cmd": "true"}, {"stdout": "", "code": 0}),
    ("json_exit2", {"cmd": "echo '{\"a\":1}'; exit 2"},
     {"stdout": "{\"a\":1}\n", "stderr": "", "code": 2}),
    ("number", {"cmd": "echo 42"}, 42),
    ("string", {"cmd": "printf '\"s\"'"}, "s"),
    ("list", {"cmd": "echo '[1, \"two\", null]'"}, [1, "two", None]),
    ("argv", {"cmd": "echo", "args": ["$HOME"]}, {"stdout": "$HOME", "code": 0}),
    ("argv_tmpl", {"cmd": "echo", "args": ["n=${state.n}", "a  b;", "$(id)"]},
     {"stdout": "n=0 a  b; $(id)", "code": 0}),
    ("argv_missing", {"cmd": "/nonexistent/lil-no-such-program", "args": []},
     {"stdout": "", "stderr": "", "code": "ENOENT"}),
    ("pwd", {"cmd": "pwd -P"}, {"stdout": "@DIR@", "code": 0}),
]


def vector_spec(case_dir):
    body, state = [], {"n": {"type": "int", "init": 0}}
    expected = {}
    for sid, fields, result in VECTORS:
        step = {"id": sid, "kind": "shell", "save": {"r_" + sid: "$"}}
        step.update(fields)
        body.append(step)
        state["r_" + sid] = {"type": "json"}
        if result == {"stdout": "@DIR@", "code": 0}:
            result = {"stdout": case_dir, "code": 0}
        expected["r_" + sid] = result
    # save of one field, and of a path that misses (the var goes away)
    body.append({"id": "code3", "kind": "shell", "cmd": "echo x; exit 3",
                 "save": {"code3": "$.code"}})
    body.append({"id": "miss", "kind": "shell", "cmd": "echo hi",
                 "save": {"gone": "$.nope"}})
    # a command /bin/sh cannot find: 127, "not found" on stderr
    body.append({"id": "notfound", "kind": "shell", "cmd": "lil-no-such-command-xyz",
                 "save": {"nf_code": "$.code", "nf_err": "$.stderr"}})
    # on_done in its order: incr, then set (typed ${expr}, a template), then append
    body.append({"id": "count", "kind": "shell", "cmd": "true",
                 "on_done": {"incr": "n",
                             "set": {"flag": "${state.n > 0}", "label": "n=${state.n}",
                                     "done": "${true}"},
                             "append": {"log": "${state.n}", "words": "n is ${state.n}"}}})
    state.update({"code3": {"type": "int"}, "gone": {"type": "int", "init": 7},
                  "nf_code": {"type": "json"}, "nf_err": {"type": "json"},
                  "flag": {"type": "boolean", "init": False},
                  "label": {"type": "string", "init": ""},
                  "log": {"type": "list", "init": []},
                  "words": {"type": "list", "init": []},
                  "done": {"type": "boolean", "init": False}})
    expected.update({"n": 1, "code3": 3, "nf_code": 127, "flag": True, "label": "n=1",
                     "log": [1], "words": ["n is 1"], "done": True})
    spec = {"loopspec": "0.1", "id": "shellvec", "pattern": "react",
            "state": {"vars": state}, "body": body,
            "terminate": {"signal": "oracle", "until": "${state.done}"},
            "caps": {"max_iterations": 2, "on_cap_exceeded": "fail"}}
    return spec, expected


@test
def shell_results(t):
    spec, want = vector_spec(t.dir)
    t.spec_json(spec)
    res = expect(t.run(spec=t.path("loop.json")), 0, status="completed", iteration=1)
    state = dict(res["state"])
    check("not found" in str(state.pop("nf_err", "")),
          "stderr of a command sh cannot find says 'not found': %r" % res["state"].get("nf_err"))
    for key in sorted(set(want) | set(state)):
        eq(state.get(key, "(absent)"), want.get(key, "(absent)"), "state." + key)
    # the journal's snapshot holds the same state
    recs = t.log("shellvec")
    snap = loopt.step_rec(recs, "0.snap")
    eq(snap.p["state"], res["state"], "snapshot 0's state")


SCRUB = """
    loopspec: "0.1"
    id: scrub
    pattern: react
    state:
      vars:
        r: {type: json}
        done: {type: boolean, init: false}
    body:
      - id: show
        kind: shell
        cmd: 'echo "t=$MY_API_TOKEN p=$MY_PLAIN"'
        save: {r: "$.stdout"}
        on_done: {set: {done: "${true}"}}
    terminate: {signal: oracle, until: "${state.done}"}
    caps: {max_iterations: 2}
"""
TOKEN = "tok-5ecr3t-6f1d2a9c7b"


@test
def shell_environment_scrubbed(t):
    t.spec(SCRUB)
    env = {"MY_API_TOKEN": TOKEN, "MY_PLAIN": "plain-value"}
    expect(t.run("--run-id", "plain", env=env), 0, status="completed",
           state={"r": "t= p=", "done": True})
    expect(t.run("--run-id", "allowed", "--env-allow", "MY_PLAIN", env=env), 0,
           status="completed", state={"r": "t= p=plain-value", "done": True})
    expect(t.run("--run-id", "fromenv", env=dict(env, LIL_EFFECT_ENV="MY_PLAIN")), 0,
           status="completed", state={"r": "t= p=plain-value", "done": True})
    # A pattern lets the token through: the command prints it, and lil
    # journals and prints it redacted.
    res = t.run("--run-id", "all", "--env-allow", "MY_*", env=env)
    expect(res, 0, status="completed")
    r = res.json["state"]["r"]
    check(r.startswith("t=") and r.endswith(" p=plain-value") and r != "t= p=plain-value",
          "the token reached the command: %r" % r)
    check(TOKEN not in res.out and TOKEN not in res.err, "the token is not printed")
    check(TOKEN.encode() not in t.journal_bytes("all"), "the token is not in the journal")
    log = t.lil("log", "all")
    check(TOKEN not in log.out, "the token is not in lil log")


INJECT = """
    loopspec: "0.1"
    id: inject
    pattern: react
    inputs:
      name: {type: string, default: "x"}
    state:
      vars:
        out: {type: string, init: ""}
        n: {type: int, init: 0}
    body:
      - id: greet
        kind: shell
        cmd: "printf '%s' @ARG@"
        save: {out: "$.stdout"}
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 1}"}
    caps: {max_iterations: 3}
"""
EVIL = "a'b; touch pwned; echo $(touch pwned2) `touch pwned3`\nc"


@test
def shq_quotes_an_input_as_one_word(t):
    t.spec(INJECT, ARG="${shq(inputs.name)}")
    res = expect(t.run("--input", "name=" + EVIL), 0, status="completed")
    eq(res["state"]["out"], EVIL, "the input printed as it is, one argument")
    for f in ("pwned", "pwned2", "pwned3"):
        check(not os.path.exists(t.path(f)), "nothing of the input ran: " + f)
    eq(t.lil("validate", t.path("loop.yaml")).out.count("unquoted-cmd"), 0,
       "no warning for a quoted value")


@test
def unquoted_input_runs_as_commands_and_is_warned(t):
    t.spec(INJECT, ARG="${inputs.name}")
    val = t.lil("validate", t.path("loop.yaml"))
    check("unquoted-cmd" in val.out and "${shq(inputs.name)}" in val.out,
          "validate names the unquoted input and the fix")
    expect(t.run("--input", "name=x; touch pwned"), 0, status="completed")
    check(os.path.exists(t.path("pwned")),
          "unquoted, the input runs as a command (the reference's semantics)")


if __name__ == "__main__":
    loopt.main()

#!/usr/bin/env python3
"""t_inputs.py -- a run's inputs (docs/loops.md, lil_loop_opts): the spec's
defaults, `--input NAME=VALUE` converted to the declared type, `--inputs
FILE.json`, `--input` over the file; a value of the wrong type or an
unknown name refused with a message naming the input; inputs journaled
when the run starts, so a later invocation with other inputs is refused
and one without any uses the journaled ones.  And a divergent replay
(docs/loopspec.md, "Effects"): the command a parked run's spec renders
changed (it reads the environment, which the spec's digest does not
cover), so the journaled effect's identity differs from the new one -- the
run fails, showing both.  (A changed spec is refused before anything runs:
t_bind.py.)"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, test  # noqa: E402

INPUTS = """
    loopspec: "0.1"
    id: inp
    pattern: react
    inputs:
      count: {type: int, default: 3}
      label: {type: string, default: "plain"}
      flags: {type: json}
    state:
      vars:
        i: {type: int, init: 0}
        copy: {type: json}
        lab: {type: string, init: ""}
        fl: {type: json}
    body:
      - id: take
        kind: shell
        cmd: "echo take-${inputs.count}-${inputs.label} >> @SIDE@"
        on_done:
          incr: i
          set: {copy: "${inputs.count}", lab: "${inputs.label}", fl: "${inputs.flags}"}
      @MORE@
    terminate: {signal: state-predicate, until: "${state.i >= 1}"}
    caps: {max_iterations: 3}
"""


def state(count, label, flags=None):
    # a whole-value "${inputs.flags}" of an input without value stores null
    return {"i": 1, "copy": count, "lab": label, "fl": flags}


@test
def inputs_defaults(t):
    t.spec(INPUTS, MORE="")
    expect(t.run(), 0, status="completed", state=state(3, "plain"))
    eq(t.side(), ["take-3-plain"], "side file")
    loop = [r for r in t.log("inp") if r.key == "loop"][0]
    eq(loop.p.get("inputs"), {"count": 3, "label": "plain"}, "journaled inputs")


@test
def inputs_typed_pairs(t):
    t.spec(INPUTS, MORE="")
    expect(t.run("--input", "count=5", "--input", "label=five",
                 "--input", 'flags={"a":[1,true]}'), 0, status="completed",
           state=state(5, "five", {"a": [1, True]}))
    loop = [r for r in t.log("inp") if r.key == "loop"][0]
    eq(loop.p.get("inputs"), {"count": 5, "label": "five", "flags": {"a": [1, True]}},
       "journaled inputs")


@test
def inputs_from_file(t):
    t.spec(INPUTS, MORE="")
    f = t.write("in.json", json.dumps({"count": 7, "label": "from-file"}))
    expect(t.run("--inputs", f, "--run-id", "file"), 0, status="completed",
           state=state(7, "from-file"))
    expect(t.run("--inputs", f, "--input", "count=9", "--run-id", "both"), 0,
           status="completed", state=state(9, "from-file"))


# (arguments, a text the error must hold)
BAD_INPUTS = [
    (["--input", "count=abc"], "count"),
    (["--input", "count=1.5"], "count"),
    (["--input", "nope=1"], "nope"),
    (["--inputs", "@FILE@"], "count"),
]


@test
def inputs_wrong_type_refused(t):
    t.spec(INPUTS, MORE="")
    f = t.write("bad.json", json.dumps({"count": "seven"}))
    for args, text in BAD_INPUTS:
        args = [f if a == "@FILE@" else a for a in args]
        res = t.run(*args)
        loopt.no_missing_verb(res)
        check(res.rc in (1, 64), "%s: exit status %s, want 1 or 64" % (args, res.rc))
        check(text in res.err, "%s: the message names %r: %r" % (args, text, res.err))
    eq(t.side(), [], "side file: nothing ran")


@test
def inputs_journaled_for_later_runs(t):
    # a breakpoint parks the run after `take`; later invocations must keep its inputs
    t.spec(INPUTS, MORE="- {id: hold, kind: breakpoint, ask: \"go on?\"}")
    expect(t.run("--input", "count=5"), 3, status="paused", iteration=0)
    recs = t.log("inp")
    res = t.run("--input", "count=6")
    loopt.no_missing_verb(res)
    check(res.rc in (1, 64), "other inputs for a started run: exit %s, want 1 or 64" % res.rc)
    check("count" in res.err, "the message names the input: %r" % res.err)
    loopt.same_records(t, "inp", recs, "records after the refused run")
    expect(t.run(), 3, status="paused", iteration=0)            # none: the journaled ones
    expect(t.run(verb="resume"), 3, status="paused", iteration=0)
    expect(t.run("--input", "count=5"), 3, status="paused")     # the same: fine
    expect(t.run("--reason", "ok", verb="approve"), 0, status="completed",
           state=state(5, "plain"))
    eq(t.side(), ["take-5-plain"], "side file: `take` ran once, with count 5")


DIVERGE = """
    loopspec: "0.1"
    id: drift
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: act
        kind: shell
        cmd: "echo ${env.WORD} >> @SIDE@"
      - id: nap
        kind: sleep
        for: 1h
      - id: count
        kind: shell
        cmd: "true"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 1}"}
    caps: {max_iterations: 3}
"""


@test
def divergent_replay_fails(t):
    t.spec(DIVERGE)
    expect(t.run(env={"WORD": "alpha"}), 4, status="waiting", iteration=0)
    res = expect(t.run(env={"WORD": "omega"}), 1, status="failed", iteration=0)
    text = res.get("reason", "") + "\n" + t.last.err
    check("echo alpha" in text and "echo omega" in text,
          "the failure shows the journaled and the new identity: %r" % text)
    eq(t.side(), ["alpha"], "side file: the changed command did not run")
    expect(t.run(env={"WORD": "alpha"}), 1, status="failed", iteration=0)
    eq(t.side(), ["alpha"], "side file after running the failed run again")


if __name__ == "__main__":
    loopt.main()

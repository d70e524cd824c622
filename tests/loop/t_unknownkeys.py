#!/usr/bin/env python3
"""t_unknownkeys.py -- specs written for the reference runtime, which
drops unknown keys where its schema is lenient (docs/loopspec.md, "Unknown
keys"): a spec with a step's `description:`, `meta.author`, notes on a
state var and on an input loads with `unknown-key` warnings and runs as if
those keys were not there (the same effects, with the same identities and
results, as the spec without them); a near miss (`on_don`) is still refused before
anything runs."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, test  # noqa: E402

SPEC = """
    loopspec: "0.1"
    id: published
    meta:
      description: as found
      @META@
    pattern: react
    inputs:
      word:
        type: string
        default: pass
        @INPUT@
    state:
      vars:
        n:
          type: int
          init: 0
          @VAR@
    body:
      - id: bump
        @STEP@
        kind: shell
        cmd: "echo ${inputs.word}-${state.n} >> @SIDE@"
        on_done:
          incr: n
          @ON_DONE@
    terminate:
      signal: state-predicate
      until: "${state.n >= 2}"
      @TERM@
    caps: {max_iterations: 5}
"""

EXTRA = {"META": "author: Someone Else", "INPUT": 'notes: "what to echo"',
         "VAR": 'notes: "counts passes"', "STEP": "description: one pass",
         "ON_DONE": 'why: "count it"', "TERM": "description: two passes"}
# the same spec without the extra keys
PLAIN = {k: "" for k in EXTRA}


def effects(t, run_id):
    """(key, identity, result) of each effect the run performed."""
    return [(r.key, r.p.get("identity"), r.p.get("result"))
            for r in t.log(run_id) if r.is_effect_outcome()]


@test
def published_spec_runs(t):
    t.spec(SPEC, **EXTRA)
    res = t.lil("validate", t.spec_path)
    eq(res.rc, 0, "lil validate: exit status")
    for key in ("author", "notes", "description", "why"):
        check("unknown key '%s'" % key in res.out and "is ignored" in res.out,
              "lil validate warns that %r is ignored: %r" % (key, res.out))
    check("error" not in res.out, "no error: %r" % res.out)
    expect(t.run(), 0, status="completed", iteration=2, state={"n": 2})
    eq(t.side(), ["pass-0", "pass-1"], "side file")
    with_extra = effects(t, "published")
    eq([k for k, _, _ in with_extra], ["0.0", "1.0"], "one effect per pass")
    t.spec(SPEC, name="plain.yaml", **PLAIN)
    expect(t.run("--run-id", "plain", spec=t.path("plain.yaml")), 0,
           status="completed", iteration=2, state={"n": 2})
    eq(effects(t, "plain"), with_extra,
       "the effects of the spec without the ignored keys")


@test
def near_miss_refused(t):
    t.spec(SPEC.replace("on_done:", "on_don:"), valid=False, **EXTRA)
    res = t.run()
    loopt.no_missing_verb(res)
    eq(res.rc, 1, "lil run of a spec with on_don: exit status")
    check("unknown key 'on_don' in step 'bump' (did you mean 'on_done'?)" in res.err,
          "the diagnostic suggests on_done: %r" % res.err)
    eq(res.out, "", "stdout")
    eq(t.side(), [], "side file: nothing ran")
    check(t.store_files() in (None, []), "nothing in the store: %r" % t.store_files())


if __name__ == "__main__":
    loopt.main()

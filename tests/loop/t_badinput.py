#!/usr/bin/env python3
"""t_badinput.py -- what the loop verbs refuse (docs/loops.md, docs/cli.md):
missing or invalid arguments are usage errors (exit 64, `Try 'lil VERB
--help'.`, nothing created); a run that does not exist is exit 1 for
resume, approve and recover (not for stop: a stop may come before the
run); an invalid spec is exit 1 with its diagnostics on stderr and
nothing in the store; a journal damaged in its
middle is exit 1 and left as it is; a run held by another `lil run` is 75,
naming that process's pid."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, expect_usage, test  # noqa: E402

COUNTER = """
    loopspec: "0.1"
    id: counter
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: bump
        kind: shell
        cmd: "echo bump-${state.n} >> @SIDE@; @CMD@"
        on_done: {incr: n}
      @MORE@
    terminate: {signal: state-predicate, until: "${state.n >= 2}"}
    caps: {max_iterations: 5}
"""

S = "@SPEC@"
USAGE = [
    ["run"],
    ["run", S, "extra.yaml"],
    ["run", S, "--frob"],
    ["run", S, "--sync", "sometimes"],
    ["run", S, "--sync"],
    ["run", S, "--run-id"],
    ["run", S, "--run-id", "../escape"],
    ["run", S, "--input"],
    ["run", S, "--inputs"],
    ["run", S, "--json=yes"],
    ["run", S, "--wait=1"],
    ["step"],
    ["step", S, "--frob"],
    ["step", S, "--sync", "sometimes"],
    ["resume"],
    ["resume", S, "--frob"],
    ["resume", S, "--run-id", "a/b"],
    ["run", S, "--run-id", "a\u202eb"],   # a bidi override
    ["run", S, "--run-id", "a\u0085b"],   # a C1 control
    ["stop", S, "--reason", "bad \udcff byte"],  # not UTF-8 (byte 0xff)
    ["approve", S, "--reason", "r", "--actor", "\udcfe"],
    ["stop"],
    ["stop", S],
    ["stop", S, "--reason"],
    ["stop", S, "--reason", ""],
    ["stop", S, "--reason", "r", "--frob"],
    ["approve"],
    ["approve", S],
    ["approve", S, "--reason", ""],
    ["approve", S, "--reason", "r", "extra"],
    ["recover"],
    ["recover", S, "--reason", "r"],
    ["recover", S, "--retry"],
    ["recover", S, "--retry", "--abort", "--reason", "r"],
    ["recover", S, "--retry", "--assume-done", "--result-json", "{}", "--reason", "r"],
    ["recover", S, "--assume-done", "--reason", "r"],
    ["recover", S, "--assume-done", "--result-json", "{bad", "--reason", "r"],
    ["recover", S, "--retry", "--result-json", "{}", "--reason", "r"],
    ["recover", S, "--abort", "--reason", ""],
]


@test
def usage_errors(t):
    spec = t.spec(COUNTER, CMD="true", MORE="")
    for args in USAGE:
        res = t.lil(*[spec if a == S else a for a in args])
        try:
            expect_usage(res, args[0])
        except loopt.Failure as e:
            loopt.fail("lil %s: %s" % (" ".join(args), e))
        eq(t.store_files(), None, "the store after `lil %s`" % " ".join(args))
    eq(t.side(), [], "side file")


@test
def unknown_run(t):
    spec = t.spec(COUNTER, CMD="true", MORE="")
    # (`lil stop` of a run that does not exist yet is no error: the request
    # waits for the run, t_stop.py)
    for args in (["resume", spec], ["approve", spec, "--reason", "r"],
                 ["recover", spec, "--retry", "--reason", "r"]):
        # no store at all: exit 1, and no store made
        res = t.lil(*args)
        expect(res, 1)
        eq(t.store_files(), None, "the store after `lil %s` without one" % args[0])
    other = t.spec(COUNTER.replace("id: counter", "id: other"), name="other.yaml",
                   CMD="true", MORE="")
    expect(t.run(spec=other), 0, status="completed")
    files = t.store_files()
    for args in (["resume", spec], ["approve", spec, "--reason", "r"],
                 ["recover", spec, "--retry", "--reason", "r"],
                 ["resume", other, "--run-id", "nosuch"]):
        res = t.lil(*args)
        expect(res, 1)
        run_id = "nosuch" if "nosuch" in args else "counter"
        check(run_id in res.err, "lil %s names the run: %r" % (args[0], res.err))
        eq(t.store_files(), files, "the store after `lil %s` of an unknown run" % args[0])
    eq(t.side(), ["bump-0", "bump-1"], "side file")


# (name, spec text, a text its diagnostics hold)
INVALID = [
    ("no-terminate", COUNTER.replace(
        '    terminate: {signal: state-predicate, until: "${state.n >= 2}"}\n', ""),
     "no-terminate"),
    ("yaml", 'loopspec: "0.1"\nid: broken\nbody: [ {id: a\n', "loop.yaml:"),
    ("bad-ref", COUNTER.replace("${state.n >= 2}", "${state.m >= 2}"), "bad-ref"),
]


@test
def invalid_spec(t):
    for name, text, want in INVALID:
        t.spec(text, CMD="true", MORE="", valid=False)
        for verb in ("run", "step"):
            res = t.run(verb=verb)
            loopt.no_missing_verb(res)
            eq(res.rc, 1, "lil %s of a spec with %s: exit status" % (verb, name))
            check(want in res.err, "lil %s: the diagnostics hold %r" % (verb, want))
            eq(res.out, "", "stdout of lil %s of an invalid spec" % verb)
            check(t.store_files() in (None, []),
                  "nothing in the store after lil %s: %r" % (verb, t.store_files()))
    res = t.lil("run", t.path("nosuch.yaml"))
    eq(res.rc, 1, "lil run of a spec that does not exist: exit status")
    check("nosuch.yaml" in res.err, "the message names the file")
    eq(t.side(), [], "side file")


@test
def damaged_journal(t):
    t.file_only()  # it damages the journal file
    t.spec(COUNTER, CMD="true", MORE="- {id: nap, kind: sleep, for: 1h}")
    expect(t.run(), 4, status="waiting", iteration=0)
    recs = t.log("counter")
    # the outcome of effect 0.0: records of the loop come after it
    victim = loopt.outcome(recs, "0.0")
    check(victim is not None and victim is not recs[-1] and victim is not recs[-2],
          "the outcome of 0.0 is in the middle of the journal: %r" % recs)
    path = t.journal("counter")
    with open(path, "r+b") as f:
        f.seek(victim.offset + victim.size // 2)
        b = f.read(1)
        f.seek(victim.offset + victim.size // 2)
        f.write(bytes([b[0] ^ 0x20]))
    damaged = t.journal_bytes("counter")
    for verb in ("run", "step", "resume"):
        res = t.run(verb=verb)
        loopt.no_missing_verb(res)
        eq(res.rc, 1, "lil %s of a damaged journal: exit status" % verb)
        check(str(victim.offset) in res.err,
              "lil %s names the damaged record's offset %d: %r" % (verb, victim.offset, res.err))
        check(t.journal_bytes("counter") == damaged, "lil %s left the journal as it was" % verb)
    eq(t.side(), ["bump-0"], "side file")


@test
def held_by_another_run(t):
    t.spec(COUNTER, CMD="echo started >> @DIR@/started; [ ${state.n} -gt 0 ] || sleep 1",
           MORE="")
    p = t.spawn("run", t.spec_path, "--json")
    t.wait_for(lambda: os.path.exists(t.path("started")), "the first effect to start",
               proc=p)
    for verb in ("run", "step", "resume"):
        res = t.run(verb=verb)
        expect(res, 75)
        eq(res.out, "", "stdout of lil %s of a held run" % verb)
        check(str(p.pid) in res.err, "lil %s names the holder's pid %d: %r"
              % (verb, p.pid, res.err))
    expect(t.finish(p), 0, status="completed", iteration=2)
    eq(t.side(), ["bump-0", "bump-1"], "side file: the refused runs ran nothing")


if __name__ == "__main__":
    loopt.main()

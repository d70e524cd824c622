#!/usr/bin/env python3
"""t_fork.py -- `lil fork` and `lil diff` on loop runs (docs/cli.md, "lil
fork", "lil diff"): a run forked at an iteration and resumed with a changed
spec runs only the iterations from the cut, the original is untouched, the
fork's chain verifies and records where it came from; a cut inside an
iteration, an existing NEW and a forged source are refused; forks across
stores (two file stores with their own keys; file store and PostgreSQL
both ways when LIL_TEST_STORE=pg)."""

import os
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, expect_usage, has, intents, test  # noqa: E402

# A counter: each iteration appends WORD-N to the side file and adds one.
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
        cmd: "echo @WORD@-${state.n} >> @SIDE@"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 4}"}
    caps: {max_iterations: 10, on_cap_exceeded: fail}
"""


def counter_run(t):
    """The counter run to its end: four iterations, side file emptied."""
    t.spec(COUNTER, WORD="bump")
    expect(t.run(), 0, status="completed", iteration=4)
    eq(t.side(), ["bump-0", "bump-1", "bump-2", "bump-3"], "side file of the run")
    os.remove(t.side_path)


def fork_record(recs, source):
    """The fork's first two records: begin, then its provenance."""
    eq([(r.type, r.key) for r in recs[:2]][1], ("fork", source), "record 2")
    return recs[1].p


@test
def fork_at_iteration_resume_changed_spec(t):
    counter_run(t)
    before = t.journal_bytes("counter")
    res = t.lil("fork", "counter", "try2", "--at", "2", "--reason", "new command",
                "--actor", "alice", "--json")
    doc = expect(res, 0)
    has(doc, {"run": "try2", "source": "counter", "kind": "loop",
              "cut": {"iteration": 2, "seq": 10}}, "fork's answer")
    eq(t.journal_bytes("counter"), before, "the source's journal, byte for byte")
    eq(t.lil("check", "try2").rc, 0, "lil check of the fork")
    recs = t.log("try2")
    prov = fork_record(recs, "counter")
    has(prov, {"source": "counter", "actor": "alice", "reason": "new command",
               "cut": {"iteration": 2, "seq": 10}, "sourceRecords": 18},
        "provenance record")
    check(len(prov.get("sourceHead", "")) == 64, "sourceHead is a SHA-256 in hex")
    check(prov.get("osUser"), "provenance names the OS user")
    eq(intents(recs), ["0.0", "1.0"], "the fork keeps iterations 0 and 1 only")
    eq(recs[0].key, "try2", "BEGIN names the fork")

    # The spec changes: refused without --accept-spec-change, nothing run.
    t.spec(COUNTER, WORD="BUMP")
    res = t.run("--run-id", "try2", verb="resume")
    eq(res.rc, 1, "resume with a changed spec, not accepted")
    eq(t.side(), [], "nothing ran")
    expect(t.run("--run-id", "try2", "--accept-spec-change", verb="resume"), 0,
           status="completed", iteration=4, state={"n": 4})
    eq(t.side(), ["BUMP-2", "BUMP-3"], "only the iterations from the cut ran")
    eq(t.journal_bytes("counter"), before, "the source after the fork's resume")
    eq(t.lil("check", "try2").rc, 0, "lil check of the resumed fork")

    res = t.lil("diff", "counter", "try2", "--json")
    eq(res.rc, 10, "lil diff exit status of different runs")
    d = res.json
    eq(d["identical"], False, "identical")
    eq(d["divergence"]["iteration"], 2, "the divergence's iteration")
    eq(d["divergence"]["a"]["key"], "2.0", "the source's record there")
    eq(d["divergence"]["b"]["key"], "spec_changed.1", "the fork's record there")
    changed = {s["step"]: s["change"] for s in d["steps"]}
    eq(changed.get("2.0"), "differs", "step 2.0")
    eq(changed.get("3.0"), "differs", "step 3.0")
    check("0.0" not in changed and "1.snap" not in changed,
          "steps before the cut are alike: %r" % changed)
    res = t.lil("diff", "counter", "try2")
    eq(res.rc, 10, "lil diff (text)")
    check("at iteration 2" in res.out, "text names the iteration: %r" % res.out)


@test
def fork_same_spec_replays_nothing_before_the_cut(t):
    counter_run(t)
    expect(t.lil("fork", "counter", "again", "--at", "3"), 0)
    expect(t.run("--run-id", "again", verb="resume"), 0, status="completed",
           iteration=4)
    eq(t.side(), ["bump-3"], "iteration 3 only ran again")
    res = t.lil("diff", "counter", "again")
    eq(res.rc, 0, "a fork run again alike is identical to its source")
    check("identical" in res.out, "text says identical: %r" % res.out)
    eq(t.lil("diff", "counter", "counter").rc, 0, "a run and itself")


@test
def fork_at_zero_and_by_seq(t):
    counter_run(t)
    expect(t.lil("fork", "counter", "zero", "--at", "0"), 0)
    eq(intents(t.log("zero")), [], "no iteration kept")
    # seq 7 is right after 0.snap (records: begin, open, loop, 0.0 x2, 0.snap)
    expect(t.lil("fork", "counter", "byseq", "--at-seq", "7", "--json"), 0)
    eq(t.last.json["cut"], {"iteration": 1, "seq": 7}, "the cut of --at-seq 7")
    expect(t.run("--run-id", "byseq", verb="resume"), 0, iteration=4)
    eq(t.side(), ["bump-1", "bump-2", "bump-3"], "iterations 1 to 3 ran")


@test
def cut_inside_an_iteration_refused(t):
    counter_run(t)
    res = t.lil("fork", "counter", "bad", "--at-seq", "8")
    eq(res.rc, 1, "exit status")
    check("--at-seq 7 (--at 1)" in res.err and "--at-seq 10 (--at 2)" in res.err,
          "the nearest valid cuts named: %r" % res.err)
    check(not t.has_run("bad"), "no fork made")
    res = t.lil("fork", "counter", "bad", "--at", "5")
    eq(res.rc, 1, "an iteration past the run")
    check("0 to 4" in res.err, "the range named: %r" % res.err)
    res = t.lil("fork", "counter", "bad", "--at-step", "2")
    eq(res.rc, 1, "--at-step on a loop run")
    check(not t.has_run("bad"), "no fork made")


@test
def new_run_must_not_exist(t):
    counter_run(t)
    expect(t.lil("fork", "counter", "f1", "--at", "1"), 0)
    before = t.journal_bytes("f1")
    res = t.lil("fork", "counter", "f1", "--at", "2")
    eq(res.rc, 1, "exit status")
    check("already exists" in res.err, "message: %r" % res.err)
    eq(t.journal_bytes("f1"), before, "the existing run untouched")
    eq(t.lil("fork", "counter", "counter", "--at", "1").rc, 1, "NEW = RUN")
    eq(t.lil("fork", "nosuch", "f2", "--at", "1").rc, 1, "no such run")


@test
def usage_errors(t):
    counter_run(t)
    expect_usage(t.lil("fork", "counter", "f"), "fork")
    expect_usage(t.lil("fork", "counter", "f", "--at", "1", "--at-seq", "3"), "fork")
    expect_usage(t.lil("fork", "counter", "f", "--at", "x"), "fork")
    expect_usage(t.lil("fork", "counter", "--at", "1"), "fork")
    expect_usage(t.lil("diff", "counter"), "diff")
    eq(t.lil("diff", "counter", "nosuch").rc, 1, "diff with a missing run")


def forge(path):
    """Change one byte of the payload of the last snapshot record of a
    journal file and give the record a right CRC: only the chain tells."""
    with open(path, "rb") as f:
        data = bytearray(f.read())
    at, last = 64, None
    while at + 64 <= len(data):
        n = int.from_bytes(data[at:at + 4], "little")
        if n < 64 or at + n > len(data):
            break
        klen = int.from_bytes(data[at + 28:at + 30], "little")
        if data[at + 32:at + 32 + klen].endswith(b".snap"):
            last = (at, n, klen)
        at += n
    at, n, klen = last
    p = at + 32 + klen
    i = data.index(b'"n":', p) + 4
    data[i] = ord("7") if data[i] != ord("7") else ord("8")
    data[at + 4:at + 8] = zlib.crc32(bytes(data[at + 8:at + n])).to_bytes(4, "little")
    with open(path, "wb") as f:
        f.write(bytes(data))


@test
def forged_source_refused(t):
    t.file_only()  # the journal's bytes edited in place
    counter_run(t)
    forge(t.journal("counter"))
    res = t.lil("fork", "counter", "forged", "--at", "1")
    eq(res.rc, 1, "exit status")
    check("chain" in res.err or "damage" in res.err or "corrupt" in res.err.lower(),
          "the damage named: %r" % res.err)
    check(not t.has_run("forged"), "no fork made")
    eq(t.lil("diff", "counter", "counter").rc, 1, "diff of a forged run")


@test
def fork_to_another_store(t):
    counter_run(t)
    other = t.path("other")
    expect(t.lil("fork", "counter", "moved", "--at", "2", "--to", other), 0)
    argv = ["--dir", other]
    eq(t.lil(*argv, "check", "moved").rc, 0, "lil check in the other store")
    expect(t.lil(*argv, "resume", t.spec_path, "--run-id", "moved", "--json"), 0,
           status="completed", iteration=4)
    eq(t.side(), ["bump-2", "bump-3"], "iterations 2 and 3 ran in the other store")
    eq(t.lil("diff", "counter", "moved", "--to", other).rc, 0,
       "diff across stores: alike")
    # and back, under another id
    expect(t.lil("fork", "moved", "back", "--at", "3", "--from", other), 0)
    eq(t.lil("check", "back").rc, 0, "lil check of the fork brought back")
    res = t.lil("diff", "moved", "back", "--from", other, "--json")
    eq(res.rc, 10, "a run and its fork not run on: they differ")
    eq(res.json["divergence"]["iteration"], 3, "where the fork ends")
    eq(res.json["divergence"]["b"], None, "the fork has no record there")
    eq({s["step"]: s["change"] for s in res.json["steps"]},
       {"3.0": "only_a", "3.snap": "only_a", "terminated.1": "only_a"},
       "the steps only the source has")


@test
def fork_between_file_store_and_postgresql(t):
    """Under LIL_TEST_STORE=pg the case's store is PostgreSQL: fork from it
    into a file store and back (file -> PostgreSQL)."""
    if not loopt._PG:
        loopt.skip("needs the PostgreSQL server (LIL_TEST_STORE=pg)")
    counter_run(t)
    files = t.path("files")
    expect(t.lil("fork", "counter", "tofile", "--at", "2", "--to", files), 0)
    eq(t.lil("--dir", files, "check", "tofile").rc, 0, "lil check in the file store")
    check(os.path.exists(os.path.join(files, "tofile.lil")), "a journal file")
    expect(t.lil("--dir", files, "resume", t.spec_path, "--run-id", "tofile", "--json"),
           0, status="completed", iteration=4)
    eq(t.side(), ["bump-2", "bump-3"], "iterations 2 and 3 ran from the file store")
    expect(t.lil("fork", "tofile", "topg", "--at", "3", "--from", files), 0)
    eq(t.lil("check", "topg").rc, 0, "lil check in PostgreSQL")
    fork_record(t.log("topg"), "tofile")
    expect(t.run("--run-id", "topg", verb="resume"), 0, status="completed",
           iteration=4)
    eq(t.side(), ["bump-2", "bump-3", "bump-3"], "iteration 3 ran in PostgreSQL")
    eq(t.lil("diff", "counter", "topg").rc, 0, "the source and the fork of its fork")


if __name__ == "__main__":
    loopt.main()

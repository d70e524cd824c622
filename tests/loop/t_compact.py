#!/usr/bin/env python3
"""t_compact.py -- endless loops stay small (docs/loops.md, "Compaction";
docs/format.md, "Segments"): past LIL_COMPACT_ITERATIONS iterations (or
LIL_COMPACT_BYTES bytes) a loop run goes on in a new journal segment that
starts with a sealed copy of what its resume needs; the older segments stay
in <store>/<run>.seg/ and `lil log` still shows the whole history; a resume
reads the live segment only and every effect runs once, SIGKILL at any
moment included; a forged or cut segment is refused like any damaged
record."""

import json
import os
import random
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, named, test  # noqa: E402

COUNTER = """
    loopspec: "0.1"
    id: tick
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: work
        kind: shell
        cmd: "echo ${state.n} >> @SIDE@"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= @LIMIT@}"}
    caps: {max_iterations: 1000, budget: {wallclock: 1h}}
"""

EVERY = {"LIL_COMPACT_ITERATIONS": "3"}


def segments(t):
    d = os.path.join(t.store, "tick.seg")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def snaps(recs):
    return [r.key for r in recs if r.type == "step" and r.key and r.key.endswith(".snap")]


@test
def compacts_and_keeps_history(t):
    t.file_only()
    t.spec(COUNTER, LIMIT=10)
    expect(t.run(env=EVERY), 0, status="completed", iteration=10, state={"n": 10})
    eq(t.side(), [str(i) for i in range(10)], "each effect ran once")
    eq(segments(t), ["00000000.lil", "00000001.lil", "00000002.lil"], "archived segments")
    recs = t.log("tick")
    eq(snaps(recs), ["%d.snap" % i for i in range(10)], "the whole history, no copies")
    eq([r.p for r in named(recs, "compacted")],
       [{"iteration": 2}, {"iteration": 5}, {"iteration": 8}], "compacted records")
    seqs = [r.seq for r in recs]
    eq(seqs, sorted(seqs), "records in order")
    eq(len(set(seqs)), len(seqs), "no seq twice")
    res = t.lil("check", "tick")
    eq(res.rc, 0, "lil check of the live segment")


@test
def compacted_run_is_not_exported_or_forked(t):
    t.file_only()
    t.spec(COUNTER, LIMIT=10)
    expect(t.run(env=EVERY), 0, status="completed")
    before = open(os.path.join(t.store, "tick.lil"), "rb").read()
    for args in (("export", "tick", "--out", os.path.join(t.dir, "x.lil")),
                 ("fork", "tick", "copy", "--at", "4")):
        res = t.lil(*args)
        eq(res.rc, 1, " ".join(args[:1]) + " of a compacted run fails")
        check("is compacted" in res.err, "the message says why: " + res.err)
    eq(os.path.exists(os.path.join(t.store, "copy.lil")), False, "no fork made")
    eq(open(os.path.join(t.store, "tick.lil"), "rb").read(), before, "the run untouched")


@test
def without_compaction_one_file(t):
    t.file_only()
    t.spec(COUNTER, LIMIT=10)
    expect(t.run(), 0, status="completed", state={"n": 10})
    eq(segments(t), [], "no segment under the default thresholds")


@test
def resume_reads_the_live_segment(t):
    t.file_only()
    t.spec(COUNTER, LIMIT=8)
    for i in range(5):
        expect(t.run(verb="step", env=EVERY), 4, status="waiting", iteration=i + 1)
    check(len(segments(t)) >= 1, "a segment after 3 iterations: %r" % segments(t))
    live = t.journal_bytes("tick")
    check(b'"iteration":0,' not in live, "the live segment holds no early snapshot")
    expect(t.run(env=EVERY), 0, status="completed", iteration=8, state={"n": 8})
    eq(t.side(), [str(i) for i in range(8)], "each effect ran once")
    res = t.lil("inspect", "tick")
    eq(res.rc, 0, "inspect")
    check("8 committed" in res.out, "inspect counts every iteration: %r" % res.out)


@test
def resume_never_reads_the_older_segments(t):
    # what the run goes on from is the live segment alone: with the older
    # segments made unreadable, step and run still go on (a resume that
    # walked the whole history would fail on them, and grow with the run)
    t.file_only()
    t.spec(COUNTER, LIMIT=8)
    for i in range(5):
        expect(t.run(verb="step", env=EVERY), 4, status="waiting", iteration=i + 1)
    segs = segments(t)
    check(len(segs) >= 1, "a segment: %r" % segs)
    for name in segs:
        with open(os.path.join(t.store, "tick.seg", name), "r+b") as f:
            f.seek(64)
            f.write(b"\xff" * 64)
    expect(t.run(verb="step", env=EVERY), 4, status="waiting", iteration=6)
    expect(t.run(env=EVERY), 0, status="completed", iteration=8, state={"n": 8})
    eq(t.side(), [str(i) for i in range(8)], "each effect ran once")
    res = t.lil("inspect", "tick")
    check(res.rc != 0, "inspect, which reads the whole history, sees the damage")


@test
def sigkill_at_any_moment(t):
    t.file_only()
    t.spec(COUNTER, LIMIT=40)
    env = {"LIL_COMPACT_ITERATIONS": "2"}
    rnd = random.Random(7)
    for _ in range(30):
        p = t.spawn("run", t.spec_path, "--json", env=env)
        time.sleep(rnd.uniform(0.0, 0.08))
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
        p.wait()
        if len(t.side()) >= 40:
            break
    res = t.run(env=env)
    if res.rc == 2:  # killed inside an effect: its outcome is unknown
        expect(t.lil("recover", t.spec_path, "--retry", "--reason", "killed", "--json"), 0, status="completed")
    else:
        expect(res, 0, status="completed", state={"n": 40})
    lines = t.side()
    done = sorted(set(lines), key=int)
    eq(done, [str(i) for i in range(40)], "every iteration's effect ran")
    check(len(lines) - len(done) <= 30, "an effect ran twice only after a kill inside it")
    recs = t.log("tick")
    eq(snaps(recs), ["%d.snap" % i for i in range(40)], "the whole history")
    check(not [f for f in os.listdir(t.store) if ".new." in f or ".rot." in f],
          "no temporary file left")


def live_path(t):
    return t.journal("tick")


@test
def forged_snapshot_refused(t):
    t.file_only()
    t.spec(COUNTER, LIMIT=6)
    for i in range(4):
        expect(t.run(verb="step", env=EVERY), 4, status="waiting")
    with open(live_path(t), "rb") as f:
        data = bytearray(f.read())
    at = data.find(b'"state":{"n":3}')
    check(at > 0, "the snapshot copy is in the live segment")
    data[at + len(b'"state":{"n":')] = ord("7")
    with open(live_path(t), "wb") as f:
        f.write(data)
    res = t.run(env=EVERY)
    eq(res.rc, 1, "a forged snapshot is refused")
    check("offset" in res.err, "the error names the offset: %r" % res.err)
    eq(t.side(), [str(i) for i in range(4)], "nothing ran")


@test
def cut_segment_refused(t):
    t.file_only()
    t.spec(COUNTER, LIMIT=6)
    for i in range(4):
        expect(t.run(verb="step", env=EVERY), 4, status="waiting")
    with open(live_path(t), "r+b") as f:
        f.truncate(100)  # the header and part of the link
    res = t.run(env=EVERY)
    eq(res.rc, 1, "a segment without its link is refused, never started afresh")
    check("offset 64" in res.err, "the error names the offset: %r" % res.err)
    eq(t.side(), [str(i) for i in range(4)], "nothing ran")


@test
def gc_drops_old_segments(t):
    t.file_only()
    t.spec(COUNTER, LIMIT=8)
    for i in range(7):
        expect(t.run(verb="step", env=EVERY), 4, status="waiting", iteration=i + 1)
    eq(segments(t), ["00000000.lil", "00000001.lil"], "two older segments")
    res = t.lil("gc", "--segments", "2", "--dry-run")
    eq(res.rc, 0, "gc --dry-run")
    check("would drop 1 older segment of run 'tick'" in res.out, res.out)
    eq(len(segments(t)), 2, "nothing dropped by --dry-run")
    res = t.lil("gc", "--segments", "1", "--json")
    eq(res.rc, 0, "gc --segments 1")
    eq(json.loads(res.out)["segments"], [{"run": "tick", "dropped": 2}], "--json")
    eq(segments(t), [], "every older segment dropped")
    res = t.lil("log", "tick")
    eq(res.rc, 0, "log of a run whose history was partly dropped")
    check(res.out.startswith("(history before seq "), "log says so: %r" % res.out[:200])
    recs = t.log("tick")
    eq(snaps(recs), ["5.snap", "6.snap"], "the history kept: from the live segment's snapshot copy")
    check(recs[0].seq > 1, "the history starts later")
    res = t.lil("inspect", "tick")
    eq(res.rc, 0, "inspect")
    check("dropped (segments 0..1 are gone" in res.out, res.out)
    check("7 committed" in res.out, "inspect still counts every iteration: %r" % res.out)
    res = t.lil("check", "tick", "--json")
    eq(res.rc, 0, "check after the drop")
    rep = json.loads(res.out)
    eq((rep["live_segment"], rep["first_segment"], rep["intact"]), (2, 2, True), "check")
    expect(t.run(env=EVERY), 0, status="completed", iteration=8, state={"n": 8})
    eq(t.side(), [str(i) for i in range(8)], "each effect ran once after the drop")
    eq(t.lil("gc", "--segments", "0").rc, 64, "--segments 0 is a usage error")
    eq(t.lil("gc").rc, 64, "gc needs --older-than or --segments")


@test
def rm_and_gc_remove_segments(t):
    t.file_only()
    t.spec(COUNTER, LIMIT=7)
    expect(t.run(env=EVERY), 0, status="completed")
    check(os.path.isdir(os.path.join(t.store, "tick.seg")), "segments made")
    eq(t.lil("rm", "tick").rc, 0, "rm")
    eq(os.path.exists(os.path.join(t.store, "tick.seg")), False, "rm removes <run>.seg/")
    # a new run of the same id starts afresh and compacts again
    expect(t.run(env=EVERY), 0, status="completed", state={"n": 7})
    eq(segments(t), ["00000000.lil", "00000001.lil"], "the new run's segments")
    res = t.lil("gc", "--older-than", "0s")
    eq(res.rc, 0, "gc of ended runs")
    eq(t.has_run("tick"), False, "gc removed the run")
    eq(os.path.exists(os.path.join(t.store, "tick.seg")), False, "gc removes <run>.seg/")


@test
def check_reports_a_damaged_older_segment(t):
    t.file_only()
    t.spec(COUNTER, LIMIT=9)
    for i in range(7):
        expect(t.run(verb="step", env=EVERY), 4, status="waiting", iteration=i + 1)
    res = t.lil("check", "tick")
    eq(res.rc, 0, "intact")
    check("segments 0..2 verified and linked" in res.out, res.out)
    path = os.path.join(t.store, "tick.seg", "00000001.lil")
    with open(path, "r+b") as f:
        data = f.read()
        at = data.find(b'"state":{"n":')
        check(at > 0, "a snapshot in segment 1")
        f.seek(at + len(b'"state":{"n":'))
        f.write(b"9")
    res = t.lil("check", "tick", "--json")
    eq(res.rc, 1, "check reports the damage")
    rep = json.loads(res.out)
    eq((rep["intact"], rep["damage_segment"], rep["old_damage"]), (False, 1, True),
       "the segment")
    check(0 < rep["damage_offset"] <= at, "the offset in that segment: %r" % rep)
    res = t.lil("check", "tick")
    check("DAMAGED in segment 1 (an older one) at offset" in res.out, res.out)
    eq(t.lil("check", "tick", "--repair").rc, 1, "--repair leaves older segments")
    # resume goes on from the live segment all the same
    expect(t.run(env=EVERY), 0, status="completed", iteration=9, state={"n": 9})
    eq(t.side(), [str(i) for i in range(9)], "each effect ran once")
    # a segment replaced by another whole file: the link names the damage
    os.unlink(path)
    os.link(os.path.join(t.store, "tick.seg", "00000000.lil"), path)
    rep = json.loads(t.lil("check", "tick", "--json").out)
    eq((rep["intact"], rep["old_damage"]), (False, True), "a forged segment: %r" % rep)
    eq(t.lil("gc", "--segments", "1").rc, 0, "dropping the older segments")
    eq(t.lil("check", "tick").rc, 0, "intact again")


loopt.main()

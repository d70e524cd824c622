#!/usr/bin/env python3
"""t_files.py -- a store resists its neighbours (docs/security.md, "Files
and children"): each test performs an attack on the files of a store and
shows it refused or harmless.

  - A FIFO named like a journal (RUN.lil) or a stop request (RUN.stop)
    hangs nothing: `lil ls` and `lil tick` skip it, `lil run` refuses it
    and says what it is (each lil is given a timeout: a hang fails).
  - A symbolic link named like a journal is neither listed nor followed.
  - A link planted at the temporary name `lil stop` used to write through
    (<store>/RUN.stop.tmp.<pid>.<tid>, made while lil stop is held
    stopped) changes nothing: the victim file keeps its bytes.
  - A store directory another user owns, or that its group or every user
    may write in (sticky bit or not), is refused with the reason, unless
    --shared-store or LIL_SHARED_STORE=1 says it is meant.  The tests run
    as root: a second Unix user is made with useradd and lil runs as that
    user (setpriv) against a store root owns, against its own
    world-writable and group-writable stores; root is refused a store the
    second user owns, where that user planted a link at RUN.stop.
  - `lil new` writes 0644 at most, cassettes are 0600 like journals.
"""

import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopt  # noqa: E402
from loopt import check, eq, expect, test  # noqa: E402

SPEC = """
    loopspec: "0.1"
    id: halt
    pattern: react
    state:
      vars:
        n: {type: int, init: 0}
    body:
      - id: work
        kind: shell
        cmd: "echo step-${state.n} >> @SIDE@"
        on_done: {incr: n}
    terminate: {signal: state-predicate, until: "${state.n >= 3}"}
    caps: {max_iterations: 10}
"""

USER = "liltest2"  # the second Unix user of the tests


def started(t):
    """A run `halt` that has done one step and waits (exit 4)."""
    t.file_only()
    t.spec(SPEC)
    expect(t.run(verb="step"), 4, status="waiting", iteration=1)


def victim(t, text="precious bytes\n"):
    path = t.write("victim.txt", text)
    return path


def read(path):
    with open(path, "rb") as f:
        return f.read()


# ---------------------------------------------------------------------------
# FIFOs and links in the store


@test
def fifo_named_like_a_journal_hangs_nothing(t):
    started(t)
    os.mkfifo(os.path.join(t.store, "ghost.lil"))
    res = t.lil("ls", "--json", timeout=20)
    eq(res.rc, 0, "lil ls exit status")
    ids = [r["id"] for r in json.loads(res.out)["runs"]]
    eq(ids, ["halt"], "the FIFO is not listed as a run")
    eq(t.lil("tick", timeout=20).rc, 0, "lil tick exit status")
    res = t.lil("inspect", "ghost", timeout=20)
    eq(res.rc, 1, "lil inspect of the FIFO")
    res = t.run("--run-id", "ghost", timeout=20)
    eq(res.rc, 1, "lil run on the FIFO")
    check("FIFO" in res.err, "the refusal says it is a FIFO: %r" % res.err)


@test
def fifo_named_like_a_stop_request_hangs_nothing(t):
    started(t)
    fifo = os.path.join(t.store, "halt.stop")
    os.mkfifo(fifo)
    res = t.run(timeout=20)
    eq(res.rc, 1, "lil run with a FIFO for a stop request")
    check("FIFO" in res.err and "not a regular file" in res.err,
          "the refusal says what it is: %r" % res.err)
    eq(t.lil("ls", timeout=20).rc, 0, "lil ls exit status")
    eq(t.lil("tick", timeout=20).rc, 0, "lil tick exit status")
    eq(t.lil("inspect", "halt", timeout=20).rc, 0, "lil inspect exit status")
    os.unlink(fifo)
    expect(t.run(), 0, status="completed", state={"n": 3})
    eq(t.side(), ["step-0", "step-1", "step-2"], "each step ran once")


@test
def symlink_named_like_a_journal_is_not_followed(t):
    started(t)
    target = t.path("elsewhere.lil")
    shutil.copyfile(t.journal("halt"), target)
    before = read(target)
    os.symlink(target, os.path.join(t.store, "evil.lil"))
    res = t.lil("ls", "--json", timeout=20)
    eq(res.rc, 0, "lil ls exit status")
    eq([r["id"] for r in json.loads(res.out)["runs"]], ["halt"], "the link is not listed")
    res = t.run("--run-id", "evil", timeout=20)
    eq(res.rc, 1, "lil run through the link")
    check("symbolic link" in res.err, "the refusal names the link: %r" % res.err)
    eq(read(target), before, "the link's target is untouched")


def stopped(pid):
    """Whether process pid is stopped (state T in /proc/PID/stat)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "T"
    except OSError:
        return False


@test
def link_planted_at_the_temporary_name_of_lil_stop(t):
    started(t)
    target = victim(t)
    # lil stop, held stopped before it starts: its pid (the exec keeps the
    # shell's) is known before it names its temporary file
    argv = ["/bin/sh", "-c", 'kill -STOP $$; exec "$@"', "sh", loopt.LIL, "--dir",
            t.store, "stop", t.spec_path, "--reason", "planted"]
    p = subprocess.Popen(argv, cwd=t.dir, env=t.env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        t.wait_for(lambda: stopped(p.pid), "lil stop to stop itself")
        for name in ("halt.stop.tmp.%d.%d" % (p.pid, p.pid), "halt.stop.tmp"):
            os.symlink(target, os.path.join(t.store, name))
        os.kill(p.pid, signal.SIGCONT)
        out, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    eq(p.returncode, 0, "lil stop exit status (stderr %r)" % err)
    eq(read(target), b"precious bytes\n", "the victim file keeps its bytes")
    req = os.path.join(t.store, "halt.stop")
    check(stat.S_ISREG(os.lstat(req).st_mode), "the stop request is a regular file")
    eq(json.loads(read(req))["reason"], "planted", "the stop request")
    expect(t.run(), 5, status="stopped", reason="planted")


# ---------------------------------------------------------------------------
# Whose store it is


def second_user():
    """(uid, gid) of the second Unix user, made with useradd when missing."""
    try:
        pw = pwd.getpwnam(USER)
        return pw.pw_uid, pw.pw_gid
    except KeyError:
        pass
    if os.geteuid() != 0:
        loopt.skip("not root: cannot make a second Unix user to own stores")
    useradd = shutil.which("useradd") or shutil.which("/usr/sbin/useradd")
    if not useradd:
        loopt.skip("useradd is not installed (Debian: the passwd package)")
    p = subprocess.run([useradd, "--system", "--no-create-home", "--shell",
                        "/usr/sbin/nologin", USER], capture_output=True)
    try:  # another test process may have made it meanwhile
        pw = pwd.getpwnam(USER)
    except KeyError:
        loopt.fail("useradd %s failed: %s" % (USER, p.stderr.decode(errors="replace")))
    return pw.pw_uid, pw.pw_gid


def lil_for_others(t):
    """A copy of the lil binary, and of the liblil it loads, that another
    user can run: the build tree may sit in a directory only root enters
    (a checkout under /root, a mkdtemp folder)."""
    bindir = os.path.join(t.dir, "bin")
    if not os.path.isdir(bindir):
        os.mkdir(bindir, 0o755)
        shutil.copy(loopt.LIL, os.path.join(bindir, "lil"))
        ldd = subprocess.run(["ldd", loopt.LIL], capture_output=True, text=True).stdout
        for line in ldd.splitlines():
            parts = line.split()
            if parts and parts[0].startswith("liblil.so") and len(parts) > 2:
                shutil.copy(parts[2], os.path.join(bindir, parts[0]))
        for name in os.listdir(bindir):
            os.chmod(os.path.join(bindir, name), 0o755)
    return os.path.join(bindir, "lil"), bindir


def as_user(t, uid, gid, *args, env=None):
    """`lil --dir D ARGS...` run as uid:gid (setpriv), in the test's
    directory, which that user may enter."""
    setpriv = shutil.which("setpriv")
    if not setpriv:
        loopt.skip("setpriv is not installed (Debian: util-linux)")
    os.chmod(t.dir, 0o755)
    lil, libdir = lil_for_others(t)
    argv = [setpriv, "--reuid=%d" % uid, "--regid=%d" % gid, "--clear-groups", "--",
            lil, "--dir", t.store] + [str(a) for a in args]
    e = dict(t.env, HOME="/", LD_LIBRARY_PATH=libdir, **(env or {}))
    p = subprocess.run(argv, cwd=t.dir, env=e, capture_output=True, timeout=30)
    t.last = loopt.Result(argv, p.returncode, p.stdout.decode(errors="replace"),
                          p.stderr.decode(errors="replace"), 0)
    return t.last


@test
def store_owned_by_another_user_is_refused(t):
    t.file_only()
    uid, gid = second_user()
    started(t)  # root's store, mode 0700 as lil makes it
    os.chmod(t.store, 0o755)
    res = as_user(t, uid, gid, "ls")
    eq(res.rc, 1, "lil ls as %s in root's store" % USER)
    check("owned by uid 0" in res.err and "--shared-store" in res.err,
          "the refusal names the owner and the way out: %r" % res.err)
    res = as_user(t, uid, gid, "ls", "--shared-store")
    eq(res.rc, 0, "lil ls --shared-store (stderr %r)" % res.err)
    eq(as_user(t, uid, gid, "ls", env={"LIL_SHARED_STORE": "1"}).rc, 0,
       "lil ls with LIL_SHARED_STORE=1")


@test
def writable_store_is_refused_sticky_or_not(t):
    t.file_only()
    uid, gid = second_user()
    os.makedirs(t.store)
    os.chown(t.store, uid, gid)
    for mode, says in ((0o777, "writable by every user"),
                       (0o1777, "mode 1777, sticky or not"),
                       (0o770, "writable by its group")):
        os.chmod(t.store, mode)
        res = as_user(t, uid, gid, "ls")
        eq(res.rc, 1, "lil ls in a store of mode %o" % mode)
        check(says in res.err, "mode %o: the refusal says %r: %r" % (mode, says, res.err))
    os.chmod(t.store, 0o1777)
    res = as_user(t, uid, gid, "--shared-store", "ls")
    eq(res.rc, 0, "--shared-store before the verb (stderr %r)" % res.err)
    os.chmod(t.store, 0o700)
    eq(as_user(t, uid, gid, "ls").rc, 0, "the user's own private store")


@test
def root_refuses_a_store_its_neighbour_owns(t):
    t.file_only()
    uid, gid = second_user()
    started(t)
    target = victim(t)
    os.chmod(target, 0o600)
    # the neighbour owns the store and plants a link where the stop goes
    for name in os.listdir(t.store):
        os.chown(os.path.join(t.store, name), uid, gid)
    os.chown(t.store, uid, gid)
    os.symlink(target, os.path.join(t.store, "halt.stop"))
    res = t.stop("--reason", "x")
    eq(res.rc, 1, "root's lil stop in the neighbour's store")
    check("owned by uid %d" % uid in res.err, "the refusal names the owner: %r" % res.err)
    res = t.run(timeout=20)
    eq(res.rc, 1, "root's lil run in the neighbour's store")
    # shared on purpose: the link is still never followed
    res = t.run("--shared-store", timeout=20)
    eq(res.rc, 1, "lil run --shared-store with a link at RUN.stop")
    check("symbolic link" in res.err, "the refusal names the link: %r" % res.err)
    eq(read(target), b"precious bytes\n", "the victim file keeps its bytes")


# ---------------------------------------------------------------------------
# Modes of the files lil writes


@test
def new_spec_is_0644_at_most_and_cassettes_are_0600(t):
    old = os.umask(0)
    try:
        res = t.lil("new", "demo", "--out", t.path("demo.yaml"))
    finally:
        os.umask(old)
    eq(res.rc, 0, "lil new exit status")
    eq(stat.S_IMODE(os.stat(t.path("demo.yaml")).st_mode), 0o644, "mode of lil new's file")
    eq([n for n in os.listdir(t.dir) if ".tmp" in n], [], "no temporary file left")
    t.file_only()
    t.spec(SPEC)
    cassette = t.write("c.jsonl", "")
    os.chmod(cassette, 0o644)
    expect(t.run("--record", cassette), 0, status="completed")
    eq(stat.S_IMODE(os.stat(cassette).st_mode), 0o600, "mode of the cassette")
    eq(stat.S_IMODE(os.stat(t.journal("halt")).st_mode), 0o600, "mode of the journal")


loopt.main()

#!/usr/bin/env python3
"""loopt.py -- the harness of the black-box tests of `lil run` and the loop
verbs (tests/loop/t_*.py).  Python 3, standard library only.

The tests drive the `lil` binary and nothing else: they write a spec, run
`lil --dir D VERB SPEC --json`, check the exit status and the result
object printed on stdout, read the journal back with `lil log RUN --jsonl`
and count how many times each shell effect really ran (the commands of
the specs append a line to a side file).  docs/loops.md is the contract;
where it is silent, docs/loopspec.md, "How a loop runs".

A test file holds functions marked @test, each taking a Case, and ends
with `loopt.main()`.  CTest runs it as `python3 t_NAME.py LIL [TEST...]`
(LIL: the binary; TESTs: run only these).  Each test gets its own Case:

  - a fresh temporary directory, the working directory of every lil the
    test starts, and so of the shell steps;
  - a store `D` inside it (`store/`, made by the first `lil run` or
    `lil step`: tests of other verbs see it missing);
  - `@SIDE@`, `@DIR@` and any `@NAME@` given to Case.spec are replaced in
    the spec's text: the side file, the directory, the test's values;
  - an environment without LIL_DIR, the journal keys and LIL_EFFECT_ENV,
    with USER=loopt (the default actor);
  - `lil approve` without --pause, --digest or --current gets --current
    (a script must name the pause it approves); `--no-current` in a
    test's arguments keeps it off (and is taken out).

A test that cannot run on this machine calls skip(WHY): it prints `skip
NAME: WHY` and counts as neither passed nor failed.  Failures print `FAIL
NAME`, the test file's line, the values compared and
the last lil command (argv, exit status, stdout, stderr); a verb that this
lil does not have is named as such.  The run ends with `N passed, N
failed` and exit status 1 when a test failed.  T_KEEP=1 keeps the
temporary directories; LOOPT_VERBOSE=1 prints every lil command.
Processes and servers a test starts are ended by the test's cleanup (by
their own pid, never by name).
"""

import contextlib
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import schema_check  # noqa: E402 -- tests/schema_check.py: docs/schemas/ for every output

LIL = None  # the lil binary (main() sets it from argv[1])
_TESTS = []
_VERBOSE = os.environ.get("LOOPT_VERBOSE") == "1"
# One suite, two backends: with LIL_TEST_STORE=pg each case's store is a
# schema of the PostgreSQL server at LIL_TEST_PG (tests/pg starts it),
# made with `lil db init` when the case begins.
_PG = os.environ.get("LIL_TEST_STORE") == "pg"

# The environment variables a test must not inherit: they change where the
# store is, what is journaled or what children see.
_DROP_ENV = ("LIL_DIR", "LIL_JOURNAL_KEY", "LOOPY_JOURNAL_KEY", "LIL_EFFECT_ENV",
             "LIL_SYNC")


def test(fn):
    """Register fn(case) as a test of this file, in source order."""
    _TESTS.append(fn)
    return fn


def _approve_current(args):
    """`lil approve` in a script names the pause it approves (docs/loops.md,
    "Approvals"); a test that does not care which pause approves the
    current one: --current is added when the test names none."""
    names = ("--pause", "--digest", "--current", "--help")
    i = 0
    while i < len(args) and args[i].startswith("--"):  # global flags first
        i += 2 if args[i] == "--dir" else 1
    if i >= len(args) or args[i] != "approve":
        return []
    if "--" in args or any(a.split("=")[0] in names for a in args):
        return []
    return ["--current"]


class FileOnly(Exception):
    """Raised by Case.file_only() under PostgreSQL."""


class Skip(Exception):
    """Raised by skip(): the test cannot run on this machine (the message
    says why); reported as skipped, never as passed."""


def skip(why):
    raise Skip(why)


class Failure(AssertionError):
    """A check that did not hold."""


# ---------------------------------------------------------------------------
# Results of lil commands


class Result:
    """One finished lil command: argv, exit status, stdout, stderr, seconds,
    and stdout parsed as one JSON value (json) when it is one."""

    def __init__(self, argv, rc, out, err, secs):
        self.argv, self.rc, self.out, self.err, self.secs = argv, rc, out, err, secs
        self.json = None
        if out.strip():
            try:
                self.json = json.loads(out)
            except ValueError:
                pass
        # Every JSON document lil prints matches its schema in docs/schemas/.
        found = schema_check.problems(argv[1:], out) if rc != "timeout" else []
        if found:
            raise Failure("output does not match its schema:\n  %s\n%s"
                          % ("\n  ".join(found[:10]), self.describe()))

    def describe(self):
        def cut(s):
            return s if len(s) <= 3000 else s[:3000] + "...(%d bytes)" % len(s)

        argv = [os.path.basename(self.argv[0])] + list(self.argv[1:])
        return "$ %s\n  exit %s after %.2fs\n  stdout: %s\n  stderr: %s" % (
            shlex.join(argv), self.rc, self.secs, cut(self.out.rstrip()) or "(none)",
            cut(self.err.rstrip()) or "(none)")


def _missing_verb(res):
    """The verb res asked for when lil says it has no such verb, else None."""
    if res.rc == 64 and re.search(r"unknown (verb|command)", res.err):
        return res.argv[3] if len(res.argv) > 3 else "?"  # lil --dir D VERB
    return None


def no_missing_verb(res):
    """Fail, naming it, when res is lil saying it has no such verb."""
    verb = _missing_verb(res)
    if verb:
        fail("lil has no verb '%s' (exit 64)" % verb)


def fail(msg):
    raise Failure(msg)


def check(cond, what):
    if not cond:
        fail(what)


def eq(got, want, what):
    if got != want:
        fail("%s:\n     got  %r\n     want %r" % (what, got, want))


def has(got, want, what):
    """got (a record's payload) holds every key of want with its value;
    docs/loops.md lists the fields a payload has, others may come too."""
    if not isinstance(got, dict):
        fail("%s: not an object: %r" % (what, got))
    sub = {k: got.get(k, "(absent)") for k in want}
    if sub != want:
        fail("%s:\n     got  %r\n     want %r (in %r)" % (what, sub, want, got))


def expect(res, code, **fields):
    """Check res's exit status (code) and fields of its JSON result: each keyword
    is a key whose value must be equal; reason_has=TEXT (or a list of
    texts) must be inside reason; absent=(KEYS) must not be there.
    Returns the result object."""
    if res.rc != code:
        no_missing_verb(res)
        fail("exit status %s, want %s" % (res.rc, code))
    want_absent = fields.pop("absent", ())
    reason_has = fields.pop("reason_has", None)
    if not fields and not want_absent and reason_has is None:
        return res.json
    obj = res.json
    if not isinstance(obj, dict):
        fail("stdout is not one JSON object")
    for key, want in fields.items():
        if key not in obj:
            fail("result has no '%s' (want %r)" % (key, want))
        eq(obj[key], want, "result's '%s'" % key)
    for key in want_absent:
        if key in obj:
            fail("result has '%s' (%r), want none" % (key, obj[key]))
    if reason_has is not None:
        reason = obj.get("reason")
        if not isinstance(reason, str):
            fail("result has no reason (want one holding %r)" % reason_has)
        for text in [reason_has] if isinstance(reason_has, str) else reason_has:
            if text not in reason:
                fail("reason %r does not hold %r" % (reason, text))
    return obj


def expect_usage(res, verb):
    """Exit 64 from a verb lil has, nothing on stdout, and stderr ending
    with `Try 'lil VERB --help'.`."""
    no_missing_verb(res)
    expect(res, 64)
    eq(res.out, "", "stdout of a usage error")
    want = "Try 'lil %s --help'." % verb
    check(res.err.rstrip().endswith(want), "stderr ends with %r" % want)


# ---------------------------------------------------------------------------
# Journal records (lil log --jsonl)


class Rec:
    """One record: type ("step", "intent", "run-done", ...), key (the step's
    name: "0.1", "pause.3", ...), flags, payload text, p (the payload
    parsed as JSON, or None), seq, offset, size."""

    def __init__(self, obj):
        self.type = obj.get("type")
        self.key = obj.get("key")
        self.flags = obj.get("flags", [])
        self.seq, self.offset, self.size = obj.get("seq"), obj.get("offset"), obj.get("size")
        self.payload = obj.get("payload")
        self.p = None
        if self.payload is not None:
            try:
                self.p = json.loads(self.payload)
            except ValueError:
                pass

    def is_effect_outcome(self):
        return "effect" in self.flags and self.type in ("step", "step-failed")

    def __repr__(self):
        text = self.payload if self.payload is not None else "(binary)"
        return "<%s %s %s>" % (self.type, self.key, text[:300])


def loop_records(recs):
    """The records a loop wrote: all but begin, open and close."""
    return [r for r in recs if r.type not in ("begin", "open", "close")]


def named(recs, name):
    """The control records `name.N` (pause, cap, parked, ...) in order."""
    pat = re.compile(re.escape(name) + r"\.\d+$")
    return [r for r in recs if r.key and pat.match(r.key) and r.type == "step"]


def same_records(case, run_id, before, what):
    """The run's records are those of before (a list of Rec): none added.
    A difference fails the test at its end (Case.fail_later), so the
    checks after this one still run and report."""
    after = case.log(run_id)
    if len(after) != len(before):
        added = [(r.type, r.key) for r in after[len(before):]]
        case.fail_later("%s: %d records, want %d (added: %r)"
                        % (what, len(after), len(before), added))
    return after


def intents(recs):
    """The keys of the effects' intents, in order ("0.0", "0.1", ...)."""
    return [r.key for r in recs if r.type == "intent"]


def outcome(recs, key):
    """The outcome record of effect key (the last one), or None."""
    found = [r for r in recs if r.key == key and r.is_effect_outcome()]
    return found[-1] if found else None


def step_rec(recs, key):
    """The last plain step record named key, or None."""
    found = [r for r in recs if r.key == key and r.type == "step"
             and "effect" not in r.flags]
    return found[-1] if found else None


# ---------------------------------------------------------------------------
# A small HTTP server of the test's own


class Server:
    """An HTTP/1.0 server on 127.0.0.1 and a free port, in a thread of the
    test.  Every request is kept (method, path, headers with lower-cased
    names, body).  Routes:
      /json      200 {"state":"green"}, application/json
      /text503   503 "not json", text/plain
      /json503   503 {"state":"red"}, application/json
      /plain     200 "plain ok", text/plain
      /echo      200 {"method","path","headers","body"} of the request
      /drop      no answer: the connection is closed (a network error)
      /status/N  N {"status":N}, application/json
    Responses carry exactly Content-Type and Content-Length."""

    def __init__(self):
        self.requests = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, fmt, *args):
                pass

            def handle_any(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                req = {"method": self.command, "path": self.path,
                       "headers": {k.lower(): v for k, v in self.headers.items()},
                       "body": body.decode("utf-8", "replace")}
                with server._lock:
                    server.requests.append(req)
                server.route(self, req)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()

    @staticmethod
    def reply(h, status, ctype, body):
        data = body.encode() if isinstance(body, str) else body
        h.send_response_only(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def route(self, h, req):
        path = req["path"].split("?")[0]
        js = "application/json"
        if path == "/json":
            self.reply(h, 200, js, '{"state":"green"}')
        elif path == "/text503":
            self.reply(h, 503, "text/plain", "not json")
        elif path == "/json503":
            self.reply(h, 503, js, '{"state":"red"}')
        elif path == "/plain":
            self.reply(h, 200, "text/plain", "plain ok")
        elif path == "/echo":
            self.reply(h, 200, js, json.dumps(req))
        elif path == "/drop":
            h.close_connection = True
        elif path.startswith("/status/"):
            code = int(path[len("/status/"):])
            self.reply(h, code, js, json.dumps({"status": code}))
        else:
            self.reply(h, 404, "text/plain", "no route")

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def count(self, path):
        with self._lock:
            return sum(1 for r in self.requests if r["path"].split("?")[0] == path)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def closed_port():
    """A port of 127.0.0.1 that nothing listens on (bound, then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ---------------------------------------------------------------------------
# The case: one test's directory, store, spec and processes


class Case:
    def __init__(self, name):
        self.name = name
        self.dir = os.path.realpath(tempfile.mkdtemp(prefix="loopt-%s-" % name))
        self.store = os.path.join(self.dir, "store")
        if _PG:
            self.store = self._pg_store()
        self.side_path = os.path.join(self.dir, "side.txt")
        self.spec_path = os.path.join(self.dir, "loop.yaml")
        self.env = {k: v for k, v in os.environ.items() if k not in _DROP_ENV}
        self.env["USER"] = "loopt"
        self.last = None
        self.later = []  # (where, message) of fail_later
        self._procs = []
        self._servers = []

    def _pg_store(self):
        """A schema of the test server for this case, created now."""
        import hashlib
        base = os.environ["LIL_TEST_PG"]
        schema = "l" + hashlib.sha1(self.dir.encode()).hexdigest()[:16]
        url = base + ("&" if "?" in base else "?") + "schema=" + schema
        p = subprocess.run([LIL, "--dir", url, "db", "init"], capture_output=True)
        if p.returncode != 0:
            sys.exit("lil db init: %s" % _text(p.stderr))
        return url

    def file_only(self):
        """A test that only the file store can run (journal files, their
        bytes): under PostgreSQL it ends here, reported file-only."""
        if _PG:
            raise FileOnly()

    def fail_later(self, msg):
        """Record a failure and go on; the test fails when it ends."""
        here = os.path.abspath(__file__)
        frames = [f for f in traceback.extract_stack()[:-1]
                  if os.path.abspath(f.filename) != here]
        where = "%s:%d" % (os.path.basename(frames[-1].filename), frames[-1].lineno) \
            if frames else "?"
        self.later.append((where, msg))

    @contextlib.contextmanager
    def soft(self):
        """`with t.soft(): checks` -- a failure inside is reported when the
        test ends, and the test goes on (for checks of records that what
        follows does not depend on)."""
        try:
            yield
        except Failure as e:
            self.later.append((_where(e.__traceback__), str(e)))

    # -- files --------------------------------------------------------------

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def write(self, name, text):
        p = self.path(name)
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)
        return p

    def spec(self, text, name="loop.yaml", valid=True, **values):
        """Write a spec (YAML text, dedented) with @SIDE@, @DIR@ and @NAME@
        for each keyword replaced; returns its path.  Unless valid=False,
        `lil validate` must accept it (a test's own mistake then shows as
        such).  The verbs use loop.yaml unless told."""
        text = textwrap.dedent(text).lstrip("\n")
        subst = {k: str(v) for k, v in values.items()}  # first: they may hold @DIR@
        subst.update({"SIDE": self.side_path, "DIR": self.dir})
        for k, v in subst.items():
            text = text.replace("@%s@" % k, v)
        left = re.findall(r"@[A-Z_]+@", text)
        if left:
            fail("spec placeholders without a value: %s" % left)
        return self._validated(self.write(name, text), valid)

    def spec_json(self, obj, name="loop.json", valid=True):
        """Write a spec as a JSON document; returns its path."""
        return self._validated(self.write(name, json.dumps(obj, indent=1)), valid)

    def _validated(self, path, valid):
        if valid:
            res = self.lil("validate", path)
            if res.rc != 0:
                fail("the test's spec %s has errors" % os.path.basename(path))
        return path

    def side(self):
        """The lines the shell steps appended to the side file."""
        try:
            with open(self.side_path, encoding="utf-8") as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    def journal(self, run_id):
        return os.path.join(self.store, run_id + ".lil")

    def journal_bytes(self, run_id):
        """The run's journal: the file, or under PostgreSQL `lil export`."""
        if _PG:
            return subprocess.run(self._argv(("export", run_id)),
                                  capture_output=True).stdout
        with open(self.journal(run_id), "rb") as f:
            return f.read()

    def store_files(self):
        """The names in the store directory (None when it does not exist);
        under PostgreSQL "RUN.lil" for each run (None when there is none)."""
        if _PG:
            p = subprocess.run(self._argv(("ls", "--json")), capture_output=True)
            doc = json.loads(_text(p.stdout) or "{}")
            runs = sorted(r["id"] + ".lil" for r in doc.get("runs", []))
            return runs or None
        try:
            return sorted(os.listdir(self.store))
        except FileNotFoundError:
            return None

    def has_run(self, run_id):
        """Whether the store holds run run_id."""
        if _PG:
            return run_id + ".lil" in (self.store_files() or [])
        return os.path.exists(self.journal(run_id))

    def store_bytes(self):
        """(name, bytes) of each file of the store, or of each run."""
        for name in self.store_files() or []:
            if _PG:
                yield name, self.journal_bytes(name[:-4])
            else:
                with open(os.path.join(self.store, name), "rb") as fh:
                    yield name, fh.read()

    # -- running lil ---------------------------------------------------------

    def _argv(self, args):
        args = [str(a) for a in args]
        if "--no-current" in args:
            return [LIL, "--dir", self.store] + [a for a in args if a != "--no-current"]
        return [LIL, "--dir", self.store] + args + _approve_current(args)

    def lil(self, *args, env=None, timeout=60):
        """Run `lil --dir D ARGS...` in the test's directory and wait."""
        argv = self._argv(args)
        e = dict(self.env, **(env or {}))
        t0 = time.monotonic()
        try:
            p = subprocess.run(argv, cwd=self.dir, env=e, capture_output=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            self.last = Result(argv, "timeout", _text(exc.stdout), _text(exc.stderr),
                               time.monotonic() - t0)
            fail("lil did not end within %ss" % timeout)
        self.last = Result(argv, p.returncode, _text(p.stdout), _text(p.stderr),
                           time.monotonic() - t0)
        if _VERBOSE:
            print(self.last.describe())
        return self.last

    def run(self, *args, verb="run", spec=None, env=None, timeout=60):
        """`lil --dir D VERB SPEC --json ARGS...` (VERB: run, step, resume,
        approve, recover; stop prints no result, see stop())."""
        return self.lil(verb, spec or self.spec_path, "--json", *args, env=env,
                        timeout=timeout)

    def stop(self, *args, spec=None):
        return self.lil("stop", spec or self.spec_path, *args)

    def spawn(self, *args, env=None):
        """Start `lil --dir D ARGS...` without waiting; finish() waits."""
        argv = self._argv(args)
        p = subprocess.Popen(argv, cwd=self.dir, env=dict(self.env, **(env or {})),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.loopt_argv, p.loopt_t0 = argv, time.monotonic()
        self._procs.append(p)
        return p

    def finish(self, p, timeout=30):
        """Wait for a spawned lil and return its Result."""
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            self.last = Result(p.loopt_argv, "timeout", _text(out), _text(err),
                               time.monotonic() - p.loopt_t0)
            fail("lil did not end within %ss" % timeout)
        self.last = Result(p.loopt_argv, p.returncode, _text(out), _text(err),
                           time.monotonic() - p.loopt_t0)
        return self.last

    def wait_for(self, cond, what, timeout=10.0, proc=None):
        """Poll cond() every 10 ms until it is true; fail when proc (a
        spawned lil) ends first."""
        end = time.monotonic() + timeout
        while not cond():
            if proc is not None and proc.poll() is not None:
                res = self.finish(proc)
                no_missing_verb(res)
                fail("lil ended (exit %s) before %s (side file: %r)"
                     % (res.rc, what, self.side()))
            if time.monotonic() > end:
                fail("timed out after %ss waiting for %s (side file: %r)"
                     % (timeout, what, self.side()))
            time.sleep(0.01)

    def log(self, run_id):
        """Every record of run_id, through `lil log RUN --jsonl`."""
        res = self.lil("log", run_id, "--jsonl")
        if res.rc != 0:
            fail("lil log %s: exit %s" % (run_id, res.rc))
        return [Rec(json.loads(line)) for line in res.out.splitlines() if line.strip()]

    def server(self):
        s = Server()
        self._servers.append(s)
        return s

    def cleanup(self, keep):
        for p in self._procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            for f in (p.stdout, p.stderr):
                if f:
                    f.close()
        for s in self._servers:
            s.close()
        if keep:
            print("  kept %s" % self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def _text(b):
    return b.decode("utf-8", "replace") if isinstance(b, bytes) else (b or "")


# ---------------------------------------------------------------------------
# The runner


def _where(tb):
    """file:line of the innermost frame outside this harness."""
    here = os.path.abspath(__file__)
    frames = [f for f in traceback.extract_tb(tb) if os.path.abspath(f.filename) != here]
    if not frames:
        return "?"
    f = frames[-1]
    return "%s:%d" % (os.path.basename(f.filename), f.lineno)


def main():
    global LIL
    if len(sys.argv) < 2:
        sys.exit("usage: %s LIL [TEST...]" % sys.argv[0])
    LIL = os.path.abspath(sys.argv[1])
    if not os.access(LIL, os.X_OK):
        sys.exit("%s: not an executable" % LIL)
    only = set(sys.argv[2:])
    unknown = only - {fn.__name__ for fn in _TESTS}
    if unknown:
        sys.exit("no such test: %s" % ", ".join(sorted(unknown)))
    keep = os.environ.get("T_KEEP") == "1"
    passed = failed = file_only = skipped = 0
    for fn in _TESTS:
        if only and fn.__name__ not in only:
            continue
        case = Case(fn.__name__)
        t0 = time.monotonic()
        ok = False
        try:
            fn(case)
            ok = not case.later
            if not ok:
                print("FAIL %s" % fn.__name__)
        except FileOnly:
            ok = None
        except Skip as e:
            ok = "skip"
            print("skip %s: %s" % (fn.__name__, e))
        except Failure as e:
            print("FAIL %s\n  %s: %s" % (fn.__name__, _where(e.__traceback__), e))
            if case.last:
                print("  last command:\n    " + case.last.describe().replace("\n", "\n    "))
        except Exception:  # a bug of the test itself: show all of it
            print("FAIL %s (error in the test)" % fn.__name__)
            traceback.print_exc(file=sys.stdout)
        finally:
            for where, msg in case.later:
                print("  %s: %s" % (where, msg))
            case.cleanup(keep)
        if ok == "skip":
            skipped += 1
        elif ok is None:
            file_only += 1
            print("file-only %s (the file store's own; this run: PostgreSQL)"
                  % fn.__name__)
        elif ok:
            passed += 1
            print("ok   %s (%.2fs)" % (fn.__name__, time.monotonic() - t0))
        else:
            failed += 1
        sys.stdout.flush()
    print("%d passed, %d failed%s%s" % (passed, failed,
                                        " (%d file-only)" % file_only if file_only else "",
                                        " (%d skipped)" % skipped if skipped else ""))
    sys.exit(1 if failed else 0)

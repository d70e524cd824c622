"""mcp_harness -- what the tests of `lil mcp` with the MCP Python SDK share.

A test gets its own temporary directory (the store, the server's working
directory, the server's stderr), opens an SDK ClientSession on `lil mcp`
over stdio (stdio_client) or Streamable HTTP (a `lil mcp --http
127.0.0.1:0` it starts, its URL and bearer token read from the lines the
server prints on stderr), and kills what it started: the HTTP server and
the children that ran loops (start_run names their pids), whatever the
test's outcome.  Waiting is a poll with a deadline, never a blind sleep.

LIL_BIN names the `lil` binary (CMake passes it).
"""

import asyncio
import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest
import warnings
from pathlib import Path

import httpx2
from mcp import types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning

# resources/subscribe is of the protocol versions before 2026-07-28, the ones
# lil mcp speaks: the SDK warns of it all the same.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

LIL_BIN = os.environ.get("LIL_BIN", "")
SPECS = Path(__file__).resolve().parent.parent / "specs"  # tests/mcp/specs/
CLIENT_NAME = "lil-py-test"
ACTOR = "mcp:" + CLIENT_NAME

READ_TOOLS = {"list_runs", "inspect_run", "run_events", "validate_spec", "explain_spec",
              "doctor"}
STEER_TOOLS = {"step_run", "resume_run", "stop_run", "approve_run", "recover_run"}
START_TOOLS = {"start_run", "submit_run"}

LISTENING = re.compile(r"^lil mcp: listening on (http://\S+/mcp)$")
TOKEN = re.compile(r"^lil mcp: token (\S+)$")


def poll(what, fn, timeout=20.0, interval=0.05):
    """fn() until it returns something true, or fail naming what after timeout s."""
    end = time.monotonic() + timeout
    while True:
        got = fn()
        if got:
            return got
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


async def apoll(what, fn, timeout=20.0, interval=0.05):
    """await fn() until it returns something true, or fail after timeout s."""
    end = time.monotonic() + timeout
    last = None
    while True:
        last = await fn()
        if last and last[0]:
            return last[1]
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}; "
                                 f"last: {last[1] if last else None!r}")
        await asyncio.sleep(interval)


def is_lil_process(pid):
    """pid is a live process running the lil binary (not a reused pid)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        exe = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return False
    return state != b"Z" and os.path.basename(exe) == os.path.basename(LIL_BIN)


def process_gone(pid):
    """pid has exited (gone, or a zombie its parent has not reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except OSError:
        return True


class HttpServer:
    """`lil mcp --http 127.0.0.1:0 ...` in the background, its stderr kept in a
    file and scanned for the URL and token lines."""

    def __init__(self, argv, cwd, log_path, env=None):
        self.log = open(log_path, "w", encoding="utf-8")
        self.lines = []
        self.cond = threading.Condition()
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, errors="replace")
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.url = self._wait_line(LISTENING)
        self.token = None if "--no-token" in argv else self._wait_line(TOKEN)
        self.port = int(re.search(r":(\d+)/mcp$", self.url).group(1))

    def _read(self):
        for line in self.proc.stderr:
            self.log.write(line)
            self.log.flush()
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.lines.append(None)  # EOF
            self.cond.notify_all()

    def _wait_line(self, pattern, timeout=15.0):
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    if line is None:
                        raise AssertionError(f"lil mcp --http exited before printing "
                                             f"{pattern.pattern}: {self.lines[:-1]}")
                    m = pattern.match(line)
                    if m:
                        return m.group(1)
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"lil mcp --http printed no {pattern.pattern} "
                                         f"in {timeout}s: {self.lines}")
                self.cond.wait(left)

    def stop(self):
        """SIGTERM (the server ends cleanly), SIGKILL after 10 s."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(5)
        self.proc.stderr.close()
        self.log.close()
        return self.proc.returncode


class Notes:
    """The notifications a session received, and a way to wait for more."""

    def __init__(self):
        self.items = []
        self.errors = []
        self.arrived = asyncio.Event()

    async def handler(self, message):
        if isinstance(message, Exception):
            self.errors.append(message)
        else:
            self.items.append(message)
        self.arrived.set()

    def updated(self, uri):
        return [n for n in self.items if isinstance(n, types.ResourceUpdatedNotification)
                and str(n.params.uri) == uri]

    async def wait(self, timeout):
        """Until a notification arrives (True) or timeout s pass (False)."""
        self.arrived.clear()
        try:
            await asyncio.wait_for(self.arrived.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False


class McpTestCase(unittest.IsolatedAsyncioTestCase):
    """A temporary directory per test; sessions over self.transport ("stdio" or
    "http"); every lil process a test started is killed at its end."""

    transport = "stdio"

    def setUp(self):
        if not LIL_BIN or not os.access(LIL_BIN, os.X_OK):
            self.fail(f"LIL_BIN={LIL_BIN!r} is not an executable lil binary")
        self.tmp = Path(tempfile.mkdtemp(prefix="lil-mcp-py-"))
        self.store = self.tmp / "store"
        self.servers = []
        self.pids = []
        self.addCleanup(self._cleanup)

    def _cleanup(self):
        for pid in self.pids:
            if is_lil_process(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        for server in self.servers:
            server.stop()
        for pidfile in self.tmp.glob("pids-*"):  # the shells of sleepy.yaml
            for pid in pidfile.read_text().split():
                with contextlib.suppress(ValueError, ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def track(self, pid):
        """Kill pid (a child running a loop) at the end of the test."""
        if isinstance(pid, int) and pid > 0:
            self.pids.append(pid)

    def mcp_argv(self, flags):
        return [LIL_BIN, "--dir", str(self.store), "mcp", *flags]

    def start_http(self, flags, env=None):
        n = len(self.servers)
        server = HttpServer(self.mcp_argv(["--http", "127.0.0.1:0", *flags]), self.tmp,
                            self.tmp / f"http{n}.stderr", env)
        self.servers.append(server)
        return server

    @contextlib.asynccontextmanager
    async def session(self, flags=("--allow-run", "--spec-root", str(SPECS))):
        """An initialized ClientSession on `lil mcp FLAGS` and its Notes."""
        notes = Notes()
        info = types.Implementation(name=CLIENT_NAME, version="1.0")
        try:
            async with self._session(flags, notes, info) as s:
                yield s, notes
        except BaseExceptionGroup as group:
            raise leaf_of(group) from None  # the failure, not anyio's wrapping

    @contextlib.asynccontextmanager
    async def _session(self, flags, notes, info):
        async with contextlib.AsyncExitStack() as stack:
            if self.transport == "stdio":
                params = StdioServerParameters(command=LIL_BIN,
                                               args=self.mcp_argv(list(flags))[1:],
                                               cwd=str(self.tmp))
                err = stack.enter_context(open(self.tmp / "stdio.stderr", "w"))
                read, write = await stack.enter_async_context(stdio_client(params, err))
            else:
                server = self.start_http(list(flags))
                http = await stack.enter_async_context(httpx2.AsyncClient(
                    headers={"Authorization": f"Bearer {server.token}"},
                    timeout=httpx2.Timeout(30.0, read=300.0)))
                read, write = await stack.enter_async_context(
                    streamable_http_client(server.url, http_client=http))
            s = await stack.enter_async_context(ClientSession(
                read, write, read_timeout_seconds=60.0, message_handler=notes.handler,
                client_info=info))
            await s.initialize()
            yield s

    # ---- tools --------------------------------------------------------------

    def server_log(self):
        logs = sorted(self.tmp.glob("*.stderr"))
        return "\n".join(f"--- {p.name}:\n{p.read_text(errors='replace')[-4000:]}"
                         for p in logs)

    def ok(self, result, what=""):
        """The structuredContent of a tool result that must have succeeded."""
        if result.is_error:
            self.fail(f"{what or 'tool call'} failed: {text_of(result)}\n{self.server_log()}")
        self.assertIsInstance(result.structured_content, dict, what)
        return result.structured_content

    async def tool(self, s, name, args, **kw):
        return self.ok(await s.call_tool(name, args, **kw), name)

    async def facts(self, s, run_id):
        return await self.tool(s, "inspect_run", {"run_id": run_id})

    async def wait_status(self, s, run_id, statuses, timeout=30.0):
        """inspect_run until the run's status is one of statuses; its facts."""
        async def look():
            f = await self.facts(s, run_id)
            return f.get("status") in statuses, f
        return await apoll(f"run {run_id} to be {'/'.join(statuses)}", look, timeout)

    async def events(self, s, run_id):
        """Every event of the run, paged through run_events."""
        out, seq = [], 0
        for _ in range(1000):
            page = await self.tool(s, "run_events", {"run_id": run_id, "from_seq": seq})
            out.extend(page["events"])
            if not page.get("more"):
                return out
            self.assertGreater(page["next"], seq, "run_events' next does not move on")
            seq = page["next"]
        self.fail("run_events never ended")


def leaf_of(group):
    """The first exception of an exception group that is no group."""
    while isinstance(group, BaseExceptionGroup):
        group = group.exceptions[0]
    return group


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def pause_of(facts):
    """The pause a paused run waits at: the facts' paused or pause (or the
    loop facts'), which names its id and digest."""
    for doc in (facts, facts.get("loop") or {}):
        for key in ("paused", "pause"):
            paused = doc.get(key)
            if isinstance(paused, dict) and paused.get("id"):
                return paused
    raise AssertionError(f"no pause with an id in the facts: {facts}")

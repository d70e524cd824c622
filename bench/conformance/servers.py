"""servers.py -- the outside world of the conformance benchmark: a fake
OpenAI-compatible chat server and a ledger of side effects, two small HTTP
servers on 127.0.0.1 in the benchmark's own process, so that what happened
is counted outside the engine under test.

The LLM server answers ``POST /v1/chat/completions``.  The workload's
prompts read ``run R step I after T`` (T: the tag of the previous LLM
answer, ``start`` for the first); the answer is a JSON object
``{"tag": "R.I.cK", "text": ...}`` (K: the server's call number, so two
calls of one step never answer alike) with the usage a provider reports.
Every call is recorded: when it arrived and was answered, the step, the
tag it continued from, its tag and its tokens.

The ledger answers ``POST /effects`` with ``{"run", "step", "input"}`` and
an optional ``Idempotency-Key`` header, as a payment service does: a key
it has applied before gets the first answer again, applied nothing; any
other request is applied (a receipt ``rcK``).  A request whose body did
not arrive whole (its client was killed between the headers and the body)
is refused with 400 by both servers: nothing applied, nothing billed, and
its key not kept.  ``GET /effects/R/I`` is
the operator's look-up of an effect by what it is (run and step): 200 and
the first receipt when applied, else 404.  Every request is recorded.

Both servers wait a fixed time before answering (``llm_delay``,
``ledger_delay``) so that kills land inside calls as well as between them;
the set of calls in flight is kept for the kill's classification.
"""

import bisect
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROMPT = re.compile(r"run (\S+) step (\d+) after (\S+)")
FILLER = ("The quick brown fox jumps over the lazy dog. " * 9).strip()
COMPLETION_TOKENS = 100


class Recorder:
    """What the servers saw, under one lock: every LLM call and every
    ledger request, in arrival order, and the calls in flight."""

    def __init__(self):
        self.lock = threading.Lock()
        self.calls = []  # LLM calls: dicts
        self.effects = []  # ledger requests: dicts
        self.applied = {}  # (run, step) -> first receipt
        self.keys = {}  # idempotency key -> answer
        self.inflight = 0
        self.serial = 0
        self.arrivals = []  # arrival time of every request, as it arrives

    def next_serial(self):
        with self.lock:
            self.serial += 1
            return self.serial

    def begin(self):
        with self.lock:
            self.inflight += 1
            self.arrivals.append(time.monotonic())

    def end(self):
        with self.lock:
            self.inflight -= 1

    def busy(self):
        with self.lock:
            return self.inflight > 0

    def settle(self, limit=5.0):
        """Wait until no request is in flight (at most limit seconds)."""
        end = time.monotonic() + limit
        while self.busy() and time.monotonic() < end:
            time.sleep(0.001)

    def snapshot(self, run):
        """The calls and effect requests of one run, in arrival order."""
        with self.lock:
            return ([c for c in self.calls if c["run"] == run],
                    [e for e in self.effects if e["run"] == run])

    def arrival_after(self, t0):
        """The first arrival at or after t0 (monotonic), or None (arrivals
        are appended under the lock, so they are in order)."""
        with self.lock:
            k = bisect.bisect_left(self.arrivals, t0)
            return self.arrivals[k] if k < len(self.arrivals) else None

    def first_after(self, t0):
        """Arrival time of the first request at or after t0 (monotonic), or None."""
        with self.lock:
            ts = [x["t0"] for x in self.calls + self.effects if x["t0"] >= t0]
        return min(ts) if ts else None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # A client that keeps its connection (the llm harness does) would
    # otherwise wait for a delayed ACK between the headers and the body.
    disable_nagle_algorithm = True

    def log_message(self, *args):  # quiet
        pass

    def _body(self):
        """The request's JSON object, or None when the body is incomplete
        (its client was killed while sending it) or not an object: such a
        request is refused (400), as a real service refuses it, and nothing
        is applied or billed."""
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return None
        raw = self.rfile.read(n) if n > 0 else b""
        if len(raw) != n:
            return None
        try:
            body = json.loads(raw)
        except ValueError:
            return None
        return body if isinstance(body, dict) else None

    def _reply(self, code, obj):
        data = json.dumps(obj).encode()
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client was killed while it waited
            self.close_connection = True

    def do_POST(self):
        """A request in flight from its arrival to its answer; a body that
        is not whole (or not what the server takes) refused with 400."""
        rec = self.server.rec
        t0 = time.monotonic()
        rec.begin()
        try:
            body = self._body()
            if body is None or not self._takes(body):
                self._reply(400, {"error": "incomplete request"})
                return
            self._answer(rec, t0, body)
        finally:
            rec.end()

    def _takes(self, body):
        return True


class _LLMHandler(_Handler):
    def _answer(self, rec, t0, body):
        msgs = body.get("messages") or []
        prompt = " ".join(str(m.get("content", "")) for m in msgs if isinstance(m, dict))
        m = PROMPT.search(prompt)
        serial = rec.next_serial()
        run, step, prev = (m.group(1), int(m.group(2)), m.group(3)) if m else ("?", -1, "")
        tag = f"{run}.{step}.c{serial}"
        content = json.dumps({"tag": tag, "text": FILLER})
        ptok = max(1, (len(prompt) + 3) // 4)
        time.sleep(self.server.delay)
        with rec.lock:  # billed once answered, whether the client reads it or not
            rec.calls.append({"t0": t0, "t1": time.monotonic(), "run": run,
                              "step": step, "prev": prev, "tag": tag,
                              "tokens": ptok + COMPLETION_TOKENS})
        self._reply(200, {
            "id": f"chatcmpl-{serial}", "object": "chat.completion",
            "created": int(time.time()), "model": body.get("model", "conformance"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": ptok, "completion_tokens": COMPLETION_TOKENS,
                      "total_tokens": ptok + COMPLETION_TOKENS},
        })


class _LedgerHandler(_Handler):
    def _takes(self, body):
        return "run" in body and isinstance(body.get("step"), int)

    def _answer(self, rec, t0, body):
        key = self.headers.get("Idempotency-Key") or ""
        run, step = str(body["run"]), body["step"]
        time.sleep(self.server.delay)
        with rec.lock:
            rec.serial += 1
            if key and key in rec.keys:
                answer, applied = rec.keys[key], False
            else:
                answer, applied = {"receipt": f"rc{rec.serial}"}, True
                if key:
                    rec.keys[key] = answer
                rec.applied.setdefault((run, step), answer["receipt"])
            rec.effects.append({"t0": t0, "t1": time.monotonic(), "run": run,
                                "step": step, "input": str(body.get("input", "")),
                                "key": key, "applied": applied,
                                "receipt": answer["receipt"]})
        self._reply(200, dict(answer, applied=applied))

    def do_GET(self):
        parts = self.path.strip("/").split("/")
        if len(parts) == 3 and parts[0] == "effects":
            with self.server.rec.lock:
                receipt = self.server.rec.applied.get((parts[1], int(parts[2])))
            if receipt:
                self._reply(200, {"receipt": receipt})
                return
        self._reply(404, {"error": "no such effect"})


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):  # a killed client: nothing to say
        pass


class Servers:
    """Both servers, started on ephemeral ports; .llm_url and .ledger_url."""

    def __init__(self, llm_delay=0.010, ledger_delay=0.003):
        self.rec = Recorder()
        self._srv = []
        for handler, delay in ((_LLMHandler, llm_delay), (_LedgerHandler, ledger_delay)):
            srv = _Quiet(("127.0.0.1", 0), handler)
            srv.rec, srv.delay = self.rec, delay
            threading.Thread(target=srv.serve_forever, daemon=True).start()
            self._srv.append(srv)
        self.llm_url = f"http://127.0.0.1:{self._srv[0].server_address[1]}/v1"
        self.ledger_url = f"http://127.0.0.1:{self._srv[1].server_address[1]}"

    def close(self):
        for srv in self._srv:
            srv.shutdown()
            srv.server_close()

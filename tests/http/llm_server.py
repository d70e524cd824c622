#!/usr/bin/env python3
"""llm_server.py -- an OpenAI-compatible chat completion server for the
tests of the llm harness (tests/loop/test_agent_llm.c, t_agent.py).

    llm_server.py [--max-tokens N] [--ledger FILE]

Listens on 127.0.0.1, on an ephemeral port that it prints on its first line
of stdout, and serves until its stdin closes.  One thread per connection.

Every request is checked as the reference runtime sends it (docs/loops.md,
"Effects"): POST to
.../v1/chat/completions, Content-Type: application/json, a JSON body with
the model, the system message then the user's prompt, max_tokens N (2000
unless --max-tokens says otherwise: LIL_AGENT_MAX_TOKENS) and temperature 0
-- or max_completion_tokens N alone for a reasoning model (o<digit>...,
gpt-5...) -- and stream_options {include_usage: true} exactly when stream
is true.  A request that is not so gets 400 "bad request: <reason>" (a test
sees it in the error).

--ledger FILE: every request that passes the checks appends one JSON line
to FILE as soon as it is read, before any answer or wait -- the server
bills what it will report, as a provider bills a generation even when the
client is gone: {"scenario", "prompt_tokens", "completion_tokens",
"max_tokens"} (0 and 0 for an answer without usage or an error status).
The lines count the requests; their sums are what was billed.

The base URL chooses the answer: http://127.0.0.1:PORT/<scenario>[/<arg>]/v1
  text         "hello there", usage 3 + 2 tokens
  echo         the content is the JSON of {"auth", "headers", "body"} seen
  peer         the content is the client's "address:port", no usage (a
               connection kept between calls answers with the same port)
  fenced       a ```json fenced object with a `usage` key of the model's,
               usage 1M + 1M tokens
  cost         {"ok": true}, usage 10 + 5 tokens and cost 0.0123
  nousage      "four score and seven", no usage
  array        "[1, 2]" (JSON, but not an object)
  nullcontent  content null
  status/N     status N, a body that echoes the Authorization header
  echoerr/N    status N, a body that echoes the request's path (with its
               query) and every header
  ansi         status 400, a body with terminal controls: ESC [31m, BEL,
               CR, the C1 control U+0085 and the bidi override U+202E
  slow/MS      waits MS ms, then text
  big/N        content of N bytes "a"
  notjson      200 "hello" as text/plain
  usage/KIND   "hello there" with a usage that is none: KIND neg (prompt_tokens
               -5), zero (0 and 0), huge (10^12 completion tokens), frac (2.5
               prompt tokens), str ("3" as prompt_tokens), cost (a cost of -1)
  bill[/MS]    {"ok": true}, billed as a call that used its whole limit:
               prompt_tokens = the bytes of the system message and the
               prompt + 9 (chat framing), completion_tokens = max_tokens;
               answered MS ms after the request is billed (default 0)
A stream request (stream: true) gets server-sent events (chunked, cut in
pieces of a few bytes, usage null in every chunk but the last, which has
no choices; a comment line; then data: [DONE]), except:
  plainstream  a plain completion (no data: line)
  crlf         the events with CRLF line ends
  drop         two deltas, then the connection closes mid-stream
A CONNECT request (a client using this server as its https proxy) is
refused (403) and its target recorded; GET /connects lists the targets.
"""
import json
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SYSTEM = ("You are executing one step of an agent loop. If the step needs a "
          "structured result, reply with a single JSON object; otherwise reply "
          "with plain text.")
CONNECTS = []
MAX_TOKENS = 2000
LEDGER = None  # (path, lock) of --ledger
BAD_USAGE = {
    "neg": {"prompt_tokens": -5, "completion_tokens": 2},
    "zero": {"prompt_tokens": 0, "completion_tokens": 0},
    "huge": {"prompt_tokens": 3, "completion_tokens": 10 ** 12},
    "frac": {"prompt_tokens": 2.5, "completion_tokens": 2},
    "str": {"prompt_tokens": "3", "completion_tokens": 2},
    "cost": {"prompt_tokens": 3, "completion_tokens": 2, "cost": -1},
}


def normalize(model):
    m = model.strip().lower().rsplit("/", 1)[-1]
    return re.sub(r"-(\d{8}|\d{4}-\d{2}-\d{2})$", "", m)


def check(headers, body):
    """The reason the request is not what the reference sends, or None."""
    if headers.get("Content-Type") != "application/json":
        return "content-type %r" % headers.get("Content-Type")
    try:
        b = json.loads(body)
    except ValueError:
        return "body is not JSON"
    if not isinstance(b.get("model"), str):
        return "no model"
    msgs = b.get("messages")
    if (not isinstance(msgs, list) or len(msgs) != 2 or
            msgs[0] != {"role": "system", "content": SYSTEM} or
            msgs[1].get("role") != "user" or not isinstance(msgs[1].get("content"), str)):
        return "messages %r" % (msgs,)
    if re.match(r"^(o\d|gpt-5)", normalize(b["model"])):
        if b.get("max_completion_tokens") != MAX_TOKENS or "max_tokens" in b or \
                "temperature" in b:
            return "reasoning model without max_completion_tokens alone"
    elif b.get("max_tokens") != MAX_TOKENS or b.get("temperature") != 0 or \
            "max_completion_tokens" in b:
        return "max_tokens/temperature"
    if b.get("stream", None) not in (None, True):
        return "stream %r" % b.get("stream")
    if (b.get("stream") is True) != ("stream_options" in b):
        return "stream_options without stream or the reverse"
    if "stream_options" in b and b["stream_options"] != {"include_usage": True}:
        return "stream_options %r" % b["stream_options"]
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body go out in two writes: without TCP_NODELAY the body of
    # a reply on a kept connection waits for the client's delayed ACK
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):  # quiet
        pass

    def reply(self, status, body, ctype="application/json"):
        self.send_response_only(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def completion(self, content, usage):
        out = {"id": "c1", "object": "chat.completion",
               "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                            "finish_reason": "stop"}]}
        if usage is not None:
            out["usage"] = usage
        self.reply(200, json.dumps(out).encode())

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def stream(self, content, usage, nl=b"\n", drop=False):
        self.send_response_only(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        events = [b": keep-alive"]
        pieces = [content[i:i + 5] for i in range(0, len(content), 5)] or [""]
        for p in pieces:
            events.append(b"data: " + json.dumps(
                {"choices": [{"index": 0, "delta": {"content": p}}], "usage": None}).encode())
        if not drop:
            if usage is not None:
                events.append(b"data: " + json.dumps({"choices": [], "usage": usage}).encode())
            events.append(b"data: [DONE]")
        text = b"".join(e + nl + nl for e in events)
        if drop:
            text = text[:len(text) // 2]
        for i in range(0, len(text), 7):
            self.chunk(text[i:i + 7])
        if drop:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self.wfile.write(b"0\r\n\r\n")

    def do_GET(self):
        if self.path == "/connects":
            self.reply(200, json.dumps(CONNECTS).encode())
        else:
            self.reply(404, b"no such route", "text/plain")

    def do_CONNECT(self):
        CONNECTS.append(self.path)
        self.reply(403, b"no tunnels here", "text/plain")
        self.close_connection = True

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        parts = self.path.strip("/").split("/")
        if parts[-3:] != ["v1", "chat", "completions"] or len(parts) < 4:
            return self.reply(404, b"no such route: " + self.path.encode(), "text/plain")
        scenario, arg = parts[0], (parts[1] if len(parts) > 4 else "")
        bad = check(self.headers, body)
        if bad:
            return self.reply(400, ("bad request: " + bad).encode(), "text/plain")
        if scenario == "peer":
            return self.completion("%s:%d" % self.client_address[:2], None)
        req = json.loads(body)
        self.answer(scenario, arg, req, bool(req.get("stream")))

    @staticmethod
    def bill(scenario, req, usage):
        """Append what this request costs to the ledger (--ledger)."""
        if LEDGER is None:
            return
        u = usage or {}
        line = json.dumps({"scenario": scenario,
                           "prompt_tokens": u.get("prompt_tokens", 0),
                           "completion_tokens": u.get("completion_tokens", 0),
                           "max_tokens": req.get("max_tokens",
                                                 req.get("max_completion_tokens"))})
        with LEDGER[1]:
            with open(LEDGER[0], "a", encoding="utf-8") as f:
                f.write(line + "\n")

    @staticmethod
    def usage_of(scenario, arg, req):
        """The usage the answer reports (None: none)."""
        if scenario == "bill":
            sent = SYSTEM.encode() + req["messages"][1]["content"].encode()
            return {"prompt_tokens": len(sent) + 9,
                    "completion_tokens": req.get("max_tokens",
                                                 req.get("max_completion_tokens"))}
        if scenario == "fenced":
            return {"prompt_tokens": 1000000, "completion_tokens": 1000000}
        if scenario == "cost":
            return {"prompt_tokens": 10, "completion_tokens": 5, "cost": 0.0123}
        if scenario == "usage":
            return dict(BAD_USAGE[arg])
        if scenario in ("nousage", "status", "notjson", "ansi", "echoerr"):
            return None
        return {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}

    def answer(self, scenario, arg, req, stream):
        usage = self.usage_of(scenario, arg, req)
        self.bill(scenario, req, usage)
        content = "hello there"
        if scenario == "bill":
            content = '{"ok": true}'
            time.sleep(int(arg or 0) / 1000)
        elif scenario == "echo":
            content = json.dumps({"auth": self.headers.get("Authorization"),
                                  "headers": {k.lower(): v for k, v in self.headers.items()},
                                  "body": req})
        elif scenario == "fenced":
            content = '```json\n{"answer": 42, "usage": {"tokens": 1}}\n```'
        elif scenario == "cost":
            content = '{"ok": true}'
        elif scenario == "nousage":
            content = "four score and seven"
        elif scenario == "array":
            content = "[1, 2]"
        elif scenario == "nullcontent":
            content = None
        elif scenario == "status":
            msg = "provider says: bad key %s %s" % (self.headers.get("Authorization"),
                                                   "x" * 500)
            return self.reply(int(arg), msg.encode(), "text/plain")
        elif scenario == "echoerr":
            msg = "seen: %s %s" % (self.path, json.dumps(dict(self.headers.items())))
            return self.reply(int(arg), msg.encode(), "text/plain")
        elif scenario == "ansi":
            msg = "bad \x1b[31mred\x07 bell\r over \u0085 nel \u202e evil"
            return self.reply(400, msg.encode(), "text/plain")
        elif scenario == "slow":
            time.sleep(int(arg) / 1000)
        elif scenario == "big":
            content = "a" * int(arg)
        elif scenario == "notjson":
            return self.reply(200, b"hello", "text/plain")
        if stream and scenario != "plainstream":
            return self.stream(content or "", usage, b"\r\n" if scenario == "crlf" else b"\n",
                               drop=scenario == "drop")
        self.completion(content, usage)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        """A client that went away mid-answer (killed by a test) is no
        error of the server's; anything else is printed."""
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def main():
    global MAX_TOKENS, LEDGER
    args = sys.argv[1:]
    while args:
        opt, val = args[0], args[1]
        if opt == "--max-tokens":
            MAX_TOKENS = int(val)
        elif opt == "--ledger":
            LEDGER = (val, threading.Lock())
        else:
            sys.exit("usage: llm_server.py [--max-tokens N] [--ledger FILE]")
        args = args[2:]
    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()  # until the test closes it
    server.shutdown()


if __name__ == "__main__":
    main()

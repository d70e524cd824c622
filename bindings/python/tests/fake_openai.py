"""A fake OpenAI-compatible chat completions server for the adapter tests.

``FakeOpenAI(script, log_path)`` serves ``POST .../chat/completions`` on
127.0.0.1 (a free port; ``.url`` is the base URL to give a client, ending in
``/v1``) from a thread of the test process.  ``script(request)`` is given
the request's JSON and returns the assistant's reply: a str (its content)
or a dict ``{"tool_calls": [{"name": ..., "arguments": {...}}, ...]}``.
The reply must depend on the request only, so a program that resumes and
sends the same conversation gets the same answer.

Every request appends one line to ``log_path`` *before* it is answered:
``<digest> <n_messages>``, the digest being the SHA-256 of the request's
messages (16 hex digits).  A line is a model call that reached the model;
the tests count them across crashed and resumed processes.  ``delay``
seconds pass before each answer (a window for random kills).

``"stream": true`` requests get server-sent events: one chunk with the
whole reply, a finishing chunk, a usage chunk and ``[DONE]``.
"""

import hashlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from helpers import append_line


def messages_digest(messages) -> str:
    text = json.dumps(messages, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def message_text(message) -> str:
    """The text of a message's content (a str, or a list of text parts)."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _tool_calls(reply, seq):
    calls = []
    for i, call in enumerate(reply["tool_calls"]):
        calls.append({"id": f"call_{seq}_{i}", "type": "function",
                      "function": {"name": call["name"],
                                   "arguments": json.dumps(call["arguments"])}})
    return calls


def _message(reply, seq):
    if isinstance(reply, str):
        return {"role": "assistant", "content": reply}, "stop"
    return ({"role": "assistant", "content": None,
             "tool_calls": _tool_calls(reply, seq)}, "tool_calls")


_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 -- the base class's name
        pass

    def do_GET(self):
        self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        fake = self.server.fake
        messages = request.get("messages", [])
        digest = messages_digest(messages)
        append_line(fake.log_path, f"{digest} {len(messages)}")
        try:
            reply = fake.script(request)
        except Exception as exc:  # a broken script: the client sees why
            self._send(500, {"error": {"message": f"fake model script: {exc!r}"}})
            return
        seq = digest[:8]  # ids that depend on the request only
        if fake.delay:
            time.sleep(fake.delay)
        message, finish = _message(reply, seq)
        if request.get("stream"):
            self._stream(request, message, finish, seq)
            return
        self._send(200, {"id": f"chatcmpl-{seq}", "object": "chat.completion",
                         "created": 1700000000, "model": request.get("model", "fake"),
                         "choices": [{"index": 0, "message": message,
                                      "finish_reason": finish, "logprobs": None}],
                         "usage": _USAGE})

    def _send(self, status, doc):
        body = json.dumps(doc).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, request, message, finish, seq):
        delta = dict(message)
        if "tool_calls" in delta:
            delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(delta["tool_calls"])]
        base = {"id": f"chatcmpl-{seq}", "object": "chat.completion.chunk",
                "created": 1700000000, "model": request.get("model", "fake")}
        events = [dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
                  dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}])]
        if (request.get("stream_options") or {}).get("include_usage"):
            events.append(dict(base, choices=[], usage=_USAGE))
        body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        data = body.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # a client killed while it waited for its answer: nothing to report
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeOpenAI:
    """The server; ``close()`` stops it."""

    def __init__(self, script, log_path, delay=0.0):
        self.script = script
        self.log_path = log_path
        self.delay = delay
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self):
        self._server.shutdown()
        self._server.server_close()

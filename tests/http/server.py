#!/usr/bin/env python3
"""server.py -- the HTTP server of the http effect's tests (test_http.c).

Listens on 127.0.0.1, on an ephemeral port that it prints on its first line
of stdout, and serves until its stdin closes (the test process ended, even
by a crash).  HTTP/1.1 with keep-alive; one thread per connection, so a
slow route does not hold up the others.

Routes (query parameters in brackets):
  /json            200 {"state":"green"}, application/json
  /text503         503 "not json", text/plain
  /json503         503 {"state":"red"}, only Content-Type and Content-Length
  /plain           200 "plain ok", text/plain
  /raw[status,ctype,body,hex]  any status, type and body (hex: raw bytes)
  /headers         repeated headers, Set-Cookie, a Latin-1 value
  /bighead[n]      one header of n bytes
  /echo            {"method","path","headers","body","body_hex"} of the request
  /redirect[code,to]  a redirect to `to` (no Location without `to`)
  /chain[n]        n redirects in a row, then /json
  /slow[ms]        waits, then /json
  /slowbody[ms]    sends headers and half the body, waits, sends the rest
  /slowchain[n,ms] waits, then redirects n times (each after a wait)
  /big[n,chunked]  n bytes of "a" (chunked: no Content-Length)
  /gzip[n,json]    gzip-encoded: n spaces, or {"zipped":true}
"""
import gzip
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet
        pass

    def reply(self, status, body=b"", headers=(), length=True):
        self.send_response_only(status)
        for name, value in headers:
            self.send_header(name, value)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def json(self, status, value, extra=()):
        body = json.dumps(value, separators=(",", ":")).encode()
        self.reply(status, body, [("Content-Type", "application/json")] + list(extra))

    def request_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def handle_any(self):
        url = urlsplit(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        body = self.request_body()
        route = getattr(self, "route_" + url.path.strip("/"), None)
        if route is None:
            self.reply(404, b"no such route", [("Content-Type", "text/plain")])
        else:
            route(q, body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

    # ---- routes ----------------------------------------------------------

    def route_json(self, q, body):
        self.json(200, {"state": "green"})

    def route_text503(self, q, body):
        self.reply(503, b"not json", [("Content-Type", "text/plain")])

    def route_json503(self, q, body):
        self.json(503, {"state": "red"})

    def route_plain(self, q, body):
        self.reply(200, b"plain ok", [("Content-Type", "text/plain")])

    def route_raw(self, q, body):
        data = bytes.fromhex(q["hex"]) if "hex" in q else q.get("body", "").encode()
        headers = [("Content-Type", q["ctype"])] if "ctype" in q else []
        status = int(q.get("status", "200"))
        self.reply(status, data, headers, length=status not in (204, 304))

    def route_headers(self, q, body):
        self.reply(200, b"{}", [("Content-Type", "application/json"),
                                ("X-Multi", "a"), ("X-Multi", "b"),
                                ("Set-Cookie", "s=1"), ("Set-Cookie", "t=2"),
                                ("X-Latin", "caf\u00e9"), ("X-Blank", "")])

    def route_bighead(self, q, body):
        self.reply(200, b"{}", [("X-Big", "h" * int(q.get("n", "1000")))])

    def route_echo(self, q, body):
        headers = {}
        for name, value in self.headers.items():
            name = name.lower()
            headers[name] = headers[name] + ", " + value if name in headers else value
        self.json(200, {"method": self.command, "path": self.path, "headers": headers,
                        "body": body.decode("utf-8", "replace"), "body_hex": body.hex()})

    def route_redirect(self, q, body):
        headers = [("Location", q["to"])] if "to" in q else []
        self.reply(int(q.get("code", "302")), b"moved", headers)

    def route_chain(self, q, body):
        n = int(q.get("n", "0"))
        to = "/chain?n=%d" % (n - 1) if n > 0 else "/json"
        self.reply(302, b"", [("Location", to)])

    def route_slow(self, q, body):
        time.sleep(int(q.get("ms", "1000")) / 1000)
        self.json(200, {"state": "slow"})

    def route_slowbody(self, q, body):
        data = b'{"state":"slow body"}'
        self.send_response_only(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[:5])
        self.wfile.flush()
        time.sleep(int(q.get("ms", "1000")) / 1000)
        self.wfile.write(data[5:])

    def route_slowchain(self, q, body):
        n, ms = int(q.get("n", "0")), int(q.get("ms", "100"))
        time.sleep(ms / 1000)
        if n == 0:
            self.json(200, {"state": "end of chain"})
        else:
            self.reply(302, b"", [("Location", "/slowchain?n=%d&ms=%d" % (n - 1, ms))])

    def route_big(self, q, body):
        n = int(q.get("n", "0"))
        if q.get("chunked"):
            self.send_response_only(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"a" * 65536
            left = n
            try:
                while left > 0:
                    part = chunk[:min(left, len(chunk))]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    left -= len(part)
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
            return
        try:
            self.reply(200, b"a" * n, [("Content-Type", "text/plain")])
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def route_gzip(self, q, body):
        raw = b'{"zipped":true}' if q.get("json") else b" " * int(q.get("n", "0"))
        self.reply(200, gzip.compress(raw), [("Content-Type", "application/json"),
                                             ("Content-Encoding", "gzip")])


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # a client that hangs up (a timeout, a size cap) is what the tests do
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def main():
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # until the test process closes it


if __name__ == "__main__":
    main()

"""test_mcp_sdk -- `lil mcp` driven by the official MCP Python SDK's client.

Every scenario runs over stdio (StdioTests: the SDK spawns `lil mcp`) and
over Streamable HTTP (HttpTests: `lil mcp --http 127.0.0.1:0`, the bearer
token in the client's headers), with a store of its own:

- the tools listed, their input and output schemas valid JSON Schema, their
  annotations; every read tool answers what its output schema describes (the
  SDK checks structuredContent against it);
- a broken spec validated: isError, its diagnostics at file:line:column;
- a loop with a shell step and a breakpoint started, its resource
  subscribed, notifications/resources/updated received as it pauses, a
  wrong pause id refused, the pause approved by its id, the run completed,
  the approval journaled with the actor mcp:<client name> and the reason;
- a running loop stopped;
- an uncertain run (its child SIGKILLed in a shell step) recovered with
  retry, and completed;
- with --read-only no steering tool is listed and calling one is refused.

HttpRefusalTests speaks plain HTTP (http.client): a request without the
token or with a wrong one is 401, one from a foreign Origin is 403, the same
request with the token and the server's own Origin is served.
"""

import http.client
import json
import os
import signal
import unittest

from jsonschema import Draft202012Validator
from mcp.shared.exceptions import MCPError

from mcp_harness import (ACTOR, READ_TOOLS, SPECS, START_TOOLS, STEER_TOOLS, McpTestCase,
                         apoll, pause_of, poll, process_gone, text_of)


class Scenarios:
    """The scenarios, run by a McpTestCase subclass per transport."""

    async def test_list_tools(self):
        async with self.session() as (s, _):
            listed = (await s.list_tools()).tools
            names = {t.name for t in listed}
            self.assertEqual(names, READ_TOOLS | STEER_TOOLS | START_TOOLS)
            for t in listed:
                with self.subTest(tool=t.name):
                    self.assertTrue(t.description)
                    for schema in (t.input_schema, t.output_schema):
                        self.assertIsInstance(schema, dict)
                        self.assertEqual(schema.get("type"), "object")
                        Draft202012Validator.check_schema(schema)
                    hints = t.annotations
                    self.assertIsNotNone(hints, "no annotations")
                    self.assertEqual(hints.read_only_hint, t.name in READ_TOOLS)
                    if t.name in READ_TOOLS:
                        self.assertIs(hints.destructive_hint, False)
                        self.assertIs(hints.idempotent_hint, True)
            # The read tools answer what their output schemas say (call_tool
            # validates structuredContent against them).
            runs = await self.tool(s, "list_runs", {})
            self.assertEqual(runs["runs"], [])
            await self.tool(s, "explain_spec", {"spec": "breakpoint.yaml"})
            await self.tool(s, "doctor", {"spec": "breakpoint.yaml"})

    async def test_validate_broken_spec(self):
        async with self.session() as (s, _):
            good = await self.tool(s, "validate_spec", {"spec": "breakpoint.yaml"})
            self.assertIs(good["valid"], True)
            self.assertEqual(good["spec"], "mcp-breakpoint")

            bad = await s.call_tool("validate_spec", {"spec": "broken.yaml"})
            self.assertTrue(bad.is_error, text_of(bad))
            self.assertIn("broken.yaml:10:11: error:", text_of(bad))
            self.assertIn("'shel'", text_of(bad))
            doc = bad.structured_content
            self.assertIs(doc["valid"], False)
            errors = [d for d in doc["diagnostics"] if d["severity"] == "error"]
            self.assertTrue(any(d["file"].endswith("broken.yaml") and d["line"] == 10 and
                                d["column"] == 11 for d in errors), errors)

            outside = await s.call_tool("validate_spec", {"spec": "../py/test_mcp_sdk.py"})
            self.assertTrue(outside.is_error)
            self.assertIn("outside --spec-root", text_of(outside))

    async def test_pause_notified_then_approved(self):
        async with self.session() as (s, notes):
            started = await self.tool(s, "start_run", {
                "spec": "breakpoint.yaml", "reason": "py test"})
            run = started["run_id"]
            self.assertEqual(run, "mcp-breakpoint")
            self.track(started.get("pid"))
            uri = f"lil://runs/{run}"
            await s.subscribe_resource(uri)
            (self.tmp / "go").touch()  # the first shell step ends, the breakpoint pauses

            facts = await self.wait_notified(s, notes, uri, "paused")
            pause = pause_of(facts)
            self.assertTrue(pause["digest"])

            wrong = await s.call_tool("approve_run", {
                "run_id": run, "pause_id": "pause.999", "reason": "not the one seen"})
            self.assertTrue(wrong.is_error, text_of(wrong))
            self.assertEqual((await self.facts(s, run))["status"], "paused")

            approved = await self.tool(s, "approve_run", {
                "run_id": run, "pause_id": pause["id"], "reason": "n looks right",
                "wait": True})
            self.track(approved.get("pid"))
            self.assertEqual(approved["status"], "completed", approved)
            facts = await self.wait_status(s, run, {"completed"})
            self.assertEqual(facts["loop"]["state"]["n"], 1)
            self.assertEqual((self.tmp / "side.txt").read_text().split(), ["before", "after"])
            approvals = [e for e in await self.events(s, run) if e["type"] == "approval"]
            self.assertTrue(any(e.get("actor") == ACTOR and e.get("reason") == "n looks right"
                                for e in approvals), approvals)
            ended = await s.call_tool("stop_run", {"run_id": run, "reason": "too late"})
            self.assertTrue(ended.is_error, "a completed run asked to stop")

    async def wait_notified(self, s, notes, uri, status, timeout=20.0):
        """The run's facts once its status is status, looked at on each
        notifications/resources/updated of uri (never without one)."""
        seen = 0
        while True:
            while len(notes.updated(uri)) == seen:
                if not await notes.wait(timeout):
                    self.fail(f"no notifications/resources/updated of {uri} in {timeout}s "
                              f"(got {notes.items}, errors {notes.errors})\n"
                              f"{self.server_log()}")
            seen = len(notes.updated(uri))
            facts = await self.facts(s, uri.rsplit("/", 1)[1])
            if facts["status"] == status:
                return facts

    async def test_stop_running_loop(self):
        async with self.session() as (s, _):
            started = await self.tool(s, "start_run", {"spec": "slow.yaml"})
            run = started["run_id"]
            self.track(started.get("pid"))

            async def iterating():
                f = await self.facts(s, run)
                return f["status"] == "running" and (f.get("iteration") or 0) >= 1, f
            await apoll("the slow loop to end an iteration", iterating)

            stop = await self.tool(s, "stop_run", {"run_id": run, "reason": "enough ticks"})
            self.assertIs(stop["requested"], True)
            self.assertEqual(stop["run_id"], run)
            facts = await self.wait_status(s, run, {"stopped"})
            self.assertIs(facts["ended"], False)  # resume_run would go on
            stops = [e for e in await self.events(s, run) if e["type"] == "stop"]
            self.assertEqual([(e["actor"], e["reason"]) for e in stops],
                             [(ACTOR, "enough ticks")])

    async def test_recover_uncertain(self):
        pids, count = self.tmp / "pids-a", self.tmp / "count-a.txt"
        async with self.session() as (s, _):
            started = await self.tool(s, "start_run", {"spec": "sleepy.yaml"})
            run, pid = started["run_id"], started["pid"]
            self.assertIsInstance(pid, int)
            self.track(pid)
            poll("the shell step to start", lambda: pids.exists() and pids.read_text().strip())
            os.kill(pid, signal.SIGKILL)  # the loop dies inside its effect
            os.kill(int(pids.read_text().split()[0]), signal.SIGKILL)  # and its step
            poll("the killed child to exit", lambda: process_gone(pid))
            facts = await self.wait_status(s, run, {"uncertain"})
            self.assertTrue(facts["uncertain"], facts)
            (self.tmp / "release-a").touch()  # the step run again ends at once

            progress = []

            async def on_progress(done, total, message):
                progress.append((done, total, message))
            recovered = await self.tool(s, "recover_run", {
                "run_id": run, "action": "retry", "wait": True,
                "reason": "the sleep was killed before it did anything"},
                progress_callback=on_progress)
            self.track(recovered.get("pid"))
            self.assertEqual(recovered["status"], "completed", recovered)
            self.assertEqual(recovered["exit_code"], 0)
            self.assertTrue(progress, "no notifications/progress while the loop ran")
            facts = await self.wait_status(s, run, {"completed"})
            self.assertFalse(facts["uncertain"])
            recoveries = [e for e in await self.events(s, run) if e["type"] == "recovery"]
            self.assertEqual([(e["how"], e["actor"]) for e in recoveries], [("retry", ACTOR)])
            self.assertEqual(count.read_text().split(), ["ran", "ran"])  # killed, then again

    async def test_read_only_refuses_steering(self):
        async with self.session(("--read-only", "--spec-root", str(SPECS))) as (s, _):
            names = {t.name for t in (await s.list_tools()).tools}
            self.assertEqual(names, READ_TOOLS)
            for name, args in (("stop_run", {"run_id": "mcp-slow", "reason": "no"}),
                               ("start_run", {"spec": "slow.yaml"})):
                with self.subTest(tool=name):
                    with self.assertRaises(MCPError) as caught:
                        await s.call_tool(name, args)
                    self.assertEqual(caught.exception.code, -32602)
                    self.assertIn(name, caught.exception.message)
            runs = await self.tool(s, "list_runs", {})
            self.assertEqual(runs["runs"], [], "a refused start_run started a run")


class StdioTests(Scenarios, McpTestCase):
    transport = "stdio"


class HttpTests(Scenarios, McpTestCase):
    transport = "http"


INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "raw", "version": "1"}}})


class HttpRefusalTests(McpTestCase):
    """Refusals of the HTTP transport, seen with plain http.client."""

    def post(self, server, headers):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=15)
        try:
            conn.request("POST", "/mcp", INITIALIZE, {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream", **headers})
            resp = conn.getresponse()
            return resp.status, dict(resp.getheaders()), resp.read()
        finally:
            conn.close()

    def test_token_and_origin(self):
        token = "py-test-token-0123456789abcdef"
        server = self.start_http(["--read-only"], env={**os.environ, "LIL_MCP_TOKEN": token})
        self.assertEqual(server.token, token)
        own = f"http://127.0.0.1:{server.port}"
        bearer = {"Authorization": f"Bearer {token}"}

        status, headers, body = self.post(server, {})
        self.assertEqual(status, 401, body)
        self.assertTrue(headers.get("WWW-Authenticate", "").startswith("Bearer"), headers)
        self.assertIn("error", json.loads(body))

        status, _, body = self.post(server, {"Authorization": f"Bearer {token}x"})
        self.assertEqual(status, 401, body)
        status, _, body = self.post(server, {"Authorization": token})
        self.assertEqual(status, 401, body)

        status, _, body = self.post(server, {**bearer, "Origin": "http://evil.example"})
        self.assertEqual(status, 403, body)
        status, _, body = self.post(server, {**bearer,
                                             "Origin": f"http://localhost.evil:{server.port}"})
        self.assertEqual(status, 403, body)

        for headers in (bearer, {**bearer, "Origin": own}):
            status, got, body = self.post(server, headers)
            self.assertEqual(status, 200, body)
            self.assertTrue(got.get("Mcp-Session-Id") or got.get("mcp-session-id"), got)
        self.assertEqual(server.stop(), 0)


if __name__ == "__main__":
    unittest.main()

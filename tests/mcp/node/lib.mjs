// lib.mjs -- what the TypeScript SDK tests of `lil mcp` share: a server in a
// temporary directory reached over stdio or Streamable HTTP through the
// official SDK client, tool calls whose structured answers are checked
// against the tool's output schema, polls with a deadline, and cleanup of
// every process a test started (what runs in its directory at the end).
//
// The environment names the binary and the specs: LIL_BIN (the lil
// executable) and LIL_MCP_SPECS (tests/mcp/specs, given as --spec-root).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';

export const LIL = process.env.LIL_BIN;
export const SPECS = process.env.LIL_MCP_SPECS;
if (!LIL || !SPECS) throw new Error('LIL_BIN and LIL_MCP_SPECS must be set');

// The tools: the six that read, the steering ones, the ones that start runs.
export const READ_TOOLS = ['doctor', 'explain_spec', 'inspect_run', 'list_runs', 'run_events',
  'validate_spec'];
export const STEER_TOOLS = ['approve_run', 'recover_run', 'resume_run', 'step_run', 'stop_run'];
export const START_TOOLS = ['start_run', 'submit_run'];

// Both JSON Schema dialects a client may compile a tool's schemas with: the
// SDK's own validator is draft-07 Ajv; the protocol's default is 2020-12.
export const ajv07 = new Ajv({ strict: false, allErrors: true });
export const ajv2020 = new Ajv2020({ strict: false, allErrors: true });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Call fn until it returns something truthy; throw naming what was awaited
// (and the last value seen) when ms pass first.
export async function until(what, fn, ms = 20000, every = 100) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    last = await fn();
    if (last) return last;
    if (Date.now() > end) {
      throw new Error(`timed out after ${ms / 1000} s waiting for ${what}` +
        (last === undefined ? '' : ` (last: ${JSON.stringify(last)})`));
    }
    await sleep(every);
  }
}

// Wait for a child process to exit, at most ms; true when it did.
function exited(proc, ms) {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    proc.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

// Whether process pid is alive (not a zombie we could still signal).
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// SIGKILL what still runs in dir: the loops the server started run in its
// directory (their shell steps in process groups of their own), and a test
// that failed half-way may leave one behind.
function killRunningIn(dir) {
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    let cwd;
    try { cwd = readlinkSync(`/proc/${p}/cwd`); } catch { continue; }
    if (cwd === dir || cwd.startsWith(`${dir}/`)) {
      try { process.kill(Number(p), 'SIGKILL'); } catch { /* gone */ }
    }
  }
}

// `lil mcp` for HTTP: start it, read the URL and the token from stderr.
async function startHttp(args, cwd, env) {
  const proc = spawn(LIL, [...args, '--http', '127.0.0.1:0'], {
    cwd, env, stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (d) => { err += d; });
  const noToken = args.includes('--no-token');
  const got = await until('`lil mcp --http` to print its URL' + (noToken ? '' : ' and token'), () => {
    if (proc.exitCode !== null) throw new Error(`lil mcp --http exited ${proc.exitCode}: ${err}`);
    const url = /^lil mcp: listening on (http:\/\/\S+)$/m.exec(err);
    const token = /^lil mcp: token (\S+)$/m.exec(err);
    if (url && (noToken || token)) return { url: url[1], token: token ? token[1] : null };
    return null;
  }, 10000, 20);
  return { proc, stderr: () => err, ...got };
}

// A server and an SDK client connected to it.  opts: transport ('stdio' or
// 'http'), flags (more `lil mcp` flags), name (the client's name).  Close it
// with close(): the client, the server, every pid given to track(), the
// directory.
export async function connect(opts) {
  const dir = mkdtempSync(join(tmpdir(), 'lil-mcp-ts-'));
  const store = join(dir, 'store');
  const args = ['mcp', '--dir', store, ...(opts.flags ?? [])];
  const env = { ...process.env };
  delete env.LIL_DIR;
  const name = opts.name ?? 'ts-sdk-test';
  const client = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  const pids = [];
  let server = null;
  let transport;
  let stderr;
  if (opts.transport === 'stdio') {
    transport = new StdioClientTransport({ command: LIL, args, cwd: dir, env, stderr: 'pipe' });
    let err = '';
    transport.stderr.setEncoding('utf8');
    transport.stderr.on('data', (d) => { err += d; });
    stderr = () => err;
  } else {
    server = await startHttp(args, dir, env);
    const headers = server.token ? { Authorization: `Bearer ${server.token}` } : {};
    transport = new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } });
    stderr = server.stderr;
  }
  await client.connect(transport);
  // How the server ends: stdio's at its stdin's end, HTTP's at SIGTERM.
  const proc = server ? server.proc : transport._process;
  const ended = new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) resolve([proc.exitCode, proc.signalCode]);
    else proc.once('exit', (code, sig) => resolve([code, sig]));
  });
  const tools = (await client.listTools()).tools; // caches the output validators
  const self = {
    client, dir, store, tools, server, stderr, name,
    track: (pid) => { if (pid) pids.push(pid); },
    // tools/call: the whole result; its structuredContent, when present, is
    // also checked here against the 2020-12 reading of the output schema.
    call: async (tool, args = {}) => {
      const res = await client.callTool({ name: tool, arguments: args });
      checkStructured(tools, tool, res);
      return res;
    },
    // A call that must succeed: its structuredContent.
    ok: async (tool, args = {}) => {
      const res = await self.call(tool, args);
      if (res.isError) {
        throw new Error(`${tool} ${JSON.stringify(args)} failed: ${text(res)}`);
      }
      return res.structuredContent;
    },
    // End everything; answer what went wrong with the server's end: it must
    // exit 0 (at stdin's end over stdio, at SIGTERM over HTTP) and print no
    // sanitizer's report.
    close: async () => {
      const problems = [];
      await client.close().catch(() => {});
      if (server) server.proc.kill('SIGTERM');
      if (!(await exited(proc, 5000))) {
        proc.kill('SIGKILL');
        problems.push(`lil mcp did not exit within 5 s of ${server ? 'SIGTERM' : "stdin's end"}`);
      } else {
        const [code, sig] = await ended;
        if (code !== 0) {
          problems.push(`lil mcp ended with ${sig ?? `exit ${code}`} at ` +
            `${server ? 'SIGTERM' : "stdin's end"}, not exit 0`);
        }
      }
      const report = /^.*(Sanitizer|runtime error:).*$/m.exec(stderr());
      if (report) problems.push(`lil mcp's stderr has a sanitizer's report: ${report[0]}`);
      for (const pid of pids) {
        try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ }
        try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
      }
      killRunningIn(dir);
      rmSync(dir, { recursive: true, force: true });
      return problems;
    },
  };
  return self;
}

// The text of a tool result's content.
export function text(res) {
  return (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

const validators = new Map();

// structuredContent of tool validates against its outputSchema (2020-12).
function checkStructured(tools, tool, res) {
  const t = tools.find((x) => x.name === tool);
  if (!t || !t.outputSchema || res.structuredContent === undefined) return;
  let v = validators.get(t.outputSchema);
  if (!v) {
    v = ajv2020.compile(t.outputSchema);
    validators.set(t.outputSchema, v);
  }
  if (!v(res.structuredContent)) {
    throw new Error(`${tool}: structuredContent does not match its outputSchema (2020-12): ` +
      `${ajv2020.errorsText(v.errors)}: ${JSON.stringify(res.structuredContent).slice(0, 2000)}`);
  }
}

// The pause a run waits at, from inspect_run's facts: {id, digest} or null.
export function pauseOf(facts) {
  const loop = facts?.loop ?? {};
  const p = loop.paused ?? loop.waiting_for ?? facts?.paused ?? null;
  return p && p.id ? p : null;
}

// The loop's status from inspect_run's facts.
export function loopStatus(facts) {
  return facts?.loop?.status ?? facts?.status;
}

// Plain HTTP to the server, without the SDK: {status, body}.
export async function rawPost(url, headers, body) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

// The one JSON-RPC message of a rawPost answer: a JSON body, or the first
// `data:` of an event stream.
export function rpcOf(res) {
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const data = /^data: ?(.*)$/m.exec(res.body);
    if (!data) throw new Error(`no data in the event stream: ${res.body}`);
    return JSON.parse(data[1]);
  }
  return JSON.parse(res.body);
}

export const INIT = {
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

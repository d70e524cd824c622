// inspector.mjs -- the inspector's CLI drives `lil mcp` over stdio: the
// one-liner of docs/mcp.md,
//
//   npx @modelcontextprotocol/inspector --cli lil mcp --dir DIR --method tools/list
//
// with the inspector's pinned version and `lil` found on PATH, over a new
// store: the plain server (the read and steering tools), --read-only (the
// read tools), --allow-run (the tools that start runs too); a tool called
// with an argument; and the same server named in an MCP client's
// configuration file, {"mcpServers": {"lil": {"command": "lil", "args":
// ["mcp", "--dir", DIR]}}}.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { LIL, READ_TOOLS, SPECS, START_TOOLS, STEER_TOOLS } from './lib.mjs';

const inspector = join(process.env.LIL_NODE_MODULES, '.bin', 'mcp-inspector');
const dir = mkdtempSync(join(tmpdir(), 'lil-mcp-inspector-'));
const store = join(dir, 'store');
const env = { ...process.env, PATH: `${dirname(LIL)}:${process.env.PATH}` };
let passed = 0;
let failed = 0;

// The inspector's JSON answer for argv.
function inspect(argv) {
  console.log(`mcp-inspector ${argv.join(' ')}`);
  const r = spawnSync(inspector, argv, { cwd: dir, env, encoding: 'utf8', timeout: 60000 });
  if (r.status !== 0) {
    throw new Error(`the inspector exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
  }
  return JSON.parse(r.stdout);
}

const names = (answer) => answer.tools.map((t) => t.name).sort();

function check(what, ok, detail) {
  console.log(`${ok ? 'ok' : 'FAILED'}: ${what}${detail ? `: ${detail}` : ''}`);
  if (ok) passed++;
  else failed++;
}

function same(what, got, want) {
  const ok = JSON.stringify(got) === JSON.stringify([...want].sort());
  check(what, ok, ok ? got.join(' ') : `${got.join(' ')}\n  want: ${[...want].sort().join(' ')}`);
}

try {
  const list = (flags) => names(inspect(['--cli', 'lil', 'mcp', '--dir', store, ...flags,
    '--method', 'tools/list']));
  same('lil mcp', list([]), [...READ_TOOLS, ...STEER_TOOLS]);
  same('lil mcp --read-only', list(['--read-only']), READ_TOOLS);
  same('lil mcp --allow-run', list(['--allow-run', '--spec-root', SPECS]),
    [...READ_TOOLS, ...STEER_TOOLS, ...START_TOOLS]);

  const call = inspect(['--cli', 'lil', 'mcp', '--dir', store, '--method', 'tools/call',
    '--tool-name', 'list_runs', '--tool-arg', 'limit=5']);
  check('tools/call list_runs limit=5', Array.isArray(call.structuredContent?.runs) && !call.isError,
    JSON.stringify(call).slice(0, 300));

  const config = join(dir, 'mcp.json');
  writeFileSync(config, JSON.stringify({
    mcpServers: { lil: { command: 'lil', args: ['mcp', '--dir', store] } },
  }, null, 2));
  same('the client configuration {"mcpServers": {"lil": ...}}',
    names(inspect(['--cli', '--config', config, '--server', 'lil', '--method', 'tools/list'])),
    [...READ_TOOLS, ...STEER_TOOLS]);
} catch (e) {
  check('the inspector', false, e.message);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

// inspector.mjs -- the inspector's CLI lists the tools of `lil mcp` over
// stdio: the one-liner of docs/mcp.md,
//
//   npx @modelcontextprotocol/inspector --cli lil mcp --dir DIR --method tools/list
//
// run with the inspector's pinned version over a new store: the plain server
// (the read and steering tools), --read-only (the read tools) and
// --allow-run (the tools that start runs too).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { LIL, READ_TOOLS, SPECS, START_TOOLS, STEER_TOOLS } from './lib.mjs';

const inspector = join(process.env.LIL_NODE_MODULES, '.bin', 'mcp-inspector');
const dir = mkdtempSync(join(tmpdir(), 'lil-mcp-inspector-'));
let passed = 0;
let failed = 0;

// The inspector's answer to tools/list for `lil mcp ARGS`: the tool names.
function listTools(args) {
  const argv = ['--cli', LIL, 'mcp', '--dir', join(dir, 'store'), ...args, '--method', 'tools/list'];
  console.log(`mcp-inspector ${argv.join(' ')}`);
  const r = spawnSync(inspector, argv, { cwd: dir, encoding: 'utf8', timeout: 60000 });
  if (r.status !== 0) {
    throw new Error(`the inspector exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
  }
  return JSON.parse(r.stdout).tools.map((t) => t.name).sort();
}

function check(what, got, want) {
  const ok = JSON.stringify(got) === JSON.stringify([...want].sort());
  console.log(`${ok ? 'ok' : 'FAILED'}: ${what}: ${got.join(' ')}`);
  if (ok) passed++;
  if (!ok) {
    console.log(`  want: ${[...want].sort().join(' ')}`);
    failed++;
  }
}

try {
  check('lil mcp', listTools([]), [...READ_TOOLS, ...STEER_TOOLS]);
  check('lil mcp --read-only', listTools(['--read-only']), READ_TOOLS);
  check('lil mcp --allow-run', listTools(['--allow-run', '--spec-root', SPECS]),
    [...READ_TOOLS, ...STEER_TOOLS, ...START_TOOLS]);
} catch (e) {
  console.log(`FAILED: ${e.message}`);
  failed++;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

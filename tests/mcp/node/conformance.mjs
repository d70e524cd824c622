// conformance.mjs -- the MCP conformance suite's server scenarios against
// `lil mcp --http 127.0.0.1:0 --no-token`.
//
//   node conformance.mjs EXPECTED.yml [SCENARIO]
//
// Every scenario of the suite's "active" set runs (or only SCENARIO); the
// suite exits non-zero when a scenario fails that EXPECTED.yml does not
// list, or passes while listed.  A listed scenario must fail only because
// the suite's fixture is missing (an unknown tool, resource or prompt named
// by the suite): its checks' messages are read from the suite's results.
// The server's store and the results are in a temporary directory, removed
// afterwards.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { LIL, SPECS, until } from './lib.mjs';

// What lil answers when the suite calls one of its own fixtures.
const FIXTURE_MISSING = new RegExp([
  'Unknown tool: (test_|json_schema_)',
  'Resource not found: test://',
  'Invalid params: "name" must name a prompt',
].join('|'));

const [expected, scenario] = process.argv.slice(2);
if (!expected) {
  console.error('usage: node conformance.mjs EXPECTED.yml [SCENARIO]');
  process.exit(64);
}
const suite = join(process.env.LIL_NODE_MODULES, '@modelcontextprotocol', 'conformance',
  'dist', 'index.js');
const dir = mkdtempSync(join(tmpdir(), 'lil-mcp-conformance-'));
const server = spawn(LIL, ['mcp', '--dir', join(dir, 'store'), '--allow-run', '--spec-root', SPECS,
  '--http', '127.0.0.1:0', '--no-token'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
let err = '';
server.stderr.setEncoding('utf8');
server.stderr.on('data', (d) => { err += d; });

// The scenarios EXPECTED.yml lists (its `server:` list).
function listed(file) {
  return readFileSync(file, 'utf8').split('\n').map((l) => /^\s*-\s*([\w-]+)\s*$/.exec(l)?.[1])
    .filter(Boolean);
}

// Every failed check of a listed scenario says that a fixture is missing;
// print the checks that are neither successes nor such failures.
function fixturesOnly(file, results) {
  const want = new Set(listed(file));
  let ok = true;
  for (const d of readdirSync(results)) {
    const name = /^server-(.*)-\d{4}-\d\d-\d\dT/.exec(d)?.[1];
    if (!name) continue;
    for (const c of JSON.parse(readFileSync(join(results, d, 'checks.json'), 'utf8'))) {
      if (c.status === 'SUCCESS' || c.status === 'INFO') continue;
      const msg = c.errorMessage ?? JSON.stringify(c.details ?? {});
      if (c.status === 'FAILURE' && want.has(name) && FIXTURE_MISSING.test(msg)) continue;
      console.log(`${c.status}: ${name}: ${c.id}: ${msg}`);
      if (c.status === 'FAILURE') ok = false;
    }
  }
  if (!ok) {
    console.log('failed: a scenario not listed, or listed but failing for another reason than' +
      ' its missing fixture');
  }
  return ok;
}

let rc = 1;
try {
  const url = await until('lil mcp to print its URL', () => {
    if (server.exitCode !== null) throw new Error(`lil mcp exited ${server.exitCode}: ${err}`);
    return /^lil mcp: listening on (http:\/\/\S+)$/m.exec(err)?.[1];
  }, 10000, 20);
  const results = join(dir, 'results');
  const args = [suite, 'server', '--url', url, '--expected-failures', expected, '-o', results];
  if (scenario) args.push('--scenario', scenario);
  console.log(`conformance server --url ${url} --expected-failures ${expected}` +
    (scenario ? ` --scenario ${scenario}` : ''));
  const child = spawn(process.execPath, args, { cwd: dir, stdio: 'inherit' });
  rc = await new Promise((resolve) => child.on('exit', (code, sig) => resolve(sig ? 1 : code)));
  if (server.exitCode !== null) {
    console.error(`lil mcp died during the suite (exit ${server.exitCode})`);
    rc = 1;
  }
  if (!fixturesOnly(expected, results)) rc = 1;
} catch (e) {
  console.error(e.message);
} finally {
  server.kill('SIGTERM');
  const gone = await until('lil mcp to exit on SIGTERM', () => server.exitCode !== null ||
    server.signalCode !== null, 5000).catch(() => false);
  if (!gone) {
    server.kill('SIGKILL');
    console.error('lil mcp did not exit within 5 s of SIGTERM');
    rc = 1;
  } else if (server.exitCode !== 0) {
    console.error(`lil mcp exited ${server.exitCode ?? server.signalCode} on SIGTERM (want 0)`);
    rc = 1;
  }
  if (rc !== 0) console.error(`--- lil mcp stderr ---\n${err.slice(-4000)}`);
  rmSync(dir, { recursive: true, force: true });
}
process.exit(rc);

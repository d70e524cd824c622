// screenshots.mjs -- the pictures of docs/serve.md: a demo store (loop runs
// completed, paused, stopped and of several iterations, program runs
// completed, failed and uncertain), `lil serve` on it, headless Chromium,
// and one picture of each page: docs/img/serve-login.png, serve-runs.png,
// serve-run.png, serve-approve.png, serve-lab.png.
//
//   tests/serve/node/run.sh screenshots.mjs [OUT]     (OUT: docs/img)
//
// The binaries default to the ci preset's build (build/ci/cli/lil,
// build/ci/tests/serve/node/serve_fixture); LIL_BIN and LIL_SERVE_FIXTURE
// name others.
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
process.env.LIL_BIN ??= join(root, 'build/ci/cli/lil');
process.env.LIL_SERVE_FIXTURE ??= join(root, 'build/ci/tests/serve/node/serve_fixture');
process.env.LIL_SERVE_SPECS ??= join(root, 'tests/mcp/specs');
process.env.LIL_SCREENSHOTS ??= mkdtempSync(join(tmpdir(), 'lil-serve-shots-'));
const out = resolve(process.argv[2] ?? join(root, 'docs/img'));
const {
  act, awaitStatus, labKillMidStep, labState, press, route, sandbox, until,
} = await import('./lib.mjs');

// A loop of a few quick iterations, for a timeline with some length.
const COUNT = `loopspec: "0.1"
id: nightly-report
pattern: react
state:
  vars:
    n: {type: int, init: 0}
body:
  - id: fetch
    kind: shell
    cmd: "echo fetched page \${state.n}"
  - id: summarize
    kind: shell
    cmd: "echo summary of page \${state.n}"
    on_done:
      incr: n
terminate:
  signal: state-predicate
  until: "\${state.n >= 5}"
caps:
  max_iterations: 10
  budget: {wallclock: "10m"}
`;

function demoStore(sb) {
  sb.write('nightly.yaml', COUNT);
  sb.fixture('runs', 'invoice', '12');
  sb.runLoop('nightly.yaml', 'nightly-report');
  sb.write('release-a', '');
  sb.runLoop('sleepy.yaml', 'sync-crm', { tag: 'a' });
  sb.lil('stop', 'slow.yaml', '--run-id', 'backfill', '--reason', 'paused for the migration', '--actor', 'ops');
  sb.runLoop('slow.yaml', 'backfill', {}, [5]); // 5: stopped
  sb.fixture('text', 'import-ledger', 'the ledger file is truncated at line 4012');
  sb.fixture('uncertain', 'charge-card', 'POST /v1/charges amount=4200');
  sb.write('go', '');
  sb.runLoop('breakpoint.yaml', 'deploy-review', {}, [3]);
}

const saved = [];
async function keep(sb, page, name, opts = {}) {
  const file = await sb.shot(page, name, opts);
  mkdirSync(out, { recursive: true });
  copyFileSync(file, join(out, `serve-${name}.png`));
  saved.push(join(out, `serve-${name}.png`));
}

await sandbox('docs', async (sb) => {
  demoStore(sb);
  const srv = await sb.serve();
  const login = await sb.newPage('login');
  await login.goto(await srv.nextLoginUrl());
  await login.locator('form#login').waitFor();
  await login.fill('#login-user', 'alice');
  await keep(sb, login, 'login');
  await Promise.all([login.waitForURL((u) => u.pathname === '/'), login.click('#login-submit')]);
  const page = login;
  await until('the runs', async () => (await page.$$('table#runs-table tbody tr[data-run]')).length >= 10);
  await keep(sb, page, 'runs');

  await route(page, '#/runs/nightly-report', 'ol#timeline li.event');
  await awaitStatus(page, '#run-status', 'completed');
  await page.locator('#chart svg').waitFor();
  await keep(sb, page, 'run');

  await route(page, '#/runs/deploy-review', 'ol#timeline li.event[data-type="pause"]');
  await awaitStatus(page, '#run-status', 'paused');
  await page.click('#action-approve');
  await page.locator('dialog#action-dialog').waitFor({ state: 'visible' });
  await page.fill('textarea#action-reason', 'reviewed the diff: safe to deploy');
  await keep(sb, page, 'approve', { fullPage: false }); // a modal dims the window only
  await page.click('#action-cancel');
  await act(page, '#action-approve', 'reviewed the diff: safe to deploy');
  await awaitStatus(page, '#run-status', 'completed', 60000);

  await page.click('#nav-lab');
  await page.locator('#lab-start').waitFor();
  await press(page, '#lab-start', 'crash lab');
  await labKillMidStep(page);
  await labState(page, 'killed');
  await press(page, '#lab-resume', 'crash lab');
  await labState(page, 'uncertain', 60000);
  await press(page, '#lab-recover', 'crash lab: retry the interrupted step');
  await labState(page, 'completed', 120000);
  await keep(sb, page, 'lab');
});
console.log(saved.join('\n'));

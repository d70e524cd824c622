// lib.mjs -- what the browser tests of `lil serve` share: a sandbox (a
// temporary directory with the test specs, a file store or a schema of the
// tests' PostgreSQL server), runs made there with the `lil` binary and the
// fixture program, `lil serve` started on a free port, headless Chromium
// (Debian's, driven by playwright-core) logged in through the login page,
// screenshots, and at the end every problem seen: a console error, an
// uncaught exception or a Content-Security-Policy violation on a page of the
// server, a server that does not exit 0 at SIGTERM or printed a sanitizer's
// report.
//
// The environment (CMake sets it):
//   LIL_BIN             the lil executable
//   LIL_SERVE_FIXTURE   serve_fixture (program runs made through lil.h)
//   LIL_SERVE_SPECS     the specs copied into each sandbox (tests/mcp/specs;
//                       those of specs/ beside this file too)
//   LIL_SCREENSHOTS     where screenshots go (made if missing)
//   LIL_NODE_MODULES    the node_modules of scripts/nodeenv.sh (run.sh sets it)
//   LIL_TEST_PG         a PostgreSQL server's URI: each sandbox of a test run
//                       with LIL_SERVE_STORE=pg gets a schema of its own there
//   LIL_CHROMIUM        the browser (default /usr/bin/chromium)
//   LIL_KEEP=1          keep the sandboxes (their paths are printed)
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const LIL = process.env.LIL_BIN;
export const FIXTURE = process.env.LIL_SERVE_FIXTURE;
export const SPECS = process.env.LIL_SERVE_SPECS;
export const SHOTS = process.env.LIL_SCREENSHOTS;
export const PG = process.env.LIL_TEST_PG;
export const STORE_KIND = process.env.LIL_SERVE_STORE ?? 'file';
const CHROMIUM = process.env.LIL_CHROMIUM ?? '/usr/bin/chromium';
for (const [k, v] of Object.entries({ LIL_BIN: LIL, LIL_SERVE_FIXTURE: FIXTURE,
  LIL_SERVE_SPECS: SPECS, LIL_SCREENSHOTS: SHOTS, LIL_NODE_MODULES: process.env.LIL_NODE_MODULES })) {
  if (!v) throw new Error(`${k} must be set (tests/serve/node/run.sh and CMake set them)`);
}
if (STORE_KIND === 'pg' && !PG) throw new Error('LIL_SERVE_STORE=pg needs LIL_TEST_PG');

// playwright-core from the env of scripts/nodeenv.sh (a CommonJS package).
const requireModule = createRequire(join(process.env.LIL_NODE_MODULES, 'x.js'));
export const { chromium } = requireModule('playwright-core');

// What every XSS probe says: markup that runs script if it is ever parsed.
export const XSS = '<img src=x onerror=window.__xss=1><script>window.__xss=1</script>';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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

// SIGKILL what still runs in dir (loops the server or the test started run
// their shell steps there, in process groups of their own).
function killRunningIn(dir) {
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p) || Number(p) === process.pid) continue;
    let cwd;
    try { cwd = readlinkSync(`/proc/${p}/cwd`); } catch { continue; }
    if (cwd === dir || cwd.startsWith(`${dir}/`)) {
      try { process.kill(Number(p), 'SIGKILL'); } catch { /* gone */ }
    }
  }
}

// The text of a file of dir, '' when missing.
export function fileText(path) {
  try { return readFileSync(path, 'utf8'); } catch { return ''; }
}

// One `lil serve`: started with the sandbox's store, its URLs read from
// stderr.  login() hands out the login URLs in the order they are printed.
class Server {
  constructor(sb, flags) {
    this.sb = sb;
    this.flags = flags;
    this.err = '';
    this.used = 0; // login URLs handed out
  }

  async start() {
    const args = ['serve', '--listen', '127.0.0.1:0', '--dir', this.sb.store, ...this.flags];
    this.proc = spawn(LIL, args, { cwd: this.sb.dir, env: this.sb.env, stdio: ['ignore', 'ignore', 'pipe'] });
    this.proc.stderr.setEncoding('utf8');
    this.proc.stderr.on('data', (d) => { this.err += d; });
    this.ended = new Promise((resolve) => this.proc.once('exit', (code, sig) => resolve([code, sig])));
    const url = await until('`lil serve` to print where it listens', () => {
      if (this.proc.exitCode !== null) {
        throw new Error(`lil serve ${args.join(' ')} exited ${this.proc.exitCode}: ${this.err}`);
      }
      return /^lil serve: listening on (http:\/\/\S+\/)$/m.exec(this.err)?.[1];
    }, 15000, 20);
    this.url = url;
    this.origin = new URL(url).origin;
    return this;
  }

  // The login URLs printed so far: the first at start, one after each login.
  loginUrls() {
    return [...this.err.matchAll(/^lil serve: (?:log in at|next login at) (http:\/\/\S+)$/mg)]
      .map((m) => m[1]);
  }

  // The next login URL not handed out yet (waits for the server to print it).
  async nextLoginUrl() {
    const urls = await until('`lil serve` to print a login URL', () => {
      const u = this.loginUrls();
      return u.length > this.used ? u : null;
    }, 10000, 20);
    return urls[this.used++];
  }

  stderr() {
    return this.err;
  }

  // SIGTERM; what went wrong with the end (it must be exit 0 within 5 s).
  async stop() {
    const problems = [];
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGTERM');
    if (!(await exited(this.proc, 5000))) {
      this.proc.kill('SIGKILL');
      problems.push(`lil serve ${this.origin} did not exit within 5 s of SIGTERM`);
    } else {
      const [code, sig] = await this.ended;
      if (code !== 0) problems.push(`lil serve ${this.origin} ended with ${sig ?? `exit ${code}`} at SIGTERM, not 0`);
    }
    const report = /^.*(Sanitizer|runtime error:).*$/m.exec(this.err);
    if (report) problems.push(`lil serve's stderr has a sanitizer's report: ${report[0]}`);
    return problems;
  }
}

// A test's world: directory, store, servers, browser, pages; close() ends
// them all and answers the problems seen.
class Sandbox {
  constructor(name) {
    this.name = name;
    this.dir = mkdtempSync(join(tmpdir(), 'lil-serve-browser-'));
    this.env = { ...process.env };
    delete this.env.LIL_DIR;
    cpSync(SPECS, this.dir, { recursive: true });
    cpSync(new URL('./specs/', import.meta.url), this.dir, { recursive: true });
    this.servers = [];
    this.children = [];
    this.problems = new Map(); // what went wrong -> how many times
    this.pages = [];
    this.allowed = []; // console errors that the test expects: RegExps
    this.shots = [];
    this.browser = null;
    this.phase = 'setting up';
  }

  // Say what the test does now: a test that hangs is told where.
  at(phase) {
    this.phase = phase;
  }

  async open() {
    if (STORE_KIND === 'pg') {
      const schema = `serve_${randomBytes(6).toString('hex')}`;
      this.store = `${PG}${PG.includes('?') ? '&' : '?'}schema=${schema}`;
      this.lil('db', 'init');
    } else {
      this.store = join(this.dir, 'store');
    }
    return this;
  }

  path(name) {
    return join(this.dir, name);
  }

  write(name, text) {
    writeFileSync(this.path(name), text);
  }

  read(name) {
    return fileText(this.path(name));
  }

  // `lil --dir STORE ARGS...` in the sandbox; must exit with one of codes.
  lil(...args) {
    return this.lilExpect([0], ...args);
  }

  lilExpect(codes, ...args) {
    const r = spawnSync(LIL, ['--dir', this.store, ...args],
      { cwd: this.dir, env: this.env, encoding: 'utf8', timeout: 120000 });
    if (!codes.includes(r.status)) {
      throw new Error(`lil ${args.join(' ')} exited ${r.status ?? r.signal}, not ${codes.join('|')}: ` +
        `${r.stdout}${r.stderr}`);
    }
    return r;
  }

  // serve_fixture STORE ARGS... (program runs).
  fixture(...args) {
    const r = spawnSync(FIXTURE, [this.store, ...args], { cwd: this.dir, env: this.env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`serve_fixture ${args.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr}`);
  }

  // `lil run SPEC --run-id ID [--input K=V]...` in the background, in a
  // process group of its own (kill(-pid) ends it and its steps).
  startLoop(spec, runId, inputs = {}) {
    const args = ['--dir', this.store, 'run', spec, '--run-id', runId, '--progress', 'off'];
    for (const [k, v] of Object.entries(inputs)) args.push('--input', `${k}=${v}`);
    const proc = spawn(LIL, args, { cwd: this.dir, env: this.env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    proc.err = '';
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (d) => { proc.err += d; });
    proc.done = new Promise((resolve) => proc.once('exit', (code, sig) => resolve([code, sig])));
    this.children.push(proc);
    return proc;
  }

  // `lil run` to its end (a loop that completes or pauses): the exit code.
  runLoop(spec, runId, inputs = {}, codes = [0]) {
    const args = ['run', spec, '--run-id', runId, '--progress', 'off'];
    for (const [k, v] of Object.entries(inputs)) args.push('--input', `${k}=${v}`);
    return this.lilExpect(codes, ...args).status;
  }

  async serve(flags = []) {
    const srv = await new Server(this, flags).start();
    this.servers.push(srv);
    return srv;
  }

  async launch() {
    if (!this.browser) {
      this.browser = await chromium.launch({
        executablePath: CHROMIUM, args: ['--headless', '--no-sandbox'], headless: true,
      });
    }
    return this.browser;
  }

  // Console errors matching re are expected from now on (e.g. the browser's
  // own line for a refused request the test makes on purpose).
  allowErrors(re) {
    this.allowed.push(re);
  }

  // Watch a page: console errors, uncaught exceptions, CSP violations are
  // problems unless allowed.  ignore: a page that is not the server's.
  watch(page, label, ignore = false) {
    const note = (what) => {
      if (ignore || this.allowed.some((re) => re.test(what))) return;
      const key = `${label}: ${what} (at ${page.url()})`;
      this.problems.set(key, (this.problems.get(key) ?? 0) + 1);
    };
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      const at = m.location()?.url; // for a failed request: its URL
      note(`console error: ${m.text()}${at && !at.endsWith('.js') ? ` [${at}]` : ''}`);
    });
    page.on('pageerror', (e) => note(`uncaught exception: ${e.message}`));
    if (!ignore) this.pages.push([label, page]);
    return page;
  }

  // A browser context of its own (its own cookies) with a page watched.
  async newPage(label = 'page') {
    const browser = await this.launch();
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    // A CSP violation is a console error already; say it in our words too,
    // with what was blocked.
    await context.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'}`);
      });
    });
    const page = await context.newPage();
    return this.watch(page, label);
  }

  // Log in to srv through its login page as user (when the server was
  // started with --user, the login URL logs in at once): a page on the runs
  // page with #user showing the user.
  async login(srv, user = 'alice', page = null) {
    page = page ?? await this.newPage(`${user}@${srv.origin}`);
    const url = await srv.nextLoginUrl();
    await page.goto(url);
    if (!srv.flags.includes('--user')) {
      await page.locator('form#login').waitFor();
      await page.fill('#login-user', user);
      await Promise.all([
        page.waitForURL((u) => u.pathname === '/', { timeout: 15000 }),
        page.click('#login-submit'),
      ]);
    } else {
      await page.waitForURL((u) => u.pathname === '/', { timeout: 15000 });
    }
    const shown = srv.flags.includes('--user') ? srv.flags[srv.flags.indexOf('--user') + 1] : user;
    await until(`#user to say ${shown}`, async () => (await page.textContent('#user').catch(() => null))?.trim() === shown);
    return page;
  }

  // Screenshot of page as NAME.png in LIL_SCREENSHOTS, prefixed with the
  // test's name: the whole page, or (fullPage false) what the window shows.  The page is looked at too: two elements of one id (the
  // DOM contract's ids must each name one element) are a problem.
  async shot(page, name, { fullPage = true } = {}) {
    const twice = await page.evaluate(() => {
      const seen = new Map();
      for (const e of document.querySelectorAll('[id]')) seen.set(e.id, (seen.get(e.id) ?? 0) + 1);
      return [...seen].filter(([, n]) => n > 1).map(([id, n]) => `#${id} (${n} elements)`);
    }).catch(() => []);
    for (const t of twice) {
      const key = `${name}: one id on several elements: ${t} (at ${page.url()})`;
      this.problems.set(key, (this.problems.get(key) ?? 0) + 1);
    }
    mkdirSync(SHOTS, { recursive: true });
    const file = join(SHOTS, `${this.name}-${name}.png`);
    await page.screenshot({ path: file, fullPage });
    this.shots.push(file);
    return file;
  }

  // A screenshot of every page still open (after a failure).
  async shotAll(name) {
    let i = 0;
    for (const [, page] of this.pages) {
      if (!page.isClosed()) await this.shot(page, `${name}-${++i}`).catch(() => {});
    }
  }

  // End everything; throw with every problem seen.
  async close() {
    const problems = [...this.problems].map(([p, n]) => (n > 1 ? `${p} (${n} times)` : p));
    if (this.browser) await this.browser.close().catch(() => {});
    for (const srv of this.servers) problems.push(...await srv.stop());
    for (const c of this.children) {
      try { process.kill(-c.pid, 'SIGKILL'); } catch { /* gone */ }
    }
    killRunningIn(this.dir);
    if (process.env.LIL_KEEP === '1') {
      console.error(`kept ${this.dir}`);
    } else {
      rmSync(this.dir, { recursive: true, force: true });
    }
    return problems;
  }
}

// How long a test may take before it is ended, cleaned up and failed
// (below node's own test timeout, so that the cleanup still runs).
export const DEADLINE_MS = Number(process.env.LIL_SERVE_DEADLINE_MS ?? 300000);

// Run fn(sandbox) and clean up; a test fails with fn's error or, when fn
// passed, with the problems seen (console errors, a server's bad end).  A
// test still running after DEADLINE_MS fails naming the phase it was in
// (sb.at); closing the browser then ends whatever it awaited.
export async function sandbox(name, fn) {
  const sb = new Sandbox(name);
  let error = null;
  let timer;
  const deadline = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(
      `the test did not end within ${DEADLINE_MS / 1000} s: it was ${sb.phase}`)), DEADLINE_MS);
  });
  try {
    await Promise.race([(async () => {
      await sb.open();
      await fn(sb);
    })(), deadline]);
  } catch (e) {
    error = e;
    await sb.shotAll('failure');
  }
  clearTimeout(timer);
  const problems = await sb.close();
  if (error) {
    if (problems.length) error.message += `\nalso:\n  ${problems.join('\n  ')}`;
    for (const srv of sb.servers) {
      console.error(`--- lil serve ${srv.origin} stderr (last 3000 bytes):\n${srv.stderr().slice(-3000)}`);
    }
    throw error;
  }
  if (problems.length) throw new Error(`problems:\n  ${problems.join('\n  ')}`);
}

// ---- what pages show -------------------------------------------------------

// The status word of an element that is, or holds, a [data-status].
export async function statusOf(page, selector) {
  return page.evaluate((sel) => {
    const el = document.querySelector(sel);
    if (!el) return null;
    const s = el.matches('[data-status]') ? el : el.querySelector('[data-status]');
    return s ? s.getAttribute('data-status') : null;
  }, selector);
}

// Wait until the element of selector shows status.
export async function awaitStatus(page, selector, status, ms = 30000) {
  return until(`${selector} to show ${status}`, async () => {
    const s = await statusOf(page, selector);
    return s === status ? s : false;
  }, ms, 100).catch(async (e) => {
    e.message += ` (it shows ${await statusOf(page, selector)})`;
    throw e;
  });
}

// Mark the page's window: a reload or a navigation away loses the mark.
export async function markPage(page) {
  const mark = randomBytes(8).toString('hex');
  await page.evaluate((m) => { window.__lilMark = m; }, mark);
  return mark;
}

// The page was not reloaded since markPage: the mark is there and one
// navigation entry exists (the first load).
export async function samePage(page, mark) {
  return page.evaluate((m) => ({
    mark: window.__lilMark === m,
    navigations: performance.getEntriesByType('navigation').length,
  }), mark);
}

// The rows of the runs table: [{run, status, kind}].
export async function runRows(page) {
  return page.$$eval('table#runs-table > tbody > tr[data-run]', (trs) => trs.map((tr) => {
    const st = tr.querySelector('td.status [data-status]') ?? tr.querySelector('td.status');
    return {
      run: tr.getAttribute('data-run'),
      status: st ? st.getAttribute('data-status') : null,
      kind: tr.querySelector('td.kind')?.textContent.trim() ?? null,
      queue: tr.querySelector('td.queue')?.textContent.trim() ?? null,
    };
  }));
}

// GET path of srv with the page's session cookie (not through the page: no
// console line); the parsed JSON and the status.
export async function apiGet(page, srv, path) {
  const res = await page.request.get(srv.origin + path, { failOnStatusCode: false });
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  return { status: res.status(), body };
}

// The session's CSRF token (GET /api/session).
export async function csrfOf(page, srv) {
  const s = await apiGet(page, srv, '/api/session');
  if (s.status !== 200) throw new Error(`GET /api/session: ${s.status} ${JSON.stringify(s.body)}`);
  return s.body.csrf;
}

// A run's facts through the API, asserting 200.
export async function facts(page, srv, run) {
  const r = await apiGet(page, srv, `/api/runs/${encodeURIComponent(run)}`);
  if (r.status !== 200) throw new Error(`GET /api/runs/${run}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

// Every event of a run through the API.
export async function events(page, srv, run) {
  const all = [];
  let from = 0;
  for (;;) {
    const r = await apiGet(page, srv, `/api/runs/${encodeURIComponent(run)}/events?from=${from}&limit=1000`);
    if (r.status !== 200) throw new Error(`GET events of ${run}: ${r.status} ${JSON.stringify(r.body)}`);
    all.push(...r.body.events);
    if (!r.body.more || r.body.next === undefined || r.body.next <= from) return all;
    from = r.body.next;
  }
}

// Go to a route of the page (#/..., no reload) and wait for sel.
export async function route(page, hash, sel) {
  await page.evaluate((h) => { window.location.hash = h; }, hash);
  if (sel) await page.locator(sel).first().waitFor({ timeout: 15000 });
}

// Open the action dialog of button, give reason (and a recovery's how and
// assume-done result), confirm; the dialog closes.
export async function act(page, button, reason, { how = null, result = null } = {}) {
  await page.click(button);
  const dialog = page.locator('dialog#action-dialog');
  await dialog.waitFor({ state: 'visible', timeout: 10000 });
  if (how) await page.selectOption('select#recover-how', how);
  if (result !== null) await page.fill('textarea#recover-result', result);
  await page.fill('textarea#action-reason', reason);
  await page.click('#action-confirm');
  await dialog.waitFor({ state: 'hidden', timeout: 15000 });
}

// ---- the crash lab ---------------------------------------------------------

// The lab's steps table: [{step, started, done}].
export async function labSteps(page) {
  return page.$$eval('table#lab-steps > tbody > tr[data-step]', (trs) => trs.map((tr) => ({
    step: tr.getAttribute('data-step'),
    started: Number(tr.querySelector('td.started')?.textContent.trim() ?? NaN),
    done: Number(tr.querySelector('td.done')?.textContent.trim() ?? NaN),
  })));
}

// The trimmed text of the first element of sel, or null.
export const text = async (page, sel) => (await page.textContent(sel).catch(() => null))?.trim() ?? null;

export async function labState(page, want, ms = 30000) {
  return until(`#lab-state to say ${want}`, async () => {
    const s = await text(page, '#lab-state');
    return s === want ? s : false;
  }, ms).catch(async (e) => {
    e.message += ` (it says ${await text(page, '#lab-state')}; log: ${await text(page, 'ol#lab-log')})`;
    throw e;
  });
}

// Click a lab button; when it asks for a reason in the action dialog, give one.
export async function press(page, button, reason) {
  await page.click(button);
  const dialog = page.locator('dialog#action-dialog');
  if (await dialog.waitFor({ state: 'visible', timeout: 1000 }).then(() => true, () => false)) {
    await page.fill('textarea#action-reason', reason);
    await page.click('#action-confirm');
    await dialog.waitFor({ state: 'hidden' });
  }
}

// With the lab's loop running: wait until a step is done, then press Kill
// just after the next step began (a step takes about a second): a completed
// step behind, one in flight.  The step killed: {step, started, done}.
export async function labKillMidStep(page) {
  const before = await until('a first step done', async () => {
    const st = await labSteps(page);
    return st.some((s) => s.done >= 1) ? st : false;
  }, 60000, 50);
  const startedBefore = before.filter((s) => s.started > 0).length;
  const victim = await until('the next step to start', async () => {
    const st = await labSteps(page);
    const running = st.filter((s) => s.started > s.done);
    return st.filter((s) => s.started > 0).length > startedBefore && running.length === 1 ? running[0] : false;
  }, 30000, 30);
  await press(page, '#lab-kill', 'crash lab');
  return victim;
}

export { existsSync, join };

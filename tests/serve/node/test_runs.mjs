// test_runs.mjs -- the runs page lists every run of the store (a file store,
// or a schema of PostgreSQL with LIL_SERVE_STORE=pg): loop runs made by
// `lil run` (completed, paused, failed), program runs made through lil.h
// (more than a page of them), a queued run on PostgreSQL.  The filters by
// status, kind and text and the paging show the right rows; a run's link
// opens its page; a run made while the page is open appears without a
// reload.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  STORE_KIND, apiGet, awaitStatus, markPage, route, runRows, samePage, sandbox, until,
} from './lib.mjs';

const PROGRAM_RUNS = 55;

// The loop runs: sleepy with its release already there completes at once;
// the breakpoint with its go file there pauses at once.
function makeRuns(sb) {
  sb.write('release-a', '');
  sb.runLoop('sleepy.yaml', 'loop-done', { tag: 'a' });
  sb.write('go', '');
  sb.runLoop('breakpoint.yaml', 'loop-paused', {}, [3]); // 3: paused
  sb.fixture('runs', 'page', String(PROGRAM_RUNS));
  sb.fixture('text', 'program-failed', 'the disk was full');
  if (STORE_KIND === 'pg') sb.lilExpect([0, 4], 'submit', 'slow.yaml', '--run-id', 'loop-queued');
}

// Wait until the table shows n rows (and, when given, the total text).
async function rowsShown(page, n, total) {
  let seen = [];
  return until(`the runs table to show ${n} rows` + (total ? ` of ${total}` : ''), async () => {
    const rows = await runRows(page);
    const t = (await page.textContent('#runs-total').catch(() => ''))?.trim();
    seen = rows.map((r) => `${r.run}:${r.kind}:${r.status}`);
    if (rows.length !== n) return false;
    if (total !== undefined && !new RegExp(`\\b${total}\\b`).test(t ?? '')) return false;
    return rows;
  }, 15000).catch((e) => {
    e.message += ` (it shows ${seen.length} rows: ${seen.slice(0, 12).join(' ')})`;
    throw e;
  });
}

test(`runs page on a ${STORE_KIND} store: rows, filters, paging, a link, live rows`, { timeout: 500000 }, async () => {
  await sandbox(`runs-${STORE_KIND}`, async (sb) => {
    makeRuns(sb);
    const total = PROGRAM_RUNS + 3 + (STORE_KIND === 'pg' ? 1 : 0);
    const srv = await sb.serve();
    const page = await sb.login(srv, 'alice');
    const mark = await markPage(page);

    // The first page: 50 rows of the total, newest activity first.
    const first = await rowsShown(page, 50, total);
    await sb.shot(page, 'runs');
    const pageText = (await page.textContent('#runs-page')).trim();
    assert.match(pageText, new RegExp(`^1\\s*[–-]\\s*50 of ${total}$`), `#runs-page: ${pageText}`);
    // The API's counts agree with what the page shows.
    const api = await apiGet(page, srv, '/api/runs?limit=500');
    assert.equal(api.status, 200);
    assert.equal(api.body.total, total);
    assert.deepEqual(first.map((r) => r.run), api.body.runs.slice(0, 50).map((r) => r.run),
      'the page shows the rows in the API\'s order');
    const byId = Object.fromEntries(api.body.runs.map((r) => [r.run, r]));
    for (const r of first) {
      assert.equal(r.status, byId[r.run].status, `row ${r.run}: its status`);
      assert.equal(r.kind, byId[r.run].kind, `row ${r.run}: its kind`);
    }
    assert.equal(byId['loop-done'].status, 'completed');
    assert.equal(byId['loop-paused'].status, 'paused');
    assert.equal(byId['program-failed'].status, 'failed');

    // Paging: next shows the rest, prev the first page again.
    await page.click('#runs-next');
    const second = await rowsShown(page, total - 50);
    assert.match((await page.textContent('#runs-page')).trim(),
      new RegExp(`^51\\s*[–-]\\s*${total} of ${total}$`));
    assert.deepEqual(second.map((r) => r.run), api.body.runs.slice(50).map((r) => r.run));
    await page.click('#runs-prev');
    await rowsShown(page, 50);

    // Filters: kind, status, text; then none.
    await page.selectOption('#runs-filter-kind', 'loop');
    // (A queued run that no worker started has no loop record yet: it is
    // not a loop run until then, docs/api.md.)
    const loops = await rowsShown(page, 2);
    assert.deepEqual(loops.map((r) => r.run).sort(), ['loop-done', 'loop-paused']);
    await page.selectOption('#runs-filter-kind', '');
    await page.selectOption('#runs-filter-status', 'paused');
    const paused = await rowsShown(page, 1);
    assert.equal(paused[0].run, 'loop-paused');
    assert.equal(paused[0].status, 'paused');
    await page.selectOption('#runs-filter-status', 'failed');
    assert.equal((await rowsShown(page, 1))[0].run, 'program-failed');
    await page.selectOption('#runs-filter-status', '');
    await page.fill('#runs-filter-q', 'page-001');
    const found = await rowsShown(page, 10, 10); // page-0010 .. page-0019
    assert.deepEqual(found.map((r) => r.run).sort(),
      Array.from({ length: 10 }, (_, i) => `page-001${i}`));
    await sb.shot(page, 'runs-filtered');
    await page.fill('#runs-filter-q', '');
    await rowsShown(page, 50, total);

    if (STORE_KIND === 'pg') {
      // The queued run shows its queue state.
      await page.fill('#runs-filter-q', 'loop-queued');
      const q = await rowsShown(page, 1);
      assert.match(q[0].queue ?? '', /queued/, `the queue column of a queued run: ${q[0].queue}`);
      await page.fill('#runs-filter-q', '');
      await rowsShown(page, 50, total);
    }

    // A run made now appears without a reload.
    sb.fixture('text', 'arrived-later', 'made while the page was open');
    await until('the new run to appear', async () => {
      const t = (await page.textContent('#runs-total'))?.trim() ?? '';
      return new RegExp(`\\b${total + 1}\\b`).test(t) &&
        (await runRows(page)).some((r) => r.run === 'arrived-later');
    }, 10000);

    // A run's link opens its page.
    await page.fill('#runs-filter-q', 'loop-paused');
    await rowsShown(page, 1);
    await page.click('tr[data-run="loop-paused"] td.run a');
    await until('the run page', async () => (await page.textContent('#run-id').catch(() => ''))?.trim() === 'loop-paused');
    assert.equal(new URL(page.url()).hash, '#/runs/loop-paused');
    await awaitStatus(page, '#run-status', 'paused');
    await page.locator('ol#timeline li.event[data-type="pause"]').first().waitFor({ timeout: 10000 });
    await sb.shot(page, 'run');

    // Back to the runs page through the nav link.
    await page.click('#nav-runs');
    await page.locator('table#runs-table').waitFor();
    await route(page, '#/', 'table#runs-table tbody tr[data-run]');
    const same = await samePage(page, mark);
    assert.ok(same.mark && same.navigations === 1, `no reload happened: ${JSON.stringify(same)}`);
  });
});

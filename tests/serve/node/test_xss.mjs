// test_xss.mjs -- what journals and specs say is shown as text, never run as
// markup.  Markup that runs script when parsed (an <img onerror> and a
// <script>, both setting window.__xss) is put in a program run's step names,
// its output, its error and its failure reason, in an uncertain effect's
// name, in a loop run's shell output, its breakpoint's question and its
// spec.  On every page that shows them: the literal text is visible,
// window.__xss stays undefined, no <img src=x> or script of it exists, and
// no console error or CSP violation happened (the sandbox checks).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { XSS, awaitStatus, route, runRows, sandbox, until } from './lib.mjs';

// Nothing of the probe ran or became an element.
async function nothingRan(page, where) {
  const seen = await page.evaluate(() => ({
    xss: window.__xss,
    imgs: [...document.querySelectorAll('img')].filter((i) => i.getAttribute('src') === 'x').length,
    scripts: [...document.querySelectorAll('script')].filter((s) => s.textContent.includes('__xss')).length,
    handlers: [...document.querySelectorAll('[onerror]')].length,
  }));
  assert.deepEqual(seen, { xss: undefined, imgs: 0, scripts: 0, handlers: 0 }, `${where}: the probe ran or became markup`);
}

// The text of the page (what a reader sees, and what textContent holds).
async function pageText(page) {
  return page.evaluate(() => `${document.body.innerText}\n${document.body.textContent}`);
}

async function expectVisible(page, what, where) {
  await until(`${where} to show ${what}`, async () => (await pageText(page)).includes(what), 15000)
    .catch((e) => { e.message += `: not found in the page's text`; throw e; });
}

test('markup in step names, outputs, errors and a spec renders as text', { timeout: 500000 }, async () => {
  await sandbox('xss', async (sb) => {
    sb.fixture('text', 'xss-program', XSS);
    sb.fixture('uncertain', 'xss-effect', XSS);
    sb.runLoop('xss.yaml', 'xss-loop', {}, [3]); // 3: paused at the breakpoint
    const srv = await sb.serve();
    const page = await sb.login(srv, 'mallory');

    // The runs page: the three runs, nothing ran.
    await until('the three runs', async () => (await runRows(page)).length === 3, 15000);
    await nothingRan(page, 'runs page');

    // A program run: step names, the output, the error and the reason.
    await route(page, '#/runs/xss-program', 'ol#timeline li.event');
    await awaitStatus(page, '#run-status', 'failed');
    await expectVisible(page, XSS, 'the program run');
    const previews = await page.$$eval('ol#timeline .preview', (els) => els.map((e) => e.textContent).join('\n'));
    assert.ok(previews.includes('<img src=x onerror=window.__xss=1>') && previews.includes('<script>window.__xss=1'),
      `the output's preview shows the markup as text: ${previews.slice(0, 500)}`);
    await nothingRan(page, 'program run');
    await sb.shot(page, 'program');

    // An uncertain effect named with it.
    await route(page, '#/runs/xss-effect', 'ol#timeline li.event');
    await awaitStatus(page, '#run-status', 'uncertain');
    const unc = page.locator('ol#timeline li.event.uncertain');
    await unc.first().waitFor({ timeout: 10000 });
    assert.ok((await unc.first().textContent()).includes(XSS), 'the uncertain effect shows its name as text');
    await nothingRan(page, 'uncertain run');

    // A loop run: the shell step's output and command, the breakpoint's
    // question (timeline and approval dialog), the spec.
    await route(page, '#/runs/xss-loop', 'ol#timeline li.event');
    await awaitStatus(page, '#run-status', 'paused');
    const pause = page.locator('ol#timeline li.event[data-type="pause"]');
    await pause.first().waitFor();
    assert.ok((await pause.first().textContent()).includes(XSS), 'the pause shows its question as text');
    const effects = await page.$$eval('ol#timeline li.event[data-type="effect"]', (els) => els.map((e) => e.textContent).join('\n'));
    assert.ok(effects.includes(XSS), `the shell step's output and command show as text: ${effects.slice(0, 500)}`);
    await until('the spec', async () => ((await page.textContent('pre#spec-view').catch(() => '')) ?? '').includes('loopspec'), 15000);
    assert.ok((await page.textContent('pre#spec-view')).includes(`# Markup where a page might parse it: ${XSS}`),
      'the spec shows its comment as text');
    await nothingRan(page, 'loop run');
    await sb.shot(page, 'loop');
    await page.click('#action-approve');
    await page.locator('dialog#action-dialog').waitFor({ state: 'visible' });
    assert.ok((await page.textContent('#pending-action')).includes(XSS), 'the dialog shows the question as text');
    await nothingRan(page, 'approval dialog');
    await sb.shot(page, 'dialog');
    await page.click('#action-cancel');
    await page.locator('dialog#action-dialog').waitFor({ state: 'hidden' });

    // The runs page again.
    await route(page, '#/', 'table#runs-table tbody tr[data-run]');
    await nothingRan(page, 'runs page, again');
  });
});

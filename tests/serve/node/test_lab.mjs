// test_lab.mjs -- the crash lab through its page: start the demo loop, kill
// it (SIGKILL) while a step runs, resume it (the killed step is uncertain),
// recover it (retry): it completes, and the demo's own side file counts no
// completed step that ran twice (#lab-duplicates 0); every step done once;
// the run's page shows the recovery with the actor web:<user>.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  awaitStatus, labKillMidStep, labState, labSteps, markPage, press, route, samePage, sandbox, text, until,
} from './lib.mjs';

test('crash lab: start, kill mid-step, resume, recover: completed, no duplicate', { timeout: 500000 }, async () => {
  await sandbox('lab', async (sb) => {
    const srv = await sb.serve();
    const page = await sb.login(srv, 'alice');
    const mark = await markPage(page);
    await page.click('#nav-lab');
    await page.locator('#lab-start').waitFor();
    assert.equal(new URL(page.url()).hash, '#/lab');
    await labState(page, 'idle');
    await sb.shot(page, 'idle');

    await press(page, '#lab-start', 'crash lab');
    await labState(page, 'running');
    const victim = await labKillMidStep(page);
    await labState(page, 'killed');
    assert.equal(await text(page, '#lab-kills'), '1');
    const afterKill = await labSteps(page);
    const killed = afterKill.find((s) => s.step === victim.step);
    assert.equal(killed.done, 0, `the step killed (${victim.step}) did not finish: ${JSON.stringify(afterKill)}`);
    await sb.shot(page, 'killed');

    await press(page, '#lab-resume', 'crash lab');
    await labState(page, 'uncertain', 60000);
    await sb.shot(page, 'uncertain');
    await press(page, '#lab-recover', 'crash lab: retry the interrupted step');
    await labState(page, 'completed', 120000);
    await sb.shot(page, 'completed');

    assert.equal(await text(page, '#lab-duplicates'), '0', 'no completed step ran twice');
    const steps = await labSteps(page);
    assert.ok(steps.length >= 3, `the demo has steps: ${JSON.stringify(steps)}`);
    for (const s of steps) assert.equal(s.done, 1, `step ${s.step} done once: ${JSON.stringify(steps)}`);
    assert.equal(steps.find((s) => s.step === victim.step).started, 2,
      `the killed step ran again at the retry: ${JSON.stringify(steps)}`);
    const log = await page.$$eval('ol#lab-log > li', (lis) => lis.map((li) => li.textContent));
    assert.ok(log.length >= 4, `the lab's log tells what happened: ${JSON.stringify(log)}`);

    // The run's page: the recovery by web:alice, completed.
    const href = await page.getAttribute('#lab-run', 'href');
    assert.match(href ?? '', /#\/runs\/crash-lab-/, `#lab-run links to the run: ${href}`);
    const run = decodeURIComponent(href.replace(/^.*#\/runs\//, ''));
    await page.click('#lab-run');
    await until('the run page', async () => (await text(page, '#run-id')) === run);
    await awaitStatus(page, '#run-status', 'completed');
    const rec = page.locator('ol#timeline li.event[data-type="recovery"]');
    await rec.first().waitFor({ timeout: 10000 });
    assert.equal((await rec.first().locator('.actor').textContent()).trim(), 'web:alice');
    await sb.shot(page, 'run');
    await route(page, '#/lab', '#lab-state');
    const same = await samePage(page, mark);
    assert.ok(same.mark && same.navigations === 1, `no reload: ${JSON.stringify(same)}`);
  });
});

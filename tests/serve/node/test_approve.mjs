// test_approve.mjs -- a paused loop run (a breakpoint) approved by clicking:
// the dialog shows the pending action and its digest (the pause's, as the
// API gives it), asks a reason, and the run goes on to completed; the page
// shows it without a reload (the window's mark is still there, one
// navigation entry), the timeline shows the approval with the actor
// web:<user> and the reason, and the step after the breakpoint ran once.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  act, awaitStatus, events, facts, markPage, route, samePage, sandbox, until,
} from './lib.mjs';

test('approve a paused run by clicking: completed, shown live', { timeout: 500000 }, async () => {
  await sandbox('approve', async (sb) => {
    sb.write('go', ''); // the first step need not wait
    sb.runLoop('breakpoint.yaml', 'bp', {}, [3]); // 3: paused
    assert.equal(sb.read('side.txt'), 'before\n');
    const srv = await sb.serve();
    const page = await sb.login(srv, 'alice');
    const mark = await markPage(page);

    await route(page, '#/runs/bp', '#run-id');
    await awaitStatus(page, '#run-status', 'paused');
    const pause = await page.locator('ol#timeline li.event[data-type="pause"]').first();
    await pause.waitFor();
    const f = await facts(page, srv, 'bp');
    const pauseEvent = (await events(page, srv, 'bp')).find((e) => e.type === 'pause');
    assert.ok(pauseEvent, 'the run has a pause event');
    assert.match(pauseEvent.digest, /^[0-9a-f]{64}$/);
    assert.equal((await pause.locator('.digest').textContent()).trim(), pauseEvent.digest,
      'the timeline\'s pause shows its digest');

    // The dialog: what would be approved and its digest; cancel first.
    await page.click('#action-approve');
    await page.locator('dialog#action-dialog').waitFor({ state: 'visible' });
    const pending = (await page.textContent('#pending-action')).trim();
    assert.ok(pending.includes(f.paused?.ask ?? 'Go on after 0?'), `#pending-action: ${pending}`);
    assert.ok(pending.includes('ask'), `#pending-action names the step: ${pending}`);
    assert.equal((await page.textContent('#pending-digest')).trim(), pauseEvent.digest);
    await sb.shot(page, 'dialog');
    await page.click('#action-cancel');
    await page.locator('dialog#action-dialog').waitFor({ state: 'hidden' });
    await awaitStatus(page, '#run-status', 'paused');
    assert.equal(sb.read('side.txt'), 'before\n', 'cancel approved nothing');

    // Approve: reason, confirm; the page follows the run to completed.
    await act(page, '#action-approve', 'the next step is safe');
    await awaitStatus(page, '#run-status', 'completed', 60000);
    const approval = page.locator('ol#timeline li.event[data-type="approval"]');
    await approval.first().waitFor({ timeout: 10000 });
    assert.equal(await approval.count(), 1, 'one approval in the timeline');
    assert.equal((await approval.locator('.actor').textContent()).trim(), 'web:alice');
    assert.equal((await approval.locator('.reason').textContent()).trim(), 'the next step is safe');
    await sb.shot(page, 'completed');

    const same = await samePage(page, mark);
    assert.ok(same.mark && same.navigations === 1, `the page was not reloaded: ${JSON.stringify(same)}`);
    await until('the step after the breakpoint', () => sb.read('side.txt') === 'before\nafter\n', 10000);

    // The journal agrees: one approval with the actor and the reason.
    const approvals = (await events(page, srv, 'bp')).filter((e) => e.type === 'approval');
    assert.equal(approvals.length, 1);
    assert.equal(approvals[0].actor, 'web:alice');
    assert.equal(approvals[0].reason, 'the next step is safe');
    assert.equal((await facts(page, srv, 'bp')).status, 'completed');
  });
});

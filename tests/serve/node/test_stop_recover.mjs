// test_stop_recover.mjs -- steering through the page: a slow loop stopped
// (it ends stopped, the stop journaled with the actor web:<user> and the
// reason); a loop whose process was SIGKILLed mid-step becomes uncertain
// on the open page (no reload), and is recovered with retry (the step runs
// again: its count file says twice) and, another one, with assume-done and
// a result (the step does not run again).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  act, awaitStatus, events, markPage, route, samePage, sandbox, until,
} from './lib.mjs';

// The timeline's one event of type shows actor and reason.
async function expectActor(page, type, actor, reason) {
  const ev = page.locator(`ol#timeline li.event[data-type="${type}"]`);
  await ev.first().waitFor({ timeout: 10000 });
  assert.equal(await ev.count(), 1, `one ${type} in the timeline`);
  assert.equal((await ev.locator('.actor').textContent()).trim(), actor, `the ${type}'s actor`);
  assert.equal((await ev.locator('.reason').textContent()).trim(), reason, `the ${type}'s reason`);
}

// sleepy.yaml with tag started in the background; its step has started.
async function startSleepy(sb, tag) {
  const proc = sb.startLoop('sleepy.yaml', `sleepy-${tag}`, { tag });
  await until(`sleepy-${tag}'s step to start`, () => sb.read(`count-${tag}.txt`) === 'ran\n', 30000);
  return proc;
}

// SIGKILL the loop's process mid-step (the step's shell too, as a crash of
// the machine would end it); a step run again then ends at once.
async function crash(sb, proc, tag) {
  process.kill(proc.pid, 'SIGKILL');
  for (const pid of sb.read(`pids-${tag}`).split('\n').filter(Boolean)) {
    try { process.kill(-Number(pid), 'SIGKILL'); } catch { /* gone */ }
  }
  await proc.done;
  sb.write(`release-${tag}`, '');
}

test('stop a running loop through the page: stopped', { timeout: 500000 }, async () => {
  await sandbox('stop', async (sb) => {
    const proc = sb.startLoop('slow.yaml', 'slow');
    const srv = await sb.serve();
    const page = await sb.login(srv, 'bob');
    const mark = await markPage(page);
    await route(page, '#/runs/slow', '#run-id');
    await awaitStatus(page, '#run-status', 'running');
    await page.locator('ol#timeline li.event').first().waitFor();
    await act(page, '#action-stop', 'enough of this');
    await awaitStatus(page, '#run-status', 'stopped', 30000);
    await expectActor(page, 'stop', 'web:bob', 'enough of this');
    await sb.shot(page, 'stopped');
    const [code] = await proc.done;
    assert.notEqual(code, null, 'lil run ended by itself after the stop');
    const stops = (await events(page, srv, 'slow')).filter((e) => e.type === 'stop');
    assert.equal(stops.length, 1);
    assert.equal(stops[0].actor, 'web:bob');
    assert.equal(stops[0].reason, 'enough of this');
    const same = await samePage(page, mark);
    assert.ok(same.mark && same.navigations === 1, `no reload: ${JSON.stringify(same)}`);
  });
});

test('recover an uncertain loop through the page: retry, assume-done', { timeout: 500000 }, async () => {
  await sandbox('recover', async (sb) => {
    const a = await startSleepy(sb, 'a');
    const srv = await sb.serve();
    const page = await sb.login(srv, 'bob');
    const mark = await markPage(page);
    await route(page, '#/runs/sleepy-a', '#run-id');
    await awaitStatus(page, '#run-status', 'running');

    // Killed while the page looks: it turns uncertain by itself.
    await crash(sb, a, 'a');
    await awaitStatus(page, '#run-status', 'uncertain', 30000);
    const uncertain = page.locator('ol#timeline li.event.uncertain');
    await uncertain.first().waitFor({ timeout: 10000 });
    assert.match(await uncertain.first().textContent(), /count-/, 'the uncertain effect shows its command');
    await sb.shot(page, 'uncertain');
    await act(page, '#action-recover', 'it did not happen', { how: 'retry' });
    await awaitStatus(page, '#run-status', 'completed', 60000);
    await expectActor(page, 'recovery', 'web:bob', 'it did not happen');
    assert.equal(sb.read('count-a.txt'), 'ran\nran\n', 'the retry ran the step again');
    await sb.shot(page, 'recovered');

    // assume-done with the step's result: it does not run again.
    await crash(sb, await startSleepy(sb, 'b'), 'b');
    await route(page, '#/runs/sleepy-b', '#run-id');
    await until('the page of sleepy-b', async () => (await page.textContent('#run-id'))?.trim() === 'sleepy-b');
    await awaitStatus(page, '#run-status', 'uncertain', 30000);
    await act(page, '#action-recover', 'it ran', {
      how: 'assume-done', result: JSON.stringify({ exit_code: 0, stdout: 'ran\n', stderr: '' }),
    });
    await awaitStatus(page, '#run-status', 'completed', 60000);
    await expectActor(page, 'recovery', 'web:bob', 'it ran');
    assert.equal(sb.read('count-b.txt'), 'ran\n', 'assume-done did not run the step again');
    const rec = (await events(page, srv, 'sleepy-b')).filter((e) => e.type === 'recovery');
    assert.equal(rec.length, 1);
    assert.equal(rec[0].how, 'assume-done');

    const same = await samePage(page, mark);
    assert.ok(same.mark && same.navigations === 1, `no reload: ${JSON.stringify(same)}`);
  });
});

// test_sdk.mjs -- `lil mcp` driven by the official TypeScript SDK client.
//
//   node test_sdk.mjs stdio|http
//
// The same scenarios over the transport named (StdioClientTransport or
// StreamableHTTPClientTransport), each with its own server and store in a
// temporary directory: the tools and their schemas; a broken spec; a loop
// that pauses at a breakpoint, followed through its resource and approved
// by its pause id (a wrong id refused); a running loop stopped; an
// uncertain step recovered by a retry and by assume_done; --read-only; the
// actor journaled for steering; and over HTTP, requests without the token
// or from a foreign Origin refused.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  LATEST_PROTOCOL_VERSION, ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema, SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

import {
  INIT, READ_TOOLS, START_TOOLS, STEER_TOOLS, SPECS, ajv07, ajv2020, alive, connect,
  loopStatus, pauseOf, rawPost, rpcOf, text, until,
} from './lib.mjs';

const transport = process.argv[2];
if (transport !== 'stdio' && transport !== 'http') {
  console.error('usage: node test_sdk.mjs stdio|http');
  process.exit(64);
}
const RUN_FLAGS = ['--allow-run', '--spec-root', SPECS];
const T = { timeout: 120000 };

// Run body with a fresh server; close it whatever happens, and fail when
// the server did not end cleanly.
async function withServer(opts, body) {
  const srv = await connect({ transport, name: `ts-sdk-${transport}`, ...opts });
  let problems;
  try {
    await body(srv);
  } catch (e) {
    e.message += `\n--- lil mcp stderr ---\n${srv.stderr().slice(-4000)}`;
    throw e;
  } finally {
    problems = await srv.close();
  }
  if (problems.length) {
    throw new Error(`${problems.join('\n')}\n--- lil mcp stderr ---\n${srv.stderr().slice(-4000)}`);
  }
}

const lines = (dir, f) => (existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : '');

// inspect_run until the loop's status is one of want.
async function awaitStatus(srv, runId, want, ms = 30000) {
  const wanted = [].concat(want);
  let facts;
  try {
    await until(`run ${runId} to be ${wanted.join(' or ')}`, async () => {
      facts = await srv.ok('inspect_run', { run_id: runId });
      return wanted.includes(loopStatus(facts));
    }, ms);
  } catch (e) {
    e.message += `; last seen ${loopStatus(facts)}: ${JSON.stringify(facts?.loop ?? facts).slice(0, 2000)}`;
    throw e;
  }
  return facts;
}

// run_events holds one event of type with the actor mcp:<name> and reason.
async function expectActor(srv, runId, type, name, reason) {
  const ev = await srv.ok('run_events', { run_id: runId, limit: 10000 });
  assert.ok(Array.isArray(ev.events), 'run_events answers events');
  const e = ev.events.find((x) => x.type === type && x.reason === reason);
  assert.ok(e, `run_events of ${runId} holds a ${type} event with reason "${reason}": ` +
    JSON.stringify(ev.events.map((x) => x.type)));
  assert.equal(e.actor, `mcp:${name}`, `the ${type}'s actor is mcp:<client name>`);
}

// start_run; the child's pid is tracked so that close() ends it.
async function start(srv, args) {
  const out = await srv.ok('start_run', { reason: 'test', ...args });
  assert.equal(typeof out.run_id, 'string', `start_run answers a run_id: ${JSON.stringify(out)}`);
  srv.track(out.pid);
  return out;
}

test(`${transport}: tools/list -- names, schemas that compile, annotations`, T, async () => {
  await withServer({ flags: RUN_FLAGS }, async (srv) => {
    const names = srv.tools.map((t) => t.name).sort();
    assert.deepEqual(names, [...READ_TOOLS, ...STEER_TOOLS, ...START_TOOLS].sort());
    for (const t of srv.tools) {
      assert.ok(t.description, `${t.name} has a description`);
      for (const which of ['inputSchema', 'outputSchema']) {
        const s = t[which];
        assert.ok(s && s.type === 'object', `${t.name}.${which} is an object schema`);
        for (const ajv of [ajv07, ajv2020]) {
          assert.doesNotThrow(() => ajv.compile(s), `${t.name}.${which} compiles`);
        }
      }
      const props = t.inputSchema.properties ?? {};
      assert.equal(t.inputSchema.additionalProperties, false, `${t.name}: additionalProperties false`);
      for (const [k, v] of Object.entries(props)) {
        assert.ok(v.description, `${t.name}.${k} has a description`);
      }
      for (const k of t.inputSchema.required ?? []) {
        assert.ok(k in props, `${t.name}: required ${k} is a property`);
      }
      const a = t.annotations ?? {};
      for (const h of ['readOnlyHint', 'destructiveHint', 'idempotentHint']) {
        assert.equal(typeof a[h], 'boolean', `${t.name}.annotations.${h} is a boolean`);
      }
      const reads = READ_TOOLS.includes(t.name);
      assert.equal(a.readOnlyHint, reads, `${t.name}: readOnlyHint ${reads}`);
      if (reads) {
        assert.equal(a.destructiveHint, false, `${t.name}: not destructive`);
        assert.equal(a.idempotentHint, true, `${t.name}: idempotent`);
      }
    }
    // The read tools over an empty store and a valid spec answer what their
    // output schemas say (srv.ok checks it, and so does the SDK).
    const runs = await srv.ok('list_runs', {});
    assert.deepEqual(runs.runs, []);
    const v = await srv.ok('validate_spec', { spec: 'breakpoint.yaml' });
    assert.equal(v.valid, true);
    await srv.ok('explain_spec', { spec: 'breakpoint.yaml' });
    await srv.ok('doctor', { spec: 'breakpoint.yaml' });
  });
});

test(`${transport}: validate_spec of a broken spec -- file:line:column`, T, async () => {
  await withServer({ flags: RUN_FLAGS }, async (srv) => {
    const res = await srv.call('validate_spec', { spec: 'broken.yaml' });
    assert.equal(res.isError, true, 'a broken spec is a tool error');
    assert.match(text(res), /broken\.yaml:10:11: error: .*shel/);
    const sc = res.structuredContent;
    assert.ok(sc, 'the diagnostics are structured too');
    assert.equal(sc.valid, false);
    const d = sc.diagnostics.find((x) => x.severity === 'error');
    assert.ok(d, `an error among ${JSON.stringify(sc.diagnostics)}`);
    assert.match(d.file, /broken\.yaml$/);
    assert.equal(d.line, 10);
    assert.equal(d.column, 11);
    // A spec outside --spec-root is refused in words, not read.
    const out = await srv.call('validate_spec', { spec: '../node/package.json' });
    assert.equal(out.isError, true);
    assert.match(text(out), /outside --spec-root/);
  });
});

test(`${transport}: bad arguments are -32602 naming the field; a failing tool is isError`, T, async () => {
  await withServer({ flags: RUN_FLAGS }, async (srv) => {
    const refused = (tool, args, field) => assert.rejects(
      srv.client.callTool({ name: tool, arguments: args }),
      (e) => e.code === -32602 && e.message.includes(`"${field}"`),
      `${tool} ${JSON.stringify(args)}: -32602 naming "${field}"`);
    await refused('inspect_run', { run_id: 5 }, 'run_id');
    await refused('inspect_run', {}, 'run_id');
    await refused('inspect_run', { run_id: 'r', bogus: 1 }, 'bogus');
    await refused('list_runs', { limit: 0 }, 'limit');
    await refused('approve_run', { run_id: 'r', reason: 'r' }, 'pause_id');
    // No such run: a tool result with the CLI's words, not a protocol error.
    const res = await srv.call('inspect_run', { run_id: 'nosuch' });
    assert.equal(res.isError, true);
    assert.match(text(res), /no run 'nosuch'/);
    assert.equal(res.structuredContent, undefined, 'no structuredContent in an error');
  });
});

test(`${transport}: a breakpoint -- resource update, approve by pause id, completes`, T, async () => {
  const name = `ts-sdk-${transport}-approver`;
  await withServer({ flags: RUN_FLAGS, name }, async (srv) => {
    const updates = [];
    let pausedSeen = false;
    srv.client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => {
      updates.push(n.params.uri);
      const r = await srv.client.readResource({ uri: n.params.uri }).catch(() => null);
      const facts = r ? JSON.parse(r.contents[0].text) : null;
      if (pauseOf(facts) && loopStatus(facts) === 'paused') pausedSeen = true;
    });
    let listChanged = 0;
    srv.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => { listChanged++; });
    const run = await start(srv, { spec: 'breakpoint.yaml' });
    const uri = `lil://runs/${encodeURIComponent(run.run_id)}`;
    await srv.client.subscribeResource({ uri });
    await until('notifications/resources/list_changed for the new run', () => listChanged > 0);
    const listed = await srv.client.listResources();
    assert.ok(listed.resources.some((r) => r.uri === uri), `resources/list holds ${uri}`);
    const templates = (await srv.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    assert.deepEqual(templates.sort(), ['lil://runs/{id}', 'lil://runs/{id}/events']);
    // The first step waits for `go`: the subscription is there before the
    // loop reaches its breakpoint.
    writeFileSync(join(srv.dir, 'go'), '');
    await until('notifications/resources/updated of the run, reading it paused',
      () => pausedSeen, 30000);
    assert.ok(updates.every((u) => u === uri), `updates only for ${uri}: ${updates}`);

    const facts = await awaitStatus(srv, run.run_id, 'paused');
    const pause = pauseOf(facts);
    assert.ok(pause, `inspect_run shows the pause: ${JSON.stringify(facts.loop ?? facts)}`);
    assert.match(pause.id, /^pause\.\d+$/);
    assert.match(pause.digest, /^[0-9a-f]{64}$/);
    assert.equal(lines(srv.dir, 'side.txt'), 'before\n');
    // The review-pause prompt walks through this pause.
    const prompt = await srv.client.getPrompt({ name: 'review-pause', arguments: { run_id: run.run_id } });
    const words = JSON.stringify(prompt.messages);
    assert.ok(words.includes(pause.id) && words.includes('approve_run'),
      `review-pause names the pause and approve_run: ${words.slice(0, 1500)}`);

    // A pause id that is not the current pause is refused; nothing changes.
    const wrong = await srv.call('approve_run',
      { run_id: run.run_id, pause_id: 'pause.999', reason: 'wrong pause' });
    assert.equal(wrong.isError, true, `a wrong pause id is refused: ${JSON.stringify(wrong)}`);
    assert.match(text(wrong), /pause/);
    const wrongDigest = await srv.call('approve_run',
      { run_id: run.run_id, digest: '00000000', reason: 'wrong pause' });
    assert.equal(wrongDigest.isError, true, 'a digest that is not the pause\'s is refused');
    assert.match(text(wrongDigest), /nothing was approved/);
    const still = await srv.ok('inspect_run', { run_id: run.run_id });
    assert.equal(loopStatus(still), 'paused');
    assert.equal(pauseOf(still).id, pause.id);
    assert.equal(lines(srv.dir, 'side.txt'), 'before\n');

    const before = updates.length;
    const ok = await srv.ok('approve_run',
      { run_id: run.run_id, pause_id: pause.id, reason: 'the step is safe' });
    srv.track(ok.pid);
    await awaitStatus(srv, run.run_id, 'completed');
    assert.equal(lines(srv.dir, 'side.txt'), 'before\nafter\n');
    await until('an update after the approval', () => updates.length > before, 10000);

    // The approval is journaled with the actor mcp:<client name>; the
    // refused one journaled nothing.
    await expectActor(srv, run.run_id, 'approval', name, 'the step is safe');
    const ev = await srv.ok('run_events', { run_id: run.run_id, limit: 10000 });
    assert.equal(ev.events.filter((e) => e.type === 'approval').length, 1, 'one approval');
    assert.ok(!JSON.stringify(ev.events).includes('"wrong pause"'),
      'the refused approval journaled nothing');
  });
});

test(`${transport}: stop_run of a running loop -- it ends stopped`, T, async () => {
  await withServer({ flags: RUN_FLAGS }, async (srv) => {
    const run = await start(srv, { spec: 'slow.yaml' });
    await awaitStatus(srv, run.run_id, 'running');
    const out = await srv.ok('stop_run', { run_id: run.run_id, reason: 'enough' });
    assert.equal(out.requested, true);
    assert.equal(out.run_id, run.run_id);
    const facts = await awaitStatus(srv, run.run_id, 'stopped', 20000);
    assert.ok((facts.loop?.iterations ?? 0) < 300, 'stopped long before its end');
    if (run.pid) await until(`the loop's process ${run.pid} to exit`, () => !alive(run.pid), 10000);
    await expectActor(srv, run.run_id, 'stop', srv.name, 'enough');
  });
});

test(`${transport}: start_run with wait -- progress notifications, then the loop's result`, T, async () => {
  await withServer({ flags: RUN_FLAGS }, async (srv) => {
    const progress = [];
    // The step waits for release-c: let it go once it has started.
    const release = until('the step to start', () => lines(srv.dir, 'count-c.txt') === 'ran\n')
      .then(() => writeFileSync(join(srv.dir, 'release-c'), ''));
    const res = await srv.client.callTool(
      { name: 'start_run', arguments: { spec: 'sleepy.yaml', run_id: 'sleepy-c', inputs: { tag: 'c' }, wait: true, reason: 'test' } },
      undefined, { onprogress: (p) => progress.push(p), timeout: 60000 });
    await release;
    assert.ok(!res.isError, `start_run with wait: ${text(res)}`);
    const out = res.structuredContent;
    assert.equal(out.run_id, 'sleepy-c');
    assert.equal(out.status, 'completed', `the loop's status: ${JSON.stringify(out)}`);
    assert.equal(out.exit_code, 0);
    assert.equal(out.result?.status, 'completed', `the loop's result: ${JSON.stringify(out.result)}`);
    assert.ok(progress.length >= 1, 'progress notifications while the loop ran');
    for (let i = 1; i < progress.length; i++) {
      assert.ok(progress[i].progress > progress[i - 1].progress, `progress increases: ${JSON.stringify(progress)}`);
    }
  });
});

// Start sleepy.yaml with tag, SIGKILL its process mid-step: uncertain.
async function uncertainRun(srv, tag) {
  const run = await start(srv, { spec: 'sleepy.yaml', run_id: `sleepy-${tag}`, inputs: { tag } });
  assert.ok(Number.isInteger(run.pid), `start_run answers the child's pid: ${JSON.stringify(run)}`);
  await until('the step to start', () => lines(srv.dir, `count-${tag}.txt`) === 'ran\n');
  process.kill(run.pid, 'SIGKILL');
  // The step's shell is in a process group of its own: end it too, as a
  // crash of the machine would.
  for (const pid of lines(srv.dir, `pids-${tag}`).split('\n').filter(Boolean)) {
    srv.track(Number(pid));
    try { process.kill(-Number(pid), 'SIGKILL'); } catch { /* gone */ }
  }
  const facts = await awaitStatus(srv, run.run_id, 'uncertain');
  assert.ok(facts.loop.uncertain, `inspect_run names the uncertain effect: ${JSON.stringify(facts.loop)}`);
  // The triage-uncertain prompt walks through this effect.
  const prompt = await srv.client.getPrompt({ name: 'triage-uncertain', arguments: { run_id: run.run_id } });
  const words = JSON.stringify(prompt.messages);
  assert.ok(words.includes('recover_run') && words.includes('count-'),
    `triage-uncertain names the step's command and recover_run: ${words.slice(0, 1500)}`);
  writeFileSync(join(srv.dir, `release-${tag}`), ''); // a step run again ends at once
  return run;
}

test(`${transport}: recover_run of an uncertain step -- retry and assume_done`, T, async () => {
  await withServer({ flags: RUN_FLAGS }, async (srv) => {
    const a = await uncertainRun(srv, 'a');
    const r1 = await srv.ok('recover_run', { run_id: a.run_id, action: 'retry', reason: 'did not happen' });
    srv.track(r1.pid);
    await awaitStatus(srv, a.run_id, 'completed');
    assert.equal(lines(srv.dir, 'count-a.txt'), 'ran\nran\n', 'the retry ran the step again');
    await expectActor(srv, a.run_id, 'recovery', srv.name, 'did not happen');

    const b = await uncertainRun(srv, 'b');
    const r2 = await srv.ok('recover_run', {
      run_id: b.run_id, action: 'assume_done', reason: 'it ran',
      result: { exit_code: 0, stdout: 'ran\n', stderr: '' },
    });
    srv.track(r2.pid);
    await awaitStatus(srv, b.run_id, 'completed');
    assert.equal(lines(srv.dir, 'count-b.txt'), 'ran\n', 'assume_done did not run it again');
    await expectActor(srv, b.run_id, 'recovery', srv.name, 'it ran');
  });
});

test(`${transport}: --read-only offers the read tools only`, T, async () => {
  await withServer({ flags: ['--read-only'] }, async (srv) => {
    assert.deepEqual(srv.tools.map((t) => t.name).sort(), READ_TOOLS);
    await assert.rejects(
      srv.client.callTool({ name: 'stop_run', arguments: { run_id: 'x', reason: 'r' } }),
      (e) => e.code === -32602 && /stop_run/.test(e.message),
      'stop_run is an unknown tool (-32602)');
    await assert.rejects(
      srv.client.callTool({ name: 'start_run', arguments: { spec: 'slow.yaml' } }),
      (e) => e.code === -32602);
  });
});

if (transport === 'http') {
  test('http: no token -> 401; a foreign Origin -> 403', T, async () => {
    await withServer({ flags: [] }, async (srv) => {
      const { url, token } = srv.server;
      const auth = { Authorization: `Bearer ${token}` };
      const none = await rawPost(url, {}, INIT);
      assert.equal(none.status, 401, `without the token: ${none.status} ${none.body}`);
      assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
      const bad = await rawPost(url, { Authorization: 'Bearer 0123' }, INIT);
      assert.equal(bad.status, 401, `a wrong token: ${bad.status} ${bad.body}`);
      const evil = await rawPost(url, { ...auth, Origin: 'http://evil.example' }, INIT);
      assert.equal(evil.status, 403, `a foreign Origin: ${evil.status} ${evil.body}`);
      const own = await rawPost(url, { ...auth, Origin: new URL(url).origin }, INIT);
      assert.equal(own.status, 200, `the server's own Origin with the token: ${own.status} ${own.body}`);
    });
  });

  test('http: every protocol version the SDK negotiates is agreed to', T, async () => {
    await withServer({ flags: [] }, async (srv) => {
      assert.equal(srv.client.transport.protocolVersion, LATEST_PROTOCOL_VERSION,
        'the SDK client and lil agreed on the SDK\'s latest version');
      const auth = { Authorization: `Bearer ${srv.server.token}` };
      for (const v of SUPPORTED_PROTOCOL_VERSIONS) {
        const init = { ...INIT, params: { ...INIT.params, protocolVersion: v } };
        const res = await rawPost(srv.server.url, auth, init);
        assert.equal(res.status, 200, `initialize ${v}: ${res.status} ${res.body}`);
        const msg = rpcOf(res);
        assert.equal(msg.result?.protocolVersion, v, `initialize ${v}: ${res.body}`);
        assert.ok(res.headers.get('mcp-session-id'), `initialize ${v} makes a session`);
      }
    });
  });
}

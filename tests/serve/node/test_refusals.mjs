// test_refusals.mjs -- what a browser may not do, tried from a real browser
// against a running loop (a stop would end it): a POST from the page without
// the CSRF token or with a wrong one; a POST with another Origin; a page of
// another origin (a second server, same site: the session cookie goes along)
// posting a form and a fetch to the server; requests after logout, the old
// cookie sent again; a used login URL; --read-only.  Each is refused (403,
// or 401 without a session) and the run is still running, no stop
// journaled, no stop requested.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';

import {
  apiGet, awaitStatus, csrfOf, events, facts, route, sandbox, until,
} from './lib.mjs';

const STOP = '/api/runs/slow/stop';

// A POST made by the page's own script (same origin, the session's cookie).
async function pagePost(page, path, headers, body) {
  return page.evaluate(async ({ path, headers, body }) => {
    const r = await fetch(path, { method: 'POST', headers, body });
    return { status: r.status, text: await r.text() };
  }, { path, headers, body });
}

// The run is still running and nothing asked it to stop.
async function unchanged(page, srv, when) {
  const f = await facts(page, srv, 'slow');
  assert.equal(f.status, 'running', `${when}: the run still runs`);
  assert.equal(f.stop_request, null, `${when}: no stop requested: ${JSON.stringify(f.stop_request)}`);
  const stops = (await events(page, srv, 'slow')).filter((e) => e.type === 'stop');
  assert.equal(stops.length, 0, `${when}: no stop journaled`);
}

// A page of another origin: a plain HTTP server on another port of
// 127.0.0.1 serving a form that posts to target (enctype text/plain, the
// classic way to send JSON-looking bodies across origins).
async function otherOrigin(target) {
  const html = `<!doctype html><title>elsewhere</title>
<form id="f" method="POST" action="${target}" enctype="text/plain">
<input name='{"reason":"from elsewhere","x":"' value='"}'></form>`;
  const server = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(html);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${server.address().port}` };
}

test('refused from a browser: no CSRF token, another origin, after logout, read-only', { timeout: 500000 }, async () => {
  await sandbox('refusals', async (sb) => {
    sb.startLoop('slow.yaml', 'slow');
    const srv = await sb.serve();
    const page = await sb.login(srv, 'alice');
    await route(page, '#/runs/slow', '#run-id');
    await awaitStatus(page, '#run-status', 'running', 30000);
    const csrf = await csrfOf(page, srv);
    assert.match(csrf, /^[0-9a-f]{64}$/);
    // The browser's own line for each refused request the test makes.
    sb.allowErrors(/Failed to load resource: the server responded with a status of 40[13]/);
    const json = { 'Content-Type': 'application/json' };
    const body = JSON.stringify({ reason: 'should be refused' });

    // Same origin, the session's cookie, no token or a wrong one: 403.
    sb.at('posting without the CSRF token');
    let r = await pagePost(page, STOP, json, body);
    assert.equal(r.status, 403, `no CSRF token: ${JSON.stringify(r)}`);
    assert.ok(JSON.parse(r.text).error, 'the refusal says why');
    r = await pagePost(page, STOP, { ...json, 'X-CSRF-Token': '0'.repeat(64) }, body);
    assert.equal(r.status, 403, `a wrong CSRF token: ${JSON.stringify(r)}`);
    await unchanged(page, srv, 'after the tokenless POSTs');

    // The right token with another Origin: 403.
    sb.at('posting with another Origin');
    const other = await otherOrigin(srv.origin + STOP);
    try {
      const res = await page.request.post(srv.origin + STOP, {
        headers: { ...json, 'X-CSRF-Token': csrf, Origin: other.origin }, data: body, failOnStatusCode: false,
      });
      assert.equal(res.status(), 403, `another Origin: ${await res.text()}`);

      // A page of the other origin, in the same browser (the cookie is
      // same-site, so it is sent): a form posted there, and a fetch.
      sb.at('posting a form from a page of another origin');
      const evil = await page.context().newPage();
      sb.watch(evil, 'the other origin', true);
      sb.at('posting a form from a page of another origin: its page loads');
      await evil.goto(other.origin + '/');
      sb.at('posting a form from a page of another origin: submitted');
      const [resp] = await Promise.all([
        evil.waitForResponse((x) => x.url() === srv.origin + STOP, { timeout: 15000 }),
        // (submitted after evaluate returns: the page then navigates)
        evil.evaluate(() => { setTimeout(() => document.getElementById('f').submit(), 0); }),
      ]);
      assert.ok([403, 415].includes(resp.status()), `a form posted from another origin: ${resp.status()}`);
      // The refusal is a document the browser shows (its 'load' may never
      // come: Chromium's JSON viewer is refused by the answer's CSP); once
      // it is there, the page goes back to the other origin.
      await evil.waitForURL(srv.origin + STOP, { waitUntil: 'commit' });
      sb.at('fetching from a page of another origin');
      await evil.goto(other.origin + '/');
      const fetched = await evil.evaluate(async ({ url, csrf, body }) => {
        try {
          const x = await fetch(url, {
            method: 'POST', credentials: 'include', body,
            headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
          });
          return { status: x.status };
        } catch (e) {
          return { error: String(e) };
        }
      }, { url: srv.origin + STOP, csrf, body });
      assert.ok(fetched.error || fetched.status === 403, `a fetch from another origin: ${JSON.stringify(fetched)}`);
      sb.at('fetching with mode no-cors from a page of another origin');
      await evil.evaluate(async ({ url }) => {
        await fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include', body: '{"reason":"x"}' })
          .catch(() => {});
      }, { url: srv.origin + STOP });
      await evil.close();
    } finally {
      other.server.close();
    }
    await unchanged(page, srv, 'after the other origin');

    // After logout: the old cookie and token are refused (401).
    sb.at('logging out');
    const [cookie] = (await page.context().cookies(srv.origin)).filter((c) => c.name === 'lil_session');
    assert.ok(cookie, 'the session cookie');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    await page.click('#logout');
    await until('the session to end', async () => (await apiGet(page, srv, '/api/session')).status === 401, 10000);
    const old = { Cookie: `lil_session=${cookie.value}`, 'X-CSRF-Token': csrf };
    const again = await page.request.post(srv.origin + STOP, {
      headers: { ...json, ...old }, data: body, failOnStatusCode: false,
    });
    assert.equal(again.status(), 401, `the old cookie after logout: ${await again.text()}`);
    const session = await page.request.get(srv.origin + '/api/session', { headers: old, failOnStatusCode: false });
    assert.equal(session.status(), 401, 'GET /api/session with the old cookie');
    await sb.shot(page, 'logged-out');

    sb.at('logging in with a used login URL');
    // A used login URL is refused (its token, at the login's POST); the
    // next one works.
    await page.goto(srv.loginUrls()[0]);
    await page.fill('#login-user', 'alice');
    const [used] = await Promise.all([
      page.waitForResponse((x) => new URL(x.url()).pathname === '/login' && x.request().method() === 'POST'),
      page.click('#login-submit'),
    ]);
    assert.equal(used.status(), 403, 'the first login URL, used');
    await until('the login page to say why', async () => (await page.textContent('#login-error'))?.trim());
    assert.equal(new URL(page.url()).pathname, '/login', 'no session: still the login page');
    const page2 = await sb.login(srv, 'carol');
    await unchanged(page2, srv, 'after logout');

    // --read-only: no action shown, every POST refused.
    sb.at('looking at a --read-only server');
    const ro = await sb.serve(['--read-only']);
    const roPage = await sb.login(ro, 'dave');
    assert.equal(await roPage.getAttribute('body', 'data-read-only'), 'true');
    await route(roPage, '#/runs/slow', '#run-id');
    await awaitStatus(roPage, '#run-status', 'running');
    for (const b of ['button#action-stop', 'button#action-approve', 'button#action-recover',
      'button#action-resume']) {
      const el = roPage.locator(b);
      const usable = (await el.count()) > 0 && await el.isVisible() && await el.isEnabled();
      assert.equal(usable, false, `${b} is hidden or disabled when read-only`);
    }
    const roCsrf = await csrfOf(roPage, ro);
    r = await pagePost(roPage, STOP, { ...json, 'X-CSRF-Token': roCsrf }, body);
    assert.equal(r.status, 403, `a stop when read-only: ${JSON.stringify(r)}`);
    await sb.shot(roPage, 'read-only');
    await unchanged(page2, srv, 'after the read-only server');
  });
});

// app.js -- the page of `lil serve`: the session and the header, the hash
// router (#/ runs, #/runs/<id> a run, #/lab the crash lab), the live
// stream, and what happens when the session ends.

import {session, loadSession, onSessionEnd, endSession, post} from './api.js';
import {el, clear, toast, hideToast, refreshTimes} from './ui.js';
import * as live from './live.js';
import * as runs from './runs.js';
import * as run from './run.js';
import * as lab from './lab.js';

const ENDED_TEXT = 'Session ended: log in with the URL lil serve printed';

let current = null; // {name, key, view}

function parseHash() {
  const h = location.hash.replace(/^#/, '') || '/';
  const [path, qs] = h.split('?');
  const params = Object.fromEntries(new URLSearchParams(qs || ''));
  const m = /^\/runs\/([^/]+)\/?$/.exec(path);
  if (m) {
    let id;
    try {
      id = decodeURIComponent(m[1]);
    } catch (e) {
      id = m[1];
    }
    return {name: 'run', key: 'run:' + id, id, params};
  }
  if (path === '/lab' || path === '/lab/') return {name: 'lab', key: 'lab', params};
  return {name: 'runs', key: 'runs', params};
}

const VIEWS = {runs, run, lab};

function route() {
  const r = parseHash();
  for (const [name, a] of [['runs', 'nav-runs'], ['lab', 'nav-lab']]) {
    const link = document.getElementById(a);
    if (r.name === name) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  if (current && current.key === r.key && current.view.update) {
    current.view.update(r);
    return;
  }
  if (current && current.view.unmount) current.view.unmount();
  const root = clear(document.getElementById('view'));
  for (const k of Object.keys(root.dataset)) delete root.dataset[k];
  root.dataset.view = r.name;
  document.title = (r.name === 'run' ? r.id : r.name === 'lab' ? 'Crash lab' : 'Runs') +
    ' · lil serve';
  current = {name: r.name, key: r.key, view: VIEWS[r.name].mount(root, r)};
}

function showHeader() {
  document.getElementById('user').textContent = session.user;
  document.getElementById('store').textContent = session.store || '';
  document.getElementById('store').title = session.store || '';
  document.getElementById('store-kind').textContent =
    session.store_kind === 'postgresql' ? 'PostgreSQL' : 'files';
  document.body.dataset.readOnly = session.read_only ? 'true' : 'false';
  document.body.dataset.storeKind = session.store_kind || 'file';
  document.getElementById('read-only-badge').hidden = !session.read_only;
  if (session.version) document.querySelector('.brand').title = 'lil ' + session.version;
}

function showEnded(text) {
  const dialog = document.getElementById('action-dialog');
  if (dialog.open) dialog.close();
  if (current && current.view.unmount) current.view.unmount();
  current = null;
  const banner = document.getElementById('banner');
  banner.textContent = text;
  banner.hidden = false;
  const root = clear(document.getElementById('view'));
  root.dataset.view = 'ended';
  root.append(el('section.ended', null, el('h1', null, text)));
  document.body.dataset.session = 'ended';
  document.getElementById('logout').disabled = true;
}

async function logout() {
  live.close();
  try {
    await post('/api/logout', {});
  } catch (e) {
    if (e.status !== 401) {
      toast('Log out failed: ' + e.message, 'error');
      live.watch(null);
      return;
    }
  }
  endedText = 'Logged out: log in with the URL lil serve printed';
  endSession();
}

let endedText = ENDED_TEXT;

// A job (approve, recover, resume run in a child) ended: say how.
function onJob(job) {
  if (!job || job.state !== 'ended') return;
  const what = `${job.verb || 'job'} of ${job.run || '?'}`;
  if (job.error || (job.exit_code && !job.status)) {
    toast(`${what} failed: ${job.error || 'exit code ' + job.exit_code}`, 'error');
  } else {
    toast(`${what} ended` + (job.status ? `: the run is ${job.status}` : ''), 'ok');
  }
}

async function boot() {
  document.getElementById('toast').addEventListener('click', hideToast);
  document.getElementById('logout').addEventListener('click', logout);
  onSessionEnd(() => showEnded(endedText));
  try {
    await loadSession();
  } catch (e) {
    if (e.status !== 401) {
      showEnded('lil serve cannot be reached: ' + e.message);
    }
    return;
  }
  showHeader();
  live.start();
  live.on('job', onJob);
  window.addEventListener('hashchange', route);
  setInterval(() => refreshTimes(), 15000);
  route();
}

boot();

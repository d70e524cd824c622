// api.js -- the page's calls to the JSON API of `lil serve` (docs/serve.md):
// the session (user, CSRF token, read-only), GETs, POSTs with the CSRF
// header, and the end of a session: a 401 anywhere stops the page once.

export const session = {user: '', csrf: '', read_only: true, store: '', store_kind: '',
                        version: ''};

let ended = false;
const endListeners = [];

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function onSessionEnd(fn) {
  endListeners.push(fn);
}

export function sessionEnded() {
  return ended;
}

export function endSession() {
  if (ended) return;
  ended = true;
  for (const fn of endListeners) fn();
}

async function call(method, path, body) {
  if (ended) throw new ApiError(401, 'Session ended');
  const init = {method, credentials: 'same-origin', headers: {Accept: 'application/json'}};
  if (method === 'POST') {
    init.headers['Content-Type'] = 'application/json';
    init.headers['X-CSRF-Token'] = session.csrf;
    init.body = JSON.stringify(body || {});
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'lil serve cannot be reached: ' + e.message);
  }
  if (res.status === 401) {
    endSession();
    throw new ApiError(401, 'Session ended');
  }
  let doc = null;
  try {
    doc = await res.json();
  } catch (e) {
    doc = null;
  }
  if (!res.ok) {
    const msg = doc && typeof doc.error === 'string' ? doc.error : `HTTP ${res.status}`;
    throw new ApiError(res.status, msg);
  }
  return doc;
}

export function get(path, params) {
  return call('GET', path + query(params));
}

export function post(path, body) {
  return call('POST', path, body);
}

// {a: 1, b: ''} -> "?a=1" (empty values left out)
export function query(params) {
  if (!params) return '';
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? '?' + s : '';
}

export function runPath(id, rest = '') {
  return '/api/runs/' + encodeURIComponent(id) + rest;
}

export async function loadSession() {
  const doc = await get('/api/session');
  Object.assign(session, doc);
  return session;
}

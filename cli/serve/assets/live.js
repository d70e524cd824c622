// live.js -- the page's one EventSource on /api/stream (?run=ID while a run
// is watched): its state in #live, its events handed to the views.  While
// the stream is down, the views are asked to refresh every 10 s; when it
// comes back, once (events may have been missed).

import {get, onSessionEnd, sessionEnded} from './api.js';

const TYPES = ['runs', 'run', 'job', 'lab'];
const FALLBACK_MS = 10000;

const listeners = new Map(TYPES.map((t) => [t, new Set()]).concat([['refresh', new Set()]]));
let es = null;
let watched = null;
let state = 'connecting';
let retryMs = 1000;
let retryTimer = null;
let fallbackTimer = null;
let everLive = false;

// fn(doc) for each event of type; returns what removes it.
export function on(type, fn) {
  listeners.get(type).add(fn);
  return () => listeners.get(type).delete(fn);
}

function emit(type, doc) {
  for (const fn of [...listeners.get(type)]) {
    try {
      fn(doc);
    } catch (e) {
      console.error(e);
    }
  }
}

function setState(s) {
  state = s;
  const dot = document.getElementById('live');
  if (dot) {
    dot.dataset.state = s;
    const words = {live: 'live', connecting: 'connecting…', down: 'offline'};
    dot.title = 'updates: ' + words[s];
    const label = dot.querySelector('.label');
    if (label) label.textContent = words[s];
  }
  if (s === 'live') stopFallback();
  else startFallback();
}

function startFallback() {
  if (fallbackTimer || sessionEnded()) return;
  fallbackTimer = setInterval(() => emit('refresh', {fallback: true}), FALLBACK_MS);
}

function stopFallback() {
  clearInterval(fallbackTimer);
  fallbackTimer = null;
}

function open() {
  if (sessionEnded()) return;
  clearTimeout(retryTimer);
  setState('connecting');
  const url = '/api/stream' + (watched ? '?run=' + encodeURIComponent(watched) : '');
  const src = new EventSource(url);
  es = src;
  src.addEventListener('hello', () => {
    if (src !== es) return;
    retryMs = 1000;
    const again = everLive;
    everLive = true;
    setState('live');
    if (again) emit('refresh', {reconnected: true});
  });
  for (const t of TYPES) {
    src.addEventListener(t, (ev) => {
      if (src !== es) return;
      let doc = null;
      try {
        doc = JSON.parse(ev.data);
      } catch (e) {
        return;
      }
      emit(t, doc);
    });
  }
  src.onerror = () => {
    if (src !== es) return;
    if (src.readyState === EventSource.CLOSED) lost(src);
    else setState('connecting');
  };
}

// The stream closed for good: find out whether the session ended, else
// try again later (backing off to 10 s).
async function lost(src) {
  src.close();
  setState('down');
  try {
    await get('/api/session');
  } catch (e) {
    if (e.status === 401) return;
  }
  retryTimer = setTimeout(open, retryMs);
  retryMs = Math.min(retryMs * 2, FALLBACK_MS);
}

// Watch run (or no run: null); the stream is opened again when it changes.
export function watch(run) {
  run = run || null;
  if (es && run === watched) return;
  watched = run;
  if (es) es.close();
  es = null;
  open();
}

// Close the stream now, before something that ends the session (logout),
// so the browser does not try it again and get refused.
export function close() {
  const src = es;
  es = null;
  if (src) src.close();
  clearTimeout(retryTimer);
  setState('down');
}

export function liveState() {
  return state;
}

export function start() {
  onSessionEnd(() => {
    if (es) es.close();
    es = null;
    clearTimeout(retryTimer);
    stopFallback();
    setState('down');
  });
}


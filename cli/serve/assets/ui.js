// ui.js -- building the page's DOM from data, safely: every string is set
// with textContent or a non-URL attribute, never parsed as markup; the
// formats shared by every view (times, money, tokens, durations, status).

// el('td#id.run.num', {title: x, dataset: {run: id}}, child, 'text', ...)
export function el(spec, attrs, ...children) {
  const m = /^([a-z][a-z0-9]*)?(?:#([\w-]+))?((?:\.[\w-]+)*)$/.exec(spec);
  if (!m) throw new Error('bad element ' + spec);
  const node = document.createElement(m[1] || 'div');
  if (m[2]) node.id = m[2];
  if (m[3]) node.className = m[3].slice(1).split('.').join(' ');
  if (attrs) setAttrs(node, attrs);
  append(node, children);
  return node;
}

const URL_ATTRS = new Set(['href', 'src', 'action', 'formaction', 'xlink:href']);

function setAttrs(node, attrs) {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'dataset') {
      for (const [dk, dv] of Object.entries(v)) {
        if (dv !== undefined && dv !== null) node.dataset[dk] = String(dv);
      }
    } else if (k === 'text') {
      node.textContent = String(v);
    } else if (k === 'on') {
      for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
    } else if (k === 'href') {
      node.setAttribute('href', safeHref(v));
    } else if (URL_ATTRS.has(k) || k.startsWith('on')) {
      throw new Error('refused attribute ' + k);
    } else {
      node.setAttribute(k, v === true ? '' : String(v));
    }
  }
}

// Only links inside the page: "#/..." or "/...", never javascript: etc.
function safeHref(v) {
  const s = String(v);
  return s.startsWith('#') || (s.startsWith('/') && !s.startsWith('//')) ? s : '#/';
}

export function append(node, children) {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

// node.append(...kids) leaving out null, undefined and false (the DOM's
// own append would write "null").
export function put(node, ...kids) {
  return append(node, kids);
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') node.setAttribute('class', v);
    else if (k === 'dataset') for (const [dk, dv] of Object.entries(v)) node.dataset[dk] = String(dv);
    else if (k.startsWith('on') || k === 'href') throw new Error('refused attribute ' + k);
    else node.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

export function runHref(id) {
  return '#/runs/' + encodeURIComponent(id);
}

// ---- formats ------------------------------------------------------------

export function nsToMs(ns) {
  return typeof ns === 'number' ? ns / 1e6 : null;
}

export function absTime(ms) {
  if (ms === null || ms === undefined) return '';
  const d = new Date(ms);
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
    `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

export function relTime(ms, now = Date.now()) {
  if (ms === null || ms === undefined) return '—';
  const s = Math.round((now - ms) / 1000);
  const a = Math.abs(s);
  let t;
  if (a < 5) return 'just now';
  if (a < 60) t = a + 's';
  else if (a < 3600) t = Math.floor(a / 60) + 'm';
  else if (a < 86400) t = Math.floor(a / 3600) + 'h';
  else if (a < 86400 * 60) t = Math.floor(a / 86400) + 'd';
  else return absTime(ms).slice(0, 10);
  return s >= 0 ? t + ' ago' : 'in ' + t;
}

// A <time> that shows "3m ago" and the absolute time as its title; kept
// fresh by refreshTimes().
export function timeEl(ms) {
  if (ms === null || ms === undefined) return el('span.dim', null, '—');
  return el('time.rel', {title: absTime(ms), dataset: {ms: Math.round(ms)},
                         datetime: new Date(ms).toISOString()}, relTime(ms));
}

export function refreshTimes(root = document) {
  const now = Date.now();
  for (const t of root.querySelectorAll('time.rel')) {
    t.textContent = relTime(Number(t.dataset.ms), now);
  }
}

export function duration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  if (ms < 1) return Math.round(ms * 1000) + ' µs';
  if (ms < 1000) return (ms < 10 ? ms.toFixed(1) : Math.round(ms)) + ' ms';
  const s = ms / 1000;
  if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + ' s';
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${Math.round(s - m * 60)}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

export function usd(v) {
  if (v === null || v === undefined) return '—';
  if (v === 0) return '$0';
  if (v < 0.01) return '$' + v.toPrecision(2);
  return '$' + v.toFixed(v < 10 ? 4 : 2);
}

export function tokens(v) {
  if (v === null || v === undefined) return '—';
  if (v < 1000) return String(v);
  if (v < 1e6) return (v / 1e3).toFixed(v < 1e4 ? 1 : 0) + 'k';
  return (v / 1e6).toFixed(v < 1e7 ? 2 : 1) + 'M';
}

// A budget's value by its name: usd, tokens, wallclock (ms).
export function budgetValue(name, v) {
  if (name === 'usd') return usd(v);
  if (name === 'tokens') return tokens(v);
  if (/wallclock|_ms$/.test(name)) return duration(v);
  return v === null || v === undefined ? '—' : String(v);
}

export function truncate(s, n) {
  s = String(s);
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

// Any JSON value as short text (a preview), or pretty (a view).
export function preview(v, n = 160) {
  if (v === undefined) return '';
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return truncate(s.replace(/\s+/g, ' '), n);
}

export function pretty(v) {
  return typeof v === 'string' ? v : JSON.stringify(v, null, 2);
}

// ---- status --------------------------------------------------------------

export const STATUSES = ['running', 'paused', 'waiting', 'uncertain', 'failed',
                         'completed', 'stopped', 'damaged'];

export function statusEl(status, word, attrs) {
  const s = String(status || 'unknown');
  return el('span.status', Object.assign({dataset: {status: s}}, attrs || {}),
            el('span.dot'), String(word || s));
}

// One budget as a meter: .meter[data-name][data-used][data-limit].
export function meterEl(b) {
  const used = Number(b.used) || 0, limit = Number(b.limit) || 0;
  const frac = limit > 0 ? Math.min(1, used / limit) : 0;
  const bar = el('span.fill');
  bar.style.width = (frac * 100).toFixed(1) + '%';
  const level = frac >= 1 ? 'over' : frac >= 0.8 ? 'high' : 'ok';
  const name = String(b.name).replace(/_ms$/, '');
  const label = `${name} ${budgetValue(b.name, used)} / ${budgetValue(b.name, limit)}`;
  return el('span.meter', {dataset: {name: b.name, used, limit, level}, title: label},
            el('span.track', null, bar), el('span.label', null, label));
}

// ---- toast ---------------------------------------------------------------

let toastTimer = null;

// A message in #toast: kind "ok" (goes away) or "error" (stays until
// clicked or replaced).
export function toast(text, kind = 'ok') {
  const t = document.getElementById('toast');
  if (!t) return;
  clearTimeout(toastTimer);
  t.dataset.kind = kind;
  clear(t).append(el('span.text', null, String(text)),
                  el('button.close', {type: 'button', title: 'Dismiss', 'aria-label': 'Dismiss'}));
  t.hidden = false;
  if (kind !== 'error') toastTimer = setTimeout(() => { t.hidden = true; }, 6000);
}

export function hideToast() {
  const t = document.getElementById('toast');
  if (t) t.hidden = true;
}

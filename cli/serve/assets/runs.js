// runs.js -- the runs page (#/): a filtered, paged table of every run of the
// store (GET /api/runs), its rows patched in place by the stream's "runs"
// events; the filters and the offset live in the URL's hash.

import {get, session} from './api.js';
import {el, clear, runHref, nsToMs, timeEl, statusEl, meterEl, tokens, usd, STATUSES,
        toast} from './ui.js';
import * as live from './live.js';

const LIMIT = 50;
const REFETCH_MS = 2000;
const QUEUE_WORDS = ['queued', 'claimed', 'parked']; // a PostgreSQL queue's words
const COLUMNS = [['run', 'Run'], ['status', 'Status'], ['kind', 'Kind'],
                 ['iteration', 'Iter.'], ['steps', 'Steps'], ['last', 'Last activity'],
                 ['holder', 'Holder'], ['queue', 'Queue'], ['usage', 'Usage'],
                 ['budget', 'Budget']];

export function mount(root, r) {
  const v = new RunsView(root);
  v.update(r);
  return v;
}

class RunsView {
  constructor(root) {
    this.root = root;
    this.params = {status: '', kind: '', q: '', offset: 0};
    this.seq = 0;
    this.rows = new Map(); // run id -> row shown
    this.page = null;
    this.lastFetch = 0;
    this.refetchTimer = null;
    this.qTimer = null;
    this.build();
    this.offs = [live.on('runs', (d) => this.onRuns(d)),
                 live.on('refresh', () => this.load())];
    live.watch(null);
  }

  build() {
    this.status = el('select#runs-filter-status', {'aria-label': 'status',
                     on: {change: () => this.setParams({status: this.status.value, offset: 0})}});
    this.kind = el('select#runs-filter-kind', {'aria-label': 'kind',
                   on: {change: () => this.setParams({kind: this.kind.value, offset: 0})}},
                   el('option', {value: ''}, 'any kind'), el('option', {value: 'loop'}, 'loop'),
                   el('option', {value: 'program'}, 'program'));
    this.q = el('input#runs-filter-q', {type: 'search', placeholder: 'run or loop id…',
                'aria-label': 'search run or loop id', autocomplete: 'off', spellcheck: 'false',
                on: {input: () => this.onQuery()}});
    this.total = el('span#runs-total', null, '…');
    this.totalWord = el('span', null, ' runs');
    this.indexing = el('span.indexing.dim', {hidden: true});
    this.pageText = el('span#runs-page', null, '');
    this.prev = el('button#runs-prev', {type: 'button', title: 'previous page',
                   on: {click: () => this.setParams({offset: Math.max(0, this.params.offset - LIMIT)})}},
                   '‹ Prev');
    this.next = el('button#runs-next', {type: 'button', title: 'next page',
                   on: {click: () => this.setParams({offset: this.params.offset + LIMIT})}},
                   'Next ›');
    // A click anywhere on a row opens its run (the link is in td.run).
    this.tbody = el('tbody', {on: {click: (e) => {
      const tr = e.target.closest('tr[data-run]');
      if (!tr || e.target.closest('a, button') || getSelection().toString()) return;
      location.hash = runHref(tr.dataset.run);
    }}});
    const head = el('tr', null, COLUMNS.map(([c, t]) => el('th.' + c, {scope: 'col'}, t)));
    this.table = el('table#runs-table.grid', null, el('thead', null, head), this.tbody);
    this.empty = el('p.empty', {hidden: true});
    this.root.append(
      el('div.toolbar', null,
         el('h1', null, 'Runs'), el('span.count', null, this.total, this.totalWord),
         el('span.filters', null, this.status, this.kind, this.q), this.indexing,
         el('span.spacer'),
         el('span.pager', null, this.pageText, this.prev, this.next)),
      el('div.table-wrap', null, this.table), this.empty);
  }

  // r: the route (its params from the hash); typing: the search box made
  // it (its text is left as it is).
  update(r, typing = false) {
    const p = r.params || {};
    const before = JSON.stringify(this.params);
    this.params = {status: p.status || '', kind: p.kind || '', q: p.q || '',
                   offset: Math.max(0, parseInt(p.offset, 10) || 0)};
    if (this.page && before !== JSON.stringify(this.params)) this.forget();
    this.kind.value = this.params.kind;
    if (!typing) this.q.value = this.params.q;
    this.setStatusOptions(this.counts || {});
    this.load();
  }

  // The hash says the filters; a new one is a history entry, but typing
  // in the search box only replaces it.
  setParams(change, replace = false) {
    const p = Object.assign({}, this.params, change);
    const q = new URLSearchParams();
    for (const k of ['status', 'kind', 'q']) if (p[k]) q.set(k, p[k]);
    if (p.offset) q.set('offset', String(p.offset));
    const hash = '#/' + (q.toString() ? '?' + q.toString() : '');
    if (replace) {
      history.replaceState(null, '', hash);
      this.update({params: Object.fromEntries(q)}, true);
    } else if (location.hash !== hash) {
      location.hash = hash;
    } else {
      this.load();
    }
  }

  onQuery() {
    clearTimeout(this.qTimer);
    this.qTimer = setTimeout(() => this.setParams({q: this.q.value.trim(), offset: 0}, true), 300);
  }

  // The status select: every status word with its count; the options are
  // made again only when the words change (an open select stays open).
  setStatusOptions(counts) {
    counts = counts || {};
    const all = Object.values(counts).reduce((a, b) => a + b, 0);
    const queue = session.store_kind === 'postgresql' ? QUEUE_WORDS : [];
    const words = STATUSES.concat(Object.keys(counts).filter((s) => !STATUSES.includes(s)),
                                  queue.filter((s) => !(s in counts)));
    if (this.params.status && !words.includes(this.params.status)) words.push(this.params.status);
    const have = [...this.status.options].map((o) => o.value);
    if (have.join('\n') !== ['', ...words].join('\n')) {
      clear(this.status).append(...['', ...words].map((s) => el('option', {value: s})));
    }
    for (const o of this.status.options) {
      const queueWord = queue.includes(o.value) && !(o.value in counts);
      o.textContent = !o.value ? `any status (${all})` :
        queueWord ? `${o.value} (queue)` : `${o.value} (${counts[o.value] || 0})`;
    }
    if (this.status.value !== this.params.status) this.status.value = this.params.status;
  }

  async load() {
    const seq = ++this.seq;
    this.lastFetch = Date.now();
    const p = this.params;
    let page;
    try {
      page = await get('/api/runs', {status: p.status, kind: p.kind, q: p.q, offset: p.offset,
                                      limit: LIMIT});
    } catch (e) {
      if (seq === this.seq && e.status !== 401) toast('Runs: ' + e.message, 'error');
      return;
    }
    if (seq !== this.seq || !this.root.isConnected) return;
    this.render(page);
  }

  render(page) {
    this.page = page;
    this.table.removeAttribute('aria-busy');
    this.counts = page.counts;
    this.setStatusOptions(page.counts);
    this.total.textContent = String(page.total);
    this.totalWord.textContent = page.total === 1 ? ' run' : ' runs';
    const ix = page.indexing;
    this.indexing.hidden = !ix || ix.done >= ix.total;
    if (ix) this.indexing.textContent = `reading the store: ${ix.done} of ${ix.total} runs`;
    const from = page.total ? page.offset + 1 : 0;
    const to = Math.min(page.offset + page.runs.length, page.total);
    this.pageText.textContent = `${from}–${to} of ${page.total}`;
    this.prev.disabled = page.offset <= 0;
    this.next.disabled = page.offset + page.runs.length >= page.total;
    this.rows.clear();
    clear(this.tbody);
    for (const row of page.runs) {
      this.rows.set(row.run, row);
      this.tbody.append(rowEl(row));
    }
    const filtered = this.params.status || this.params.kind || this.params.q;
    this.empty.hidden = page.runs.length > 0;
    this.empty.textContent = filtered ? 'No run matches these filters.' :
      'No runs in this store yet. Start one with: lil run SPEC.yaml';
  }

  // Other filters or another page: the rows shown are not theirs; the
  // table is empty until the new page comes.
  forget() {
    this.page = null;
    this.rows.clear();
    clear(this.tbody);
    this.empty.hidden = true;
    this.pageText.textContent = '…';
    this.table.setAttribute('aria-busy', 'true');
  }

  // A "runs" event: rows on this page are patched now; a run that is new,
  // gone or changed status (the counts, the order) brings a new fetch soon.
  onRuns(doc) {
    let refetch = false;
    for (const row of doc.rows || []) {
      const old = this.rows.get(row.run);
      if (!old) {
        refetch = true;
        continue;
      }
      if (old.status !== row.status) refetch = true;
      if (JSON.stringify(old) === JSON.stringify(row)) continue;
      this.rows.set(row.run, row);
      const tr = this.tbody.querySelector(`tr[data-run="${CSS.escape(row.run)}"]`);
      if (tr) {
        const fresh = rowEl(row);
        fresh.classList.add('flash');
        tr.replaceWith(fresh);
      }
    }
    for (const id of doc.removed || []) {
      refetch = true;
      const tr = this.tbody.querySelector(`tr[data-run="${CSS.escape(id)}"]`);
      if (tr) tr.classList.add('removed');
    }
    const ix = this.page && this.page.indexing;
    if (refetch || (ix && ix.done < ix.total)) this.refetchSoon();
  }

  refetchSoon() {
    if (this.refetchTimer) return;
    const wait = Math.max(0, this.lastFetch + REFETCH_MS - Date.now());
    this.refetchTimer = setTimeout(() => {
      this.refetchTimer = null;
      this.load();
    }, wait);
  }

  unmount() {
    for (const off of this.offs) off();
    clearTimeout(this.refetchTimer);
    clearTimeout(this.qTimer);
    this.seq++;
  }
}

function rowEl(row) {
  const tr = el('tr', {dataset: {run: row.run, status: row.status}});
  const idCell = el('td.run', null,
                    el('a.mono', {href: runHref(row.run), title: row.run}, row.run));
  if (row.loop_id) idCell.append(el('div.sub.mono', {title: 'loop id'}, row.loop_id));
  const status = el('td.status', null, statusEl(row.status, row.word,
                                                row.error ? {title: String(row.error.message || '')} : null));
  if (row.uncertain && !row.holder) status.append(el('span.tag.uncertain', {title: 'effects without an outcome'},
                                      `${row.uncertain} uncertain`));
  if (row.paused) status.append(el('span.tag.paused', {title: pausedTitle(row.paused)},
                                   row.paused.kind === 'cap' ? 'cap' : 'approval'));
  const steps = row.steps || {};
  tr.append(idCell, status,
            el('td.kind', null, row.kind || ''),
            el('td.iteration.num', null, row.iteration === null || row.iteration === undefined ?
               '—' : String(row.iteration)),
            el('td.steps.num', null, String(steps.done || 0),
               steps.failed ? el('span.failed', {title: 'failed steps'}, ` / ${steps.failed} failed`) : null),
            el('td.last', null, timeEl(nsToMs(row.last_ns))),
            el('td.holder.mono', null, holderText(row.holder)),
            el('td.queue', null, queueEl(row.queue)),
            el('td.usage.num', null, usageEl(row.usage)),
            el('td.budget', null, (row.budget || []).map(meterEl)));
  return tr;
}

function pausedTitle(p) {
  if (p.kind === 'cap') return `paused by the ${p.cap || ''} cap`;
  return `waits for approval at ${p.step || ''}: ${p.ask || ''}`;
}

export function holderText(h) {
  if (!h) return '—';
  const pid = h.pid === null || h.pid === undefined ? '?' : (h.pid < 0 ? '?' : String(h.pid));
  return h.host ? `${pid}@${h.host}` : pid;
}

function queueEl(q) {
  if (!q) return el('span.dim', null, '—');
  return el('span', null, el('span.queue-state', {dataset: {state: q.state}}, q.state || ''),
            q.worker ? el('span.sub.mono', {title: 'worker'}, q.worker) : null);
}

function usageEl(u) {
  if (!u || (!u.tokens && !u.usd)) return el('span.dim', null, '—');
  return el('span', {title: `${u.tokens || 0} tokens, $${u.usd || 0}`},
            tokens(u.tokens || 0), el('span.dim', null, ' tok · '), usd(u.usd || 0));
}

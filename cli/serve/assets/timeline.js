// timeline.js -- a run's history as a list (ol#timeline): its events from
// GET /api/runs/{id}/events, paged through "next"/"more", grouped by
// iteration, each one rendered as text.  It marks an effect that started
// and has no outcome (uncertain, or in flight while a process holds the
// run), keeps each iteration's spend and duration for the chart, and
// appends what the stream says is new.  The run page and the crash lab
// both show one.

import {get, runPath} from './api.js';
import {el, put, clear, absTime, nsToMs, duration, usd, tokens, preview, statusEl,
        pretty} from './ui.js';

const PAGE = 500;
const FIRST_LOAD_MAX = 5000; // events read before "load more" is asked for
const PREVIEW_CHARS = 240;
const FOLD_AFTER = 6; // iterations shown whole; more are folded but the last
const KEEP_OPEN = 3;

export class Timeline {
  constructor(runId, opts = {}) {
    this.runId = runId;
    this.onChange = opts.onChange || (() => {});
    this.ol = el('ol#timeline.timeline', {'aria-label': 'timeline'});
    this.moreBtn = el('button.more.ghost', {type: 'button', hidden: true,
                      on: {click: () => this.fetchMore(FIRST_LOAD_MAX)}}, 'Load more events');
    this.status = el('p.timeline-status.dim', null, 'Loading the journal…');
    this.earlierBtn = el('button.more.ghost', {type: 'button', hidden: true,
                         on: {click: () => this.whole()}}, 'Show the earlier iterations');
    this.node = el('div.timeline-wrap', null, this.earlierBtn, this.ol, this.status, this.moreBtn);
    this.tail = 0; // > 0: read only the run's last `tail` iterations first
    this.reset();
  }

  // Read the whole history again, from the first record.
  whole() {
    this.tail = 0;
    this.earlierBtn.hidden = true;
    this.chain = this.chain.then(() => {
      this.reset();
      return this.pages(FIRST_LOAD_MAX);
    }).catch((e) => {
      if (e.status !== 401) this.status.textContent = 'Could not read the events: ' + e.message;
    });
    return this.chain;
  }

  reset() {
    clear(this.ol);
    this.next = 1;
    this.more = true;
    this.lastSeq = 0;
    this.count = 0;
    this.group = null;    // the iteration being filled: {n, li, ol, open}
    this.iters = new Map(); // iteration -> its figures (chart)
    this.pending = new Map(); // effect key -> the li of its start, no outcome yet
    this.process = null;  // the li of the last process_open not yet closed
    this.opens = 0;       // process_open events seen
    this.facts = null;
    this.chain = this.chain || Promise.resolve();
    this.loop = false;
  }

  // Read from the first record, FIRST_LOAD_MAX events at most.
  load() {
    return this.fetchMore(FIRST_LOAD_MAX);
  }

  // What the stream says is new (or a refresh): read on from "next", as
  // long as the whole history before it was read.
  refresh() {
    if (this.count >= FIRST_LOAD_MAX && this.more) return this.chain;
    return this.fetchMore(FIRST_LOAD_MAX);
  }

  fetchMore(max) {
    this.chain = this.chain.then(() => this.pages(max)).catch((e) => {
      if (e.status !== 401) this.status.textContent = 'Could not read the events: ' + e.message;
    });
    return this.chain;
  }

  async pages(max) {
    let read = 0;
    for (;;) {
      const first = this.count === 0 && this.tail > 0;
      const doc = await get(runPath(this.runId, '/events'),
                            {from: this.next, limit: PAGE, iterations: first ? this.tail : ''});
      if (first && doc.iterations_before > 0) {
        this.earlierBtn.hidden = false;
        this.earlierBtn.textContent = `Show the ${doc.iterations_before} earlier iteration` +
          (doc.iterations_before === 1 ? '' : 's');
      }
      const events = doc.events || [];
      this.add(events);
      read += events.length;
      const moved = doc.next && doc.next > this.next;
      if (moved) this.next = doc.next;
      this.more = !!doc.more;
      this.lastSeq = doc.last_seq || this.lastSeq;
      if (!this.more || read >= max || !moved) break;
    }
    this.showStatus();
    this.markPending();
    this.onChange(this);
  }

  showStatus() {
    this.moreBtn.hidden = !this.more;
    if (this.more) {
      this.status.textContent = `Showing records up to ${this.next - 1} of ${this.lastSeq}.`;
    } else {
      this.status.textContent = this.count ? '' : 'No events yet.';
    }
    this.moreBtn.textContent = `Load more events (${this.lastSeq - this.next + 1} records left)`;
  }

  // The facts of the run (GET /api/runs/{id}): whether an effect without
  // an outcome is in flight (held run) or uncertain.
  setFacts(facts) {
    this.facts = facts;
    this.markPending();
  }

  add(events) {
    for (const ev of events) {
      this.count++;
      if (ev.loop || ev.type === 'loop_start') this.loop = true;
      if (ev.type === 'iteration_start') {
        this.startIteration(ev);
        continue;
      }
      const li = renderEvent(ev);
      this.track(ev, li);
      this.parentFor(ev).append(li);
      if (ev.type === 'iteration_end' && this.group) this.endIteration(ev);
    }
  }

  // Where an event goes: the open iteration when it is of it (or names
  // none), else the top list.
  parentFor(ev) {
    const g = this.group;
    if (g && g.open && (ev.iteration === undefined || ev.iteration === null ||
                        ev.iteration === g.n || ev.type === 'process_open')) {
      return g.ol;
    }
    return this.ol;
  }

  startIteration(ev) {
    const n = ev.iteration;
    const fig = {n, startNs: ev.ts_ns, endNs: null, lastNs: ev.ts_ns, usd: 0, tokens: 0,
                 effects: 0, failed: 0, ended: false};
    this.iters.set(n, fig);
    const head = el('div.iter-head', {role: 'button', tabindex: '0',
                    title: 'show or hide this iteration\'s events'});
    const ol = el('ol.iter-events');
    const li = el('li.event.iteration', {dataset: {seq: ev.seq, type: 'iteration_start',
                                                   iteration: n}}, head, ol);
    const toggle = () => li.classList.toggle('collapsed');
    head.addEventListener('click', toggle);
    head.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        toggle();
      }
    });
    if (this.group && this.group.open) this.group.li.classList.add('unfinished');
    this.group = {n, li, ol, head, open: true, fig};
    this.ol.append(li);
    this.drawHead(this.group);
  }

  endIteration(ev) {
    const g = this.group;
    g.fig.endNs = ev.ts_ns;
    g.fig.ended = true;
    g.open = false;
    this.drawHead(g);
    this.fold();
  }

  // Many iterations: the committed ones before the last KEEP_OPEN are
  // folded once (a click opens them), unless something in them needs a
  // look (uncertain, killed, paused, failed).
  fold() {
    const items = this.ol.querySelectorAll(':scope > li.iteration:not(.folded-once)');
    if (this.iters.size <= FOLD_AFTER) return;
    for (let i = 0; i < items.length - KEEP_OPEN; i++) {
      const li = items[i];
      li.classList.add('folded-once');
      if (!li.querySelector('.uncertain, .killed, [data-type=pause], [data-outcome=failed]')) {
        li.classList.add('collapsed');
      }
    }
  }

  drawHead(g) {
    const f = g.fig;
    const endNs = f.ended ? f.endNs : f.lastNs;
    const dur = endNs && f.startNs ? (endNs - f.startNs) / 1e6 : null;
    put(clear(g.head), 
      el('span.caret', {'aria-hidden': 'true'}),
      el('span.iter-name', null, 'Iteration ', el('strong', null, String(f.n))),
      el('time.clock', {title: absTime(nsToMs(f.startNs))}, clock(f.startNs)),
      el('span.iter-figs', null,
         el('span', {title: 'effects'}, `${f.effects} effect${f.effects === 1 ? '' : 's'}`),
         f.failed ? el('span.failed', null, `${f.failed} failed`) : null,
         f.tokens ? el('span', {title: 'tokens'}, tokens(f.tokens) + ' tok') : null,
         f.usd ? el('span', {title: 'USD'}, usd(f.usd)) : null,
         el('span', {title: f.ended ? 'from its start to its commit' : 'so far'},
            duration(dur) + (f.ended ? '' : ' …'))),
      f.ended ? el('span.committed', {title: 'its state is committed'}, 'committed') :
        el('span.iter-open', null, 'open'));
  }

  // Figures for the chart and the marks for effects without an outcome.
  track(ev, li) {
    const fig = ev.iteration !== undefined ? this.iters.get(ev.iteration) : null;
    if (fig && ev.ts_ns) fig.lastNs = Math.max(fig.lastNs || 0, ev.ts_ns);
    if (ev.type === 'effect_start') {
      const key = effectKey(ev);
      const before = this.pending.get(key);
      if (before) markUncertain(before, 'started again before an outcome');
      this.pending.set(key, li);
    } else if (ev.type === 'effect' || ev.type === 'step') {
      const key = effectKey(ev);
      const start = this.pending.get(key);
      if (start) {
        start.classList.add('matched');
        start.classList.remove('in-flight');
        this.pending.delete(key);
      }
      if (fig && ev.type === 'effect') {
        fig.effects++;
        if (ev.outcome === 'failed') fig.failed++;
        if (ev.usage) {
          fig.tokens += Number(ev.usage.tokens) || 0;
          fig.usd += Number(ev.usage.usd) || 0;
        }
      }
    } else if (ev.type === 'recovery') {
      const key = effectKey(ev);
      const start = this.pending.get(key);
      if (start) {
        markUncertain(start, `resolved: ${ev.how || ''}`);
        start.classList.add('resolved');
        this.pending.delete(key);
      }
    } else if (ev.type === 'process_open') {
      if (this.process) markKilled(this.process, true);
      if (this.opens++ > 0) {
        setFlag(li, 'opened again: what is above was replayed from the journal, not run again',
                'replay', 'replay');
      }
      this.process = li;
    } else if (ev.type === 'process_close') {
      if (this.process) unmarkKilled(this.process);
      this.process = null;
    }
    if (this.group && this.group.fig === fig) this.drawHead(this.group);
  }

  // An effect still without an outcome: in flight while a process holds
  // the run, else uncertain (the process that ran it is gone).
  markPending() {
    const held = this.facts && (this.facts.holder || this.facts.in_flight);
    for (const li of this.pending.values()) {
      if (held) {
        li.classList.add('in-flight');
        li.classList.remove('uncertain');
        setFlag(li, 'running now', 'in-flight');
      } else if (this.facts) {
        li.classList.remove('in-flight');
        markUncertain(li, 'started; no outcome journaled');
      }
    }
    // The last process that opened the run and did not close it, while
    // nobody holds the run and it is uncertain: it died mid-effect (a
    // close coming later says otherwise).
    const f = this.facts;
    if (this.process && f && !f.holder && f.status === 'uncertain') markKilled(this.process, false);
    else if (this.process) unmarkKilled(this.process);
  }

  // Per iteration, in order: {n, usd, tokens, ms, ended} for the chart.
  figures() {
    return [...this.iters.values()].sort((a, b) => a.n - b.n).map((f) => {
      const endNs = f.ended ? f.endNs : f.lastNs;
      return {n: f.n, usd: f.usd, tokens: f.tokens, ended: f.ended,
              ms: endNs && f.startNs ? Math.max(0, (endNs - f.startNs) / 1e6) : 0};
    });
  }
}

function effectKey(ev) {
  if (ev.slot !== undefined && ev.slot !== null) return `${ev.iteration}.${ev.slot}`;
  return 'step:' + (ev.step || '');
}

// A line under the event saying what it turned out to be; one per slot
// ('state': uncertain or in flight; 'process': killed; 'replay').
function setFlag(li, text, kind, slot = 'state') {
  let f = li.querySelector(`:scope > .flag[data-slot="${slot}"]`);
  if (!f) {
    f = el('span.flag', {dataset: {slot}});
    li.append(f);
  }
  f.dataset.kind = kind;
  f.textContent = text;
}

function markUncertain(li, text) {
  li.classList.add('uncertain');
  li.classList.remove('in-flight');
  setFlag(li, 'uncertain: ' + text, 'uncertain');
}

// sure: another process opened the run after it without a close between;
// else the facts suggest it (the run uncertain and not held).
function markKilled(li, sure) {
  li.classList.add('killed');
  li.dataset.killed = sure ? 'sure' : 'likely';
  setFlag(li, sure ? 'this process ended without closing the run: it was killed or crashed' :
    'this process is gone without closing the run: killed mid-step?', 'killed', 'process');
}

// A mark the facts suggested, undone (a sure one stays).
function unmarkKilled(li) {
  if (li.dataset.killed !== 'likely') return;
  delete li.dataset.killed;
  li.classList.remove('killed');
  const f = li.querySelector(':scope > .flag[data-slot="process"]');
  if (f) f.remove();
}

function clock(ns) {
  const ms = nsToMs(ns);
  return ms === null ? '' : absTime(ms).slice(11, 23);
}

// ---- one event -----------------------------------------------------------

const LABELS = {
  run_start: 'run start', loop_start: 'loop start', process_open: 'process', process_close:
  'process', step: 'step', effect_start: 'start', effect: 'effect', recovery: 'recovery',
  run_end: 'end', forked: 'forked', iteration_end: 'commit', cap_tripped: 'cap', pause: 'pause',
  approval: 'approval', park: 'park', wake: 'wake', stop: 'stop', stop_cleared: 'stop cleared',
  retried: 'retry', terminated: 'terminated', observer: 'observer', reserve: 'reserve',
  control: 'control', sleep: 'sleep',
};

export function renderEvent(ev) {
  const type = String(ev.type || 'event');
  const li = el('li.event', {dataset: {seq: ev.seq, type}});
  const body = el('div.body');
  const metrics = el('span.metrics');
  (RENDER[type] || renderOther)(ev, body, metrics, li);
  if (metrics.firstChild) (body.querySelector('.line') || body).append(metrics);
  li.append(el('span.seq', {title: 'record ' + ev.seq}, '#' + ev.seq),
            el('time.clock', {title: absTime(nsToMs(ev.ts_ns))}, clock(ev.ts_ns)),
            el('span.type', {dataset: {type}}, LABELS[type] || type), body);
  li.addEventListener('click', (e) => {
    if (e.target.closest('a, button, .preview')) return;
    li.classList.toggle('open');
  });
  return li;
}

function line(...parts) {
  return el('div.line', null, ...parts);
}

function text(cls, v) {
  return v === undefined || v === null || v === '' ? null : el('span.' + cls, null, String(v));
}

function actorReason(ev) {
  return [ev.actor ? el('span.by', null, 'by ', el('span.actor.mono', null, String(ev.actor))) : null,
          ev.reason !== undefined && ev.reason !== null ?
            el('span.reason', null, String(ev.reason)) : null];
}

// A result or reason, truncated; a click shows it whole.
function previewEl(v, cls = '') {
  if (v === undefined || v === null) return null;
  const short = preview(v, PREVIEW_CHARS);
  const whole = pretty(v);
  const p = el('div.preview' + cls, {title: 'click to show it whole'}, short);
  if (whole !== short) {
    p.classList.add('truncated');
    p.addEventListener('click', () => {
      const open = p.classList.toggle('whole');
      p.textContent = open ? whole : short;
    });
  }
  return p;
}

function outcomeEl(ev) {
  if (!ev.outcome) return null;
  return el('span.outcome', {dataset: {outcome: ev.outcome}}, ev.outcome);
}

function effectMetrics(ev, metrics) {
  const u = ev.usage;
  if (ev.retries) metrics.append(el('span.retries', {title: 'retried attempts'}, `↻ ${ev.retries}`));
  if (u && u.tokens) metrics.append(el('span', {title: u.model ? 'model ' + u.model : 'tokens'},
                                       (u.estimated ? '~' : '') + tokens(u.tokens) + ' tok'));
  if (u && u.usd) metrics.append(el('span', {title: 'USD'}, usd(u.usd)));
  if (ev.dur_us !== undefined) metrics.append(el('span.dur', null, duration(ev.dur_us / 1000)));
}

const RENDER = {
  run_start(ev, body) {
    put(body, line('run ', el('span.mono', null, String(ev.run || '')), ' begins'));
  },
  loop_start(ev, body) {
    put(body, line('loop ', el('strong.mono', null, String(ev.loop_id || '')),
                     ev.spec_path ? el('span.dim', null, ' from ') : null, text('mono', ev.spec_path)),
                ev.inputs && Object.keys(ev.inputs).length ?
                  el('div.sub', null, 'inputs ', el('span.mono', null, preview(ev.inputs))) : null);
  },
  process_open(ev, body) {
    put(body, line('process ', el('span.mono', null, String(ev.pid ?? '?')), ' opened the run'));
  },
  process_close(ev, body) {
    put(body, line(el('span.dim', null, 'the process closed the run')));
  },
  effect_start(ev, body) {
    put(body, line(text('kind', ev.kind), ev.step ? el('strong.step', null, String(ev.step)) : null,
                     ev.slot !== undefined ? el('span.dim', null, `slot ${ev.slot}`) : null,
                     el('span.dim', null, 'started')),
                ev.identity !== undefined ? el('div.identity.mono', {title: 'the rendered request'},
                                               String(ev.identity)) : null,
                ev.request !== undefined ? el('div.identity.mono', {title: 'the request'},
                                              String(ev.request)) : null);
  },
  effect(ev, body, metrics) {
    put(body, line(text('kind', ev.kind), el('strong.step', null, String(ev.step ?? '')),
                     outcomeEl(ev),
                     ev.recovered !== undefined ? el('span.tag', {title: 'an assume-done result'},
                                                     'assumed done') : null),
                ev.identity !== undefined ? el('div.identity.mono', null, String(ev.identity)) : null,
                previewEl(ev.outcome === 'failed' ? ev.reason : ev.result,
                          ev.outcome === 'failed' ? '.error' : ''));
    effectMetrics(ev, metrics);
  },
  step(ev, body, metrics) {
    RENDER.effect(ev, body, metrics);
  },
  recovery(ev, body) {
    put(body, line(el('strong', null, String(ev.how || '')),
                     ev.step ? el('span.step', null, String(ev.step)) : null,
                     ev.slot !== undefined ? el('span.dim', null, `iteration ${ev.iteration} slot ${ev.slot}`) : null),
                line(...actorReason(ev)));
  },
  run_end(ev, body) {
    put(body, line(statusEl(ev.status), ev.iteration !== undefined ?
                     el('span.dim', null, `after iteration ${ev.iteration}`) : null),
                previewEl(ev.reason !== undefined ? ev.reason : ev.result,
                          ev.reason !== undefined ? '.error' : ''));
  },
  iteration_end(ev, body) {
    put(body, line(el('span.dim', null, `iteration ${ev.iteration} committed its state`)));
  },
  pause(ev, body) {
    put(body, line(el('strong', null, 'waits for approval'),
                     ev.step ? el('span.step', null, String(ev.step)) : null,
                     text('dim', ev.strategy)),
                ev.ask !== undefined ? el('div.ask', null, String(ev.ask)) : null,
                ev.reason ? el('div.sub.reason', null, String(ev.reason)) : null,
                el('div.sub', null, 'digest ', el('code.digest.mono', null, String(ev.digest || '')),
                   ev.pause_id ? el('span.dim', null, ' · ' + ev.pause_id) : null));
  },
  approval(ev, body, metrics) {
    put(body, line(el('strong', null, 'approved'), text('step', ev.step), text('dim', ev.cap ?
                     'cap ' + ev.cap : ev.kind)),
                line(...actorReason(ev)));
    if (ev.dur_us !== undefined) metrics.append(el('span.dur', {title: 'waited'},
                                                   duration(ev.dur_us / 1000)));
  },
  stop(ev, body) {
    put(body, line(el('strong', null, 'stop requested')), line(...actorReason(ev)));
  },
  stop_cleared(ev, body) {
    put(body, line(el('strong', null, 'stop cleared')), line(...actorReason(ev)));
  },
  retried(ev, body) {
    put(body, line(el('strong', null, `iteration ${ev.iteration ?? ''} run again`),
                     ev.cap ? el('span.dim', null, 'cap ' + ev.cap) : null),
                ev.failure ? el('div.sub.error', null, 'it failed: ', String(ev.failure)) : null,
                line(...actorReason(ev)));
  },
  cap_tripped(ev, body) {
    put(body, line(el('strong', null, `cap ${ev.cap || ''}`), text('dim', ev.action)));
  },
  park(ev, body) {
    put(body, line('parked until ', ev.wake_at_ms ? el('span.mono', null, absTime(ev.wake_at_ms)) : ''));
  },
  wake(ev, body) {
    put(body, line(el('span.dim', null, 'woke up')));
  },
  sleep(ev, body, metrics) {
    put(body, line(text('kind', ev.kind), ev.wake_at_ms ? el('span.dim', null,
                     'until ' + absTime(ev.wake_at_ms)) : null));
    if (ev.dur_us !== undefined) metrics.append(el('span.dur', null, duration(ev.dur_us / 1000)));
  },
  terminated(ev, body) {
    put(body, line(`terminated after iteration ${ev.iteration ?? ''}`));
  },
  observer(ev, body) {
    put(body, line(text('mono', ev.event), text('dim', ev.status)),
                ev.error ? el('div.sub.error', null, String(ev.error)) : null);
  },
  reserve(ev, body) {
    put(body, line(text('step', ev.step), el('span.dim', null,
                     `reserved ${tokens(ev.tokens || 0)} tok, ${usd(ev.usd || 0)}`)));
  },
  forked(ev, body) {
    put(body, line('forked from ', el('span.mono', null, String(ev.source || '')),
                     ev.cut ? el('span.dim', null, ' at ' + preview(ev.cut)) : null),
                line(...actorReason(ev)));
  },
  control(ev, body) {
    put(body, line(text('mono', ev.control)), previewEl(ev.payload));
  },
};

function renderOther(ev, body) {
  const rest = Object.assign({}, ev);
  for (const k of ['seq', 'ts_ns', 'type', 'record', 'loop']) delete rest[k];
  put(body, previewEl(rest));
}

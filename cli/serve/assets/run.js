// run.js -- a run's page (#/runs/<id>): its facts (GET /api/runs/{id}), the
// actions its state allows (stop, approve, recover, resume), its timeline,
// the chart of spend and duration per iteration, its state at any
// iteration and its spec.  The stream watches this run: a "run" event
// reads the new events and the facts again.

import {get, post, runPath, session} from './api.js';
import {el, put, clear, statusEl, timeEl, nsToMs, meterEl, tokens, usd, duration, absTime,
        pretty, preview, toast} from './ui.js';
import {Timeline} from './timeline.js';
import {drawChart} from './chart.js';
import {openAction} from './dialog.js';
import {holderText} from './runs.js';
import * as live from './live.js';

const TAIL_AFTER = 60; // iterations: more, and the timeline shows the last TAIL first
const TAIL = 40;

export function mount(root, r) {
  return new RunView(root, r.id);
}

class RunView {
  constructor(root, id) {
    this.root = root;
    this.id = id;
    this.facts = null;
    this.factsBusy = false;
    this.factsAgain = false;
    this.chartMode = null;
    this.chartFrame = 0;
    this.gone = false;
    this.timeline = new Timeline(id, {onChange: () => this.drawChartSoon()});
    this.build();
    this.offs = [
      live.on('run', (d) => {
        if (d.run === this.id) this.refresh();
      }),
      live.on('runs', (d) => {
        if ((d.rows || []).some((row) => row.run === this.id)) this.loadFacts();
      }),
      live.on('job', (j) => {
        if (j && j.run === this.id) this.refresh();
      }),
      live.on('refresh', () => this.refresh()),
    ];
    live.watch(id);
    this.start();
  }

  async start() {
    await this.loadFacts();
    if (!this.facts) return;
    // A long loop run: its last iterations first, the earlier on demand.
    if (this.facts.kind === 'loop' && this.facts.iteration > TAIL_AFTER) this.timeline.tail = TAIL;
    this.timeline.load();
    if (this.facts.kind === 'loop') {
      this.loadSpec();
      this.stateInput.value = String(Math.max(0, (this.facts.iteration || 0) - 1));
      if (this.facts.iteration > 0) this.showState();
      else this.stateNote.textContent = 'No iteration has committed its state yet.';
    } else {
      this.stateCard.hidden = true;
      this.specCard.hidden = true;
    }
  }

  refresh() {
    this.timeline.refresh();
    this.loadFacts();
  }

  build() {
    this.statusSlot = el('span.status-slot', null, statusEl('unknown', '…', {id: 'run-status'}));
    this.actions = {
      stop: actionButton('action-stop', 'Stop', () => this.stop()),
      approve: actionButton('action-approve', 'Approve', () => this.approve()),
      recover: actionButton('action-recover', 'Recover', () => this.recover()),
      resume: actionButton('action-resume', 'Resume', () => this.resume()),
    };
    this.notice = el('div.notice', {hidden: true});
    this.factsDl = el('dl#run-facts.facts');
    this.chartBox = el('div#chart.chart');
    this.modeBox = el('span.seg');
    this.stateInput = el('input#state-iteration', {type: 'number', min: '0', step: '1',
                         value: '0', 'aria-label': 'iteration'});
    this.stateInput.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') this.showState();
    });
    this.stateView = el('pre#state-view.json', null, '');
    this.stateMeters = el('pre.json.meters', {hidden: true});
    this.stateNote = el('p.dim.small');
    this.stateCard = el('section.card.state', null,
      el('h2', null, 'State'),
      el('div.row', null, el('label', {for: 'state-iteration'}, 'committed by iteration'),
         this.stateInput,
         el('button#state-show', {type: 'button', on: {click: () => this.showState()}}, 'Show')),
      this.stateNote, this.stateView,
      el('details', null, el('summary', null, 'meters'), this.stateMeters));
    this.stateMeters.hidden = false;
    this.specPath = el('span#spec-path.mono');
    this.specMatch = el('span#spec-match.tag');
    this.specView = el('pre#spec-view.spec', null, '');
    this.specCard = el('section.card.spec', null, el('h2', null, 'Spec'),
                       el('div.row.spec-head', null, this.specPath, this.specMatch), this.specView);
    this.root.append(
      el('div.run-head', null,
         el('a.back', {href: '#/', title: 'all runs'}, '← Runs'),
         el('h1', null, el('span#run-id.mono', null, this.id)), this.statusSlot,
         el('span.spacer'),
         el('span.actions', null, Object.values(this.actions))),
      this.notice,
      el('div.top-grid', null,
         el('section.card.facts-card', null, el('h2', null, 'Facts'), this.factsDl),
         el('section.card.chart-card', null,
            el('h2', null, 'Spend and duration per iteration', this.modeBox), this.chartBox)),
      el('div.main-grid', null,
         el('section.card.timeline-card', null, el('h2', null, 'Timeline'), this.timeline.node),
         el('div.side', null, this.stateCard, this.specCard)));
  }

  // ---- facts -------------------------------------------------------------

  async loadFacts() {
    if (this.factsBusy) {
      this.factsAgain = true;
      return;
    }
    this.factsBusy = true;
    try {
      const facts = await get(runPath(this.id));
      if (!this.gone) this.showFacts(facts);
    } catch (e) {
      if (e.status === 404) this.showMissing(e.message);
      else if (e.status !== 401) toast(`Run ${this.id}: ${e.message}`, 'error');
    } finally {
      this.factsBusy = false;
    }
    if (this.factsAgain && !this.gone) {
      this.factsAgain = false;
      this.loadFacts();
    }
  }

  showMissing(msg) {
    clear(this.root).append(el('div.run-head', null, el('a.back', {href: '#/'}, '← Runs'),
                                 el('h1', null, el('span#run-id.mono', null, this.id))),
                            el('p.empty', null, 'No such run here: ', msg));
  }

  showFacts(f) {
    this.facts = f;
    const loop = f.loop || {};
    clear(this.statusSlot).append(statusEl(f.status, f.status, {id: 'run-status'}));
    this.root.dataset.status = f.status || '';
    this.root.dataset.kind = f.kind || '';
    clear(this.factsDl).append(...factRows(f, loop));
    this.showNotice(f, loop);
    this.showActions(f, loop);
    this.timeline.setFacts(f);
    this.stateInput.max = String(Math.max(0, (f.iteration || 0) - 1));
    this.drawChartSoon();
  }

  showNotice(f, loop) {
    const n = clear(this.notice);
    const paused = f.paused || loop.paused;
    const unc = loop.uncertain || (Array.isArray(f.uncertain) && f.uncertain[0]);
    if (paused && !f.ended) {
      n.dataset.kind = 'paused';
      put(n, el('strong', null, paused.kind === 'cap' ? `Paused by the ${paused.cap} cap` :
                  'Waits for approval'),
               paused.step ? el('span', null, ' at ', el('span.mono', null, paused.step)) : null,
               paused.ask ? el('span', null, ': ', paused.ask) : null);
    } else if (f.status === 'uncertain' && unc) {
      n.dataset.kind = 'uncertain';
      put(n, el('strong', null, 'An effect has no outcome: '),
               el('span.mono', null, unc.identity || unc.request || unc.step || ''),
               ' -- recover it (retry, assume it done, or abort).');
    } else if (f.stop_request) {
      n.dataset.kind = 'stopping';
      put(n, el('strong', null, 'Stop requested'), ' ', preview(f.stop_request, 200));
    } else if (f.reason && (f.status === 'failed' || f.status === 'damaged' ||
                            f.status === 'stopped')) {
      n.dataset.kind = f.status;
      put(n, el('strong', null, f.status + ': '), String(f.reason));
    }
    n.hidden = !n.firstChild;
  }

  // Which actions the run's state allows; none when read-only.
  showActions(f, loop) {
    const held = !!f.holder;
    const isLoop = f.kind === 'loop';
    const paused = f.paused || loop.paused;
    const can = {
      stop: isLoop && !f.ended && !f.stop_request &&
        !['completed', 'failed', 'stopped', 'damaged'].includes(f.status),
      approve: isLoop && !f.ended && !!paused,
      recover: f.status === 'uncertain' && !held,
      resume: isLoop && !held && ((!f.ended && ['waiting', 'stopped'].includes(f.status)) ||
                                  f.status === 'failed'),
    };
    for (const [k, b] of Object.entries(this.actions)) {
      b.hidden = session.read_only || !can[k];
      b.disabled = session.read_only || !can[k];
    }
  }

  // ---- actions -----------------------------------------------------------

  act(verb, title, body) {
    return async (args) => {
      try {
        const doc = await post(runPath(this.id, '/' + verb), Object.assign({}, body, args));
        const job = doc && doc.job;
        toast(job ? `${title}: job ${job.id} started (lil ${job.verb || verb}, pid ${job.pid ?? '?'})` :
          `${title}: requested`, 'ok');
        this.loadFacts();
      } catch (e) {
        if (e.status !== 401) toast(`${title} refused: ${e.message}`, 'error');
        throw e;
      }
    };
  }

  stop() {
    openAction({title: `Stop ${this.id}`, confirm: 'Stop',
                about: 'The run stops at its next step boundary; the request is journaled ' +
                       'with your name and reason.',
                onConfirm: this.act('stop', 'Stop')});
  }

  approve() {
    const f = this.facts || {};
    const p = f.paused || (f.loop && f.loop.paused) || {};
    const action = p.kind === 'cap' ? `cap ${p.cap || ''} (${p.action || 'pause'})` +
      (p.detail ? `: ${p.detail}` : '') :
      `${p.step || ''}: ${p.ask !== undefined ? p.ask : p.question || ''}`;
    openAction({title: `Approve ${this.id}`, confirm: 'Approve',
                about: 'The run goes on from this pause, in a child lil process.',
                pending: {action, digest: p.digest || ''},
                onConfirm: this.act('approve', 'Approve', {pause_id: p.id || p.pause_id})});
  }

  recover() {
    const f = this.facts || {};
    const u = (f.loop && f.loop.uncertain) || (Array.isArray(f.uncertain) && f.uncertain[0]) || {};
    openAction({title: `Recover ${this.id}`, confirm: 'Recover', recover: true,
                about: `The effect ${u.identity || u.request || u.step || ''} started and has ` +
                       'no outcome: did it happen?',
                onConfirm: this.act('recover', 'Recover')});
  }

  // A failed run goes on from its failed iteration (retry_failed).
  resume() {
    const failed = this.facts && this.facts.status === 'failed';
    openAction({title: `Resume ${this.id}`, confirm: 'Resume',
                about: failed ? 'The loop runs its failed iteration again and goes on, in a ' +
                                'child lil process.' :
                  'The loop goes on from its journal, in a child lil process.',
                onConfirm: this.act('resume', 'Resume', failed ? {retry_failed: true} : {})});
  }

  // ---- chart, state, spec ------------------------------------------------

  drawChartSoon() {
    if (this.chartFrame) return;
    this.chartFrame = requestAnimationFrame(() => {
      this.chartFrame = 0;
      if (!this.gone) this.drawChart();
    });
  }

  drawChart() {
    const f = this.facts;
    if (!f) return;
    if (f.kind !== 'loop') {
      clear(this.chartBox).append(el('p.dim', null, 'A program run has no iterations.'));
      return;
    }
    const figs = this.timeline.figures();
    const budget = f.budget || (f.loop && f.loop.budget) || null;
    if (!this.chartMode) {
      const anyUsd = figs.some((x) => x.usd > 0) || (budget && budget.usd);
      this.chartMode = anyUsd ? 'usd' : 'tokens';
    }
    const spendable = (m) => figs.some((x) => x[m] > 0) || (budget && budget[m] && budget[m].limit);
    this.modeBox.hidden = !spendable('usd') && !spendable('tokens');
    clear(this.modeBox).append(...['usd', 'tokens'].map((m) =>
      el('button.seg-btn', {type: 'button', 'aria-pressed': String(this.chartMode === m),
                            on: {click: () => {
                              this.chartMode = m;
                              this.drawChart();
                            }}}, m === 'usd' ? 'USD' : 'tokens')));
    clear(this.chartBox).append(drawChart(figs, budget, this.chartMode, (n) => {
      this.stateInput.value = String(n);
      this.showState();
    }));
  }

  async showState() {
    const n = parseInt(this.stateInput.value, 10);
    if (!Number.isFinite(n) || n < 0) {
      this.stateView.textContent = 'Give an iteration: 0 or more.';
      return;
    }
    this.stateNote.textContent = 'Reading…';
    try {
      const doc = await get(runPath(this.id, '/state'), {iteration: n});
      this.stateView.classList.remove('error');
      this.stateView.textContent = pretty(doc.state);
      this.stateMeters.textContent = pretty(doc.meters === undefined ? null : doc.meters);
      this.stateNote.textContent = `the state committed by iteration ${doc.iteration}`;
    } catch (e) {
      if (e.status === 401) return;
      this.stateView.classList.add('error');
      this.stateView.textContent = e.message;
      this.stateNote.textContent = '';
    }
  }

  async loadSpec() {
    const loop = (this.facts && this.facts.loop) || {};
    if (isLabDemo(loop)) {
      this.specPath.textContent = loop.spec_path;
      this.specMatch.textContent = '';
      this.specView.classList.remove('error');
      this.specView.textContent = 'The crash lab\'s demo loop: its spec is the server\'s own ' +
        '(written in the lab\'s private directory), not a file under --spec-root.';
      return;
    }
    try {
      const doc = await get(runPath(this.id, '/spec'));
      this.specPath.textContent = doc.path || '';
      this.specMatch.textContent = doc.matches ? 'matches the run' : 'changed since the run began';
      this.specMatch.dataset.match = doc.matches ? 'yes' : 'no';
      this.specMatch.title = 'sha256 ' + (doc.sha256 || '');
      this.specView.classList.remove('error');
      this.specView.textContent = doc.text || '';
    } catch (e) {
      if (e.status === 401) return;
      this.specMatch.textContent = '';
      this.specView.classList.add('error');
      this.specView.textContent = e.message;
    }
  }

  unmount() {
    this.gone = true;
    for (const off of this.offs) off();
    if (this.chartFrame) cancelAnimationFrame(this.chartFrame);
  }
}

// A run of the crash lab's demo (serve_lab.c: loop id crash-lab, its spec
// demo.yaml in a private lil-lab-* directory): --spec-root does not hold it.
function isLabDemo(loop) {
  return loop.loop === 'crash-lab' && /\/lil-lab-[^/]+\/demo\.yaml$/.test(loop.spec_path || '');
}

function actionButton(id, text, fn) {
  return el('button#' + id + '.action', {type: 'button', hidden: true, disabled: true,
                                         on: {click: fn}}, text);
}

// ---- the facts as a dl ------------------------------------------------------

function fact(name, ...value) {
  return [el('dt', null, name), el('dd', null, ...value)];
}

function factRows(f, loop) {
  const rows = [];
  const add = (name, ...v) => rows.push(...fact(name, ...v));
  add('kind', f.kind || '');
  if (loop.loop) add('loop', el('span.mono', null, loop.loop));
  add('status', statusEl(f.status), f.ended ? el('span.dim', null, ' ended') : null);
  if (f.reason) add('reason', String(f.reason));
  if (f.iteration !== null && f.iteration !== undefined) add('iterations', String(f.iteration));
  const s = f.steps || {};
  add('steps', `${s.done || 0} done`, s.failed ? el('span.failed', null, `, ${s.failed} failed`) : '');
  add('records', `${f.records ?? ''} (last seq ${f.last_seq ?? ''}), ${bytes(f.journal_bytes)}`,
      f.keyed ? el('span.tag', null, 'keyed') : null);
  add('created', timeEl(nsToMs(f.created_ns)));
  add('last activity', timeEl(nsToMs(f.last_ns)));
  add('holder', el('span.mono', null, holderText(f.holder)));
  if (f.in_flight) {
    add('in flight', el('span.mono', null, String(f.in_flight.step || '')),
        el('span.dim', null, ` for ${duration(f.in_flight.elapsed_ms)}`));
  }
  if (f.queue) add('queue', preview(f.queue, 120));
  if (f.wake_at_ms) add('wakes', el('span', {title: absTime(f.wake_at_ms)}, absTime(f.wake_at_ms)));
  if (f.usage) {
    add('usage', `${tokens(f.usage.tokens || 0)} tokens, ${usd(f.usage.usd || 0)}`,
        el('span.dim', null, ` (${f.usage.calls || 0} calls)`));
  }
  const budget = f.budget || loop.budget;
  if (budget) {
    const meters = [['tokens', budget.tokens], ['usd', budget.usd],
                    ['wallclock', budget.wallclock_ms]]
      .filter(([, b]) => b && b.limit !== undefined && b.limit !== null)
      .map(([name, b]) => meterEl({name, used: b.used, limit: b.limit}));
    if (meters.length) add('budget', el('div.meters', null, meters));
  }
  if (loop.spec_path) add('spec', el('span.mono', null, loop.spec_path));
  if (loop.cwd) add('cwd', el('span.mono', null, loop.cwd));
  if (loop.inputs && Object.keys(loop.inputs).length) {
    add('inputs', el('span.mono', null, preview(loop.inputs, 300)));
  }
  return rows;
}

function bytes(n) {
  if (n === undefined || n === null) return '';
  if (n < 1024) return n + ' B';
  if (n < 1048576) return (n / 1024).toFixed(1) + ' KiB';
  return (n / 1048576).toFixed(1) + ' MiB';
}

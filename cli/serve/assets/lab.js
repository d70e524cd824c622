// lab.js -- the crash lab (#/lab): a demo loop of slow shell steps to start,
// SIGKILL mid-step, resume and recover (POST /api/lab/...), the demo's own
// count of what each step started and finished (a step done twice is a
// duplicate: 0 expected), a log of what happened, and the run's timeline
// (the run page's component) so one sees what the journal replayed, the
// effect left uncertain and the recovery.

import {get, post, runPath, session} from './api.js';
import {el, clear, runHref, statusEl, absTime, toast} from './ui.js';
import {Timeline} from './timeline.js';
import * as live from './live.js';

const BUTTONS = [
  ['start', 'Start', 'Start the demo loop (a new run)'],
  ['kill', 'Kill', 'SIGKILL the lil process in the middle of a step'],
  ['resume', 'Resume', 'Run the loop on from its journal'],
  ['recover', 'Recover (retry)', 'Resolve the uncertain effect by running it again, then go on'],
];

export function mount(root) {
  return new LabView(root);
}

// The lab's run is in the store once a step of it has started (the demo's
// side file says so), or once the lab went past running.
function exists(doc) {
  if (!doc.run) return false;
  if ((doc.steps || []).some((s) => s.started > 0)) return true;
  return ['killed', 'uncertain', 'completed'].includes(doc.state);
}

class LabView {
  constructor(root) {
    this.root = root;
    this.doc = null;
    this.timeline = null;
    this.runId = null;
    this.busy = false;
    this.gone = false;
    this.build();
    this.offs = [
      live.on('lab', (d) => this.show(d)),
      live.on('run', (d) => {
        if (this.timeline && d.run === this.runId) this.refreshRun();
      }),
      live.on('job', () => this.load()),
      live.on('refresh', () => this.load()),
    ];
    live.watch(null);
    this.load();
  }

  build() {
    this.buttons = {};
    for (const [verb, text, title] of BUTTONS) {
      this.buttons[verb] = el('button#lab-' + verb, {type: 'button', title, disabled: true,
                              on: {click: () => this.press(verb)}}, text);
    }
    this.buttons.kill.classList.add('danger');
    this.buttons.start.classList.add('primary');
    this.state = el('span#lab-state.lab-state', {dataset: {state: 'idle'}}, 'idle');
    this.runLink = el('a#lab-run.mono', {href: '#/lab'}, '');
    this.runStatus = el('span.status-slot');
    this.stepsBody = el('tbody');
    this.dups = el('span#lab-duplicates.big', null, '0');
    this.kills = el('span#lab-kills.big', null, '0');
    this.log = el('ol#lab-log.log');
    this.timelineBox = el('div.lab-timeline', null, el('p.dim', null,
                          'Start the demo: its timeline shows here.'));
    this.roNote = el('p.notice', {hidden: true, dataset: {kind: 'read-only'}},
                     'This server is read-only: the crash lab is off.');
    this.root.append(
      el('div.lab-head', null, el('h1', null, 'Crash lab'),
         el('p.explain', null,
            'The demo is a loop of shell steps that take a moment each and count, in a side ' +
            'file of their own, every time they start and finish. Kill its process mid-step, ' +
            'resume it, and watch lil replay what the journal holds, leave the interrupted ' +
            'effect uncertain until you recover it, and never run a finished step twice.')),
      this.roNote,
      el('div.lab-controls', null, Object.values(this.buttons),
         el('span.spacer'), el('span.dim', null, 'state '), this.state,
         el('span.dim', null, ' run '), this.runLink, this.runStatus),
      el('div.lab-grid', null,
         el('section.card', null, el('h2', null, 'Steps (counted by the demo)'),
            el('table#lab-steps.grid', null,
               el('thead', null, el('tr', null, el('th', null, 'step'),
                                    el('th.num', null, 'started'), el('th.num', null, 'done'))),
               this.stepsBody)),
         el('section.card.counters', null,
            el('div.counter', null, this.dups, el('span.caption', null, 'duplicates',
               el('span.dim', null, ' (a finished step run again: 0 expected)'))),
            el('div.counter', null, this.kills, el('span.caption', null, 'kills'))),
         el('section.card.log-card', null, el('h2', null, 'What happened'), this.log)),
      el('section.card', null, el('h2', null, 'The run\'s timeline'), this.timelineBox));
  }

  async load() {
    try {
      const doc = await get('/api/lab');
      if (!this.gone) this.show(doc);
    } catch (e) {
      if (e.status !== 401 && !this.gone) {
        this.roNote.hidden = false;
        this.roNote.textContent = 'The crash lab: ' + e.message;
        this.enable(null);
      }
    }
  }

  show(doc) {
    if (this.gone || !doc) return;
    this.doc = doc;
    const st = String(doc.state || 'idle');
    this.state.dataset.state = st;
    this.state.textContent = st;
    this.roNote.hidden = !session.read_only;
    this.enable(st);
    this.showSteps(doc.steps || [], doc.step || null, st);
    this.dups.textContent = String(doc.duplicates || 0);
    this.dups.dataset.bad = doc.duplicates ? 'true' : 'false';
    this.kills.textContent = String(doc.kills || 0);
    this.showLog(doc.log || []);
    this.showRun(exists(doc) ? doc.run : null, doc.run || null);
  }

  enable(st) {
    const ok = {
      start: st === 'idle' || st === 'completed' || st === 'failed',
      kill: st === 'running',
      resume: st === 'killed',
      recover: st === 'uncertain',
    };
    for (const [verb, b] of Object.entries(this.buttons)) {
      b.disabled = this.busy || session.read_only || !ok[verb];
    }
  }

  // The demo runs one iteration: a step done more than once is a duplicate.
  // The step whose start is the side file's last line is marked: in flight
  // while running, the interrupted one once killed.
  showSteps(steps, current, st) {
    clear(this.stepsBody);
    for (const s of steps) {
      const mark = s.name === current ? (st === 'running' ? 'in-flight' : 'interrupted') : null;
      this.stepsBody.append(el('tr', {dataset: {step: s.name, mark,
                                                duplicate: (s.done || 0) > 1 ? 'true' : null}},
                               el('td.name.mono', null, String(s.name)),
                               el('td.started.num', null, String(s.started || 0)),
                               el('td.done.num', null, String(s.done || 0))));
    }
    if (!steps.length) {
      this.stepsBody.append(el('tr.empty', null, el('td', {colspan: '3'}, 'No step ran yet.')));
    }
  }

  showLog(entries) {
    clear(this.log);
    for (const e of entries) {
      const isObj = e && typeof e === 'object';
      const ms = isObj ? (e.ms ?? e.at_ms ?? e.time_ms ?? null) : null;
      const txt = isObj ? (e.text ?? e.message ?? e.what ?? JSON.stringify(e)) : String(e);
      this.log.append(el('li', {dataset: {kind: isObj && e.kind ? e.kind : null}},
                         ms ? el('time.clock', {title: absTime(ms)}, absTime(ms).slice(11, 19)) : null,
                         el('span.text', null, String(txt))));
    }
    this.log.scrollTop = this.log.scrollHeight;
  }

  // named: the lab's run; id: the same once it exists in the store (its
  // timeline and facts are read only then: nothing is asked in vain).
  showRun(id, named) {
    this.runLink.textContent = named || '—';
    this.runLink.setAttribute('href', named ? runHref(named) : '#/lab');
    if (!id) return;
    if (id !== this.runId) {
      this.runId = id;
      this.timeline = new Timeline(id);
      clear(this.timelineBox).append(this.timeline.node);
      this.timeline.load();
      live.watch(id);
    } else {
      this.timeline.refresh();
    }
    this.loadFacts();
  }

  refreshRun() {
    this.timeline.refresh();
    this.loadFacts();
  }

  async loadFacts() {
    const id = this.runId;
    try {
      const f = await get(runPath(id));
      if (this.gone || id !== this.runId) return;
      clear(this.runStatus).append(statusEl(f.status));
      this.timeline.setFacts(f);
    } catch (e) {
      // The run may not exist yet: the lab's document comes first.
    }
  }

  async press(verb) {
    if (this.busy) return;
    this.busy = true;
    this.enable(this.doc ? this.doc.state : null);
    try {
      const doc = await post('/api/lab/' + verb, {});
      if (doc && doc.state) this.show(doc);
      else if (doc && doc.lab) this.show(doc.lab);
    } catch (e) {
      if (e.status !== 401) toast(`Crash lab: ${verb} refused: ${e.message}`, 'error');
    } finally {
      this.busy = false;
    }
    this.load();
  }

  unmount() {
    this.gone = true;
    for (const off of this.offs) off();
  }
}

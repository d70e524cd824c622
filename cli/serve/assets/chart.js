// chart.js -- a run's spend and duration per iteration as SVG, drawn here.
// Two panels: spend (USD or tokens, when the run spent some or has a
// budget for it) and duration, each a bar per iteration on its own scale
// (the duration's bars are rect.bar[data-iteration]), and under a panel
// whose budget is set, a strip of what the run used against that budget
// with the budget as a line (line.budget).  Each bar's title tells its
// figures; a click on one asks for the state it committed.

import {svg, duration, usd, tokens} from './ui.js';

const W = 720;
const LEFT = 64;
const RIGHT = 14;
const BARS_H = 96;
const STRIP_Y = BARS_H + 24;
const STRIP_H = 10;
const TOP = 16;
const GAP = 28;
const BAR_MAX_W = 44;

// figs: [{n, usd, tokens, ms, ended}], budget: the facts' budget ({tokens,
// usd, wallclock_ms}: each null or {limit, used}), mode: 'usd' | 'tokens'.
export function drawChart(figs, budget, mode, onPick) {
  budget = budget || {};
  const spendB = limited(budget[mode]);
  const panels = [];
  if (figs.some((f) => f[mode] > 0) || spendB) panels.push(spendPanel(figs, mode, spendB));
  panels.push(durationPanel(figs, limited(budget.wallclock_ms)));
  let y = TOP;
  const groups = panels.map((p) => {
    const g = svg('g', {transform: `translate(0 ${y})`});
    drawPanel(g, figs, p, onPick);
    y += panelHeight(p) + GAP;
    return g;
  });
  const root = svg('svg', {viewBox: `0 0 ${W} ${y - GAP + 4}`, width: '100%', role: 'img',
                           'aria-label': 'spend and duration per iteration'});
  root.append(...groups);
  return root;
}

function limited(b) {
  return b && typeof b.limit === 'number' && b.limit > 0 ? b : null;
}

function panelHeight(p) {
  return p.budget ? STRIP_Y + STRIP_H + 16 : BARS_H + 16;
}

function spendPanel(figs, mode, budget) {
  const fmt = mode === 'usd' ? usd : (v) => tokens(Math.round(v)) + ' tok';
  const total = figs.reduce((a, f) => a + f[mode], 0);
  return {title: mode === 'usd' ? 'USD per iteration' : 'tokens per iteration',
          cls: 'spend', value: (f) => f[mode], fmt, budget,
          used: budget && typeof budget.used === 'number' ? budget.used : total,
          what: mode === 'usd' ? 'USD' : 'tokens'};
}

function durationPanel(figs, budget) {
  const total = figs.reduce((a, f) => a + f.ms, 0);
  return {title: 'duration per iteration', cls: 'bar', value: (f) => f.ms, fmt: duration,
          budget, used: budget && typeof budget.used === 'number' ? budget.used : total,
          what: 'wallclock'};
}

function drawPanel(g, figs, p, onPick) {
  const plotW = W - LEFT - RIGHT;
  const max = Math.max(0, ...figs.map(p.value));
  const yMax = max > 0 ? max * 1.08 : 1;
  g.append(svg('text', {x: 0, y: -4, class: 'panel-title'}, p.title),
           svg('line', {x1: LEFT, x2: W - RIGHT, y1: BARS_H, y2: BARS_H, class: 'axis'}),
           svg('text', {x: LEFT - 6, y: BARS_H, class: 'tick', 'text-anchor': 'end'}, '0'));
  if (max > 0) g.append(svg('text', {x: LEFT - 6, y: 10, class: 'tick', 'text-anchor': 'end'}, p.fmt(max)));
  if (p.budget) drawStrip(g, p);
  const n = figs.length;
  if (!n) {
    g.append(svg('text', {x: LEFT + plotW / 2, y: BARS_H / 2, class: 'empty',
                          'text-anchor': 'middle'}, 'no iteration yet'));
    return;
  }
  const slot = plotW / n;
  const bw = Math.min(BAR_MAX_W, slot > 4 ? slot * 0.78 : Math.max(0.6, slot));
  figs.forEach((f, i) => {
    const v = p.value(f);
    const h = Math.max(v > 0 ? 1 : 0, (v / yMax) * BARS_H);
    const rect = svg('rect', {x: (LEFT + i * slot + (slot - bw) / 2).toFixed(2),
                              y: (BARS_H - h).toFixed(2), width: bw.toFixed(2),
                              height: h.toFixed(2), class: p.cls,
                              dataset: {iteration: f.n, value: v}},
                     svg('title', null, barTitle(f)));
    if (onPick) rect.addEventListener('click', () => onPick(f.n));
    g.append(rect);
  });
  g.append(svg('text', {x: LEFT + slot / 2, y: BARS_H + 13, class: 'tick', 'text-anchor': 'middle'},
               `#${figs[0].n}`));
  if (n > 1) {
    g.append(svg('text', {x: LEFT + plotW - slot / 2, y: BARS_H + 13, class: 'tick',
                          'text-anchor': 'middle'}, `#${figs[n - 1].n}`));
  }
}

// What the run used of the budget: a track, the part used, the budget as
// a line (the scale stretches past it when the run went over).
function drawStrip(g, p) {
  const plotW = W - LEFT - RIGHT;
  const limit = p.budget.limit;
  const scale = Math.max(limit, p.used) || 1;
  const usedW = Math.max(0, Math.min(1, p.used / scale)) * plotW;
  const lx = LEFT + (limit / scale) * plotW;
  const over = p.used > limit;
  const pct = Math.round((p.used / limit) * 1000) / 10;
  const label = `${p.what}: ${p.fmt(p.used)} used of the ${p.fmt(limit)} budget (${pct}%)`;
  g.append(svg('text', {x: LEFT - 6, y: STRIP_Y + STRIP_H - 1, class: 'tick', 'text-anchor': 'end'},
               'budget'),
           svg('rect', {x: LEFT, y: STRIP_Y, width: plotW, height: STRIP_H, rx: 3, class: 'track'}),
           svg('rect', {x: LEFT, y: STRIP_Y, width: usedW.toFixed(2), height: STRIP_H, rx: 3,
                        class: over ? 'used over' : 'used'}, svg('title', null, label)),
           svg('line', {x1: lx.toFixed(2), x2: lx.toFixed(2), y1: STRIP_Y - 4,
                        y2: STRIP_Y + STRIP_H + 4, class: 'budget', dataset: {limit}},
               svg('title', null, `budget ${p.fmt(limit)}`)),
           svg('text', {x: LEFT, y: STRIP_Y + STRIP_H + 14, class: 'budget-label'}, label));
}

function barTitle(f) {
  const parts = [`iteration ${f.n}`, duration(f.ms) + (f.ended === false ? ' so far' : '')];
  if (f.usd) parts.push(usd(f.usd));
  if (f.tokens) parts.push(tokens(f.tokens) + ' tokens');
  return parts.join(' · ');
}

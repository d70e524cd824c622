// chart.js -- a run's spend and duration per iteration as SVG, drawn here:
// the spend panel (USD or tokens: a bar per iteration, the running total,
// the budget as a line) when the run spent or has a budget for it, and the
// duration panel (a rect.bar per iteration, the time since the first
// iteration began, the wallclock budget as a line).  Each bar's title
// tells its figures.

import {svg, duration, usd, tokens} from './ui.js';

const W = 720;
const LEFT = 64;
const RIGHT = 14;
const PANEL_H = 110;
const GAP = 30;
const TOP = 16;

// figs: [{n, usd, tokens, ms}], budget: the facts' budget (or null), mode:
// 'usd' | 'tokens'; onPick(n) when a bar is clicked.
export function drawChart(figs, budget, mode, onPick) {
  budget = budget || {};
  const spendBudget = budget[mode] && budget[mode].limit ? budget[mode].limit : null;
  const spent = figs.some((f) => f[mode] > 0);
  const panels = [];
  if (spent || spendBudget) panels.push(spendPanel(figs, mode, spendBudget));
  panels.push(durationPanel(figs, budget.wallclock_ms && budget.wallclock_ms.limit ?
                                  budget.wallclock_ms.limit : null));
  const h = TOP + panels.length * (PANEL_H + GAP);
  const root = svg('svg', {viewBox: `0 0 ${W} ${h}`, width: '100%', role: 'img',
                           'aria-label': 'spend and duration per iteration',
                           preserveAspectRatio: 'xMidYMid meet'});
  panels.forEach((p, i) => {
    const g = svg('g', {transform: `translate(0 ${TOP + i * (PANEL_H + GAP)})`});
    drawPanel(g, figs, p, onPick);
    root.append(g);
  });
  return root;
}

function spendPanel(figs, mode, limit) {
  const fmt = mode === 'usd' ? usd : (v) => tokens(Math.round(v)) + ' tok';
  let sum = 0;
  const cum = figs.map((f) => (sum += f[mode]));
  return {title: mode === 'usd' ? 'USD per iteration' : 'tokens per iteration',
          cls: 'spend', value: (f) => f[mode], cum, limit, fmt,
          limitLabel: limit ? `budget ${fmt(limit)}` : null,
          cumLabel: `total ${fmt(sum)}`};
}

function durationPanel(figs, limit) {
  // The time since the first iteration began, at each iteration's end.
  let t = 0;
  const cum = limit ? figs.map((f) => (t += f.ms)) : null;
  return {title: 'duration per iteration', cls: 'bar', value: (f) => f.ms, cum, limit,
          fmt: duration, limitLabel: limit ? `wallclock budget ${duration(limit)}` : null,
          cumLabel: cum ? `total ${duration(t)}` : null};
}

function drawPanel(g, figs, p, onPick) {
  const plotW = W - LEFT - RIGHT;
  const barMax = Math.max(0, ...figs.map(p.value));
  const lineMax = Math.max(0, ...(p.cum || []), p.limit || 0);
  // Bars have their own scale unless the total is drawn on the same axis.
  const yMaxBars = barMax > 0 ? barMax * 1.1 : 1;
  const yMaxLine = lineMax > 0 ? lineMax * 1.08 : 1;
  g.append(svg('text', {x: 0, y: -4, class: 'panel-title'}, p.title),
           svg('line', {x1: LEFT, x2: W - RIGHT, y1: PANEL_H, y2: PANEL_H, class: 'axis'}),
           svg('text', {x: LEFT - 6, y: 10, class: 'tick', 'text-anchor': 'end'},
               barMax > 0 ? p.fmt(barMax) : '0'),
           svg('text', {x: LEFT - 6, y: PANEL_H, class: 'tick', 'text-anchor': 'end'}, '0'));
  const n = figs.length;
  if (!n) {
    g.append(svg('text', {x: LEFT + plotW / 2, y: PANEL_H / 2, class: 'empty',
                          'text-anchor': 'middle'}, 'no iteration yet'));
    return;
  }
  const slot = plotW / n;
  const bw = slot > 4 ? slot * 0.78 : Math.max(0.6, slot);
  figs.forEach((f, i) => {
    const v = p.value(f);
    const h = Math.max(v > 0 ? 1 : 0, (v / yMaxBars) * PANEL_H);
    const rect = svg('rect', {x: (LEFT + i * slot + (slot - bw) / 2).toFixed(2),
                              y: (PANEL_H - h).toFixed(2), width: bw.toFixed(2),
                              height: h.toFixed(2), class: p.cls,
                              dataset: {iteration: f.n, value: v}},
                     svg('title', null, barTitle(f)));
    if (onPick) rect.addEventListener('click', () => onPick(f.n));
    g.append(rect);
  });
  if (p.cum) drawTotal(g, p, slot, yMaxLine);
  g.append(svg('text', {x: LEFT, y: PANEL_H + 14, class: 'tick'}, `#${figs[0].n}`),
           svg('text', {x: W - RIGHT, y: PANEL_H + 14, class: 'tick', 'text-anchor': 'end'},
               `#${figs[n - 1].n}`));
}

function drawTotal(g, p, slot, yMax) {
  const y = (v) => (PANEL_H - (v / yMax) * PANEL_H).toFixed(2);
  const pts = p.cum.map((v, i) => `${(LEFT + (i + 1) * slot).toFixed(2)},${y(v)}`);
  g.append(svg('polyline', {points: `${LEFT},${PANEL_H} ` + pts.join(' '), class: 'total'},
               svg('title', null, p.cumLabel || '')));
  if (p.limit) {
    const ly = y(p.limit);
    const below = Number(ly) < 14;
    g.append(svg('line', {x1: LEFT, x2: W - RIGHT, y1: ly, y2: ly, class: 'budget',
                          dataset: {limit: p.limit}}, svg('title', null, p.limitLabel)),
             svg('text', {x: LEFT + 4, y: Number(ly) + (below ? 12 : -4), class: 'budget-label'},
                 p.limitLabel));
  }
  if (p.cumLabel) {
    g.append(svg('text', {x: W - RIGHT, y: -4, class: 'total-label', 'text-anchor': 'end'},
                 p.cumLabel + ' so far (the line)'));
  }
}

function barTitle(f) {
  const parts = [`iteration ${f.n}`, duration(f.ms) + (f.ended === false ? ' so far' : '')];
  if (f.usd) parts.push(usd(f.usd));
  if (f.tokens) parts.push(tokens(f.tokens) + ' tokens');
  return parts.join(' · ');
}

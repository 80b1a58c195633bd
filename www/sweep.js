// Scaling sweep: the current experiment (A and B patches, workload, HZ, seed) on 2-socket machines of
// growing CPU count — where does contention start to bite? Each point is resized by the engine
// (`sweep_experiment`) and run like the A/B run (Sim 'a' then 'b', ~30 ms slices, cancellable) as one
// engine job; the chart (uPlot, log2 CPU axis) and the table fill in as points finish.
import uPlot from '../vendor/uPlot.esm.js';
import { $, h, clear, setText, fmt, fmtInt, fmtPct } from './dom.js';
import { COLORS } from './charts.js';

export const DEFAULT_CPUS = '64,128,256,512,1024';
export const MAX_CPUS = 4096;
export const MAX_POINTS = 12;
/** Simulated seconds per point unless the user types some: the experiment's, capped here. */
export const POINT_SECONDS_CAP = 0.1;

/** "64, 128,256" -> {cpus: [64, 128, 256], errors: []}: integers, multiples of 4, 4..4096, sorted, unique. */
export function parseCpuList(text) {
  const errors = [];
  const cpus = new Set();
  const parts = String(text ?? '').split(/[\s,;]+/).filter((x) => x !== '');
  if (!parts.length) errors.push('give at least one CPU count, e.g. 64,128,256');
  for (const p of parts) {
    const n = /^\d+$/.test(p) ? Number(p) : NaN;
    if (!Number.isSafeInteger(n)) errors.push(`${JSON.stringify(p.slice(0, 20))} is not a whole number`);
    else if (n < 4 || n > MAX_CPUS) errors.push(`${n}: allowed 4..${MAX_CPUS}`);
    else if (n % 4) errors.push(`${n}: must be a multiple of 4 (2 sockets × cores × 2 SMT threads)`);
    else cpus.add(n);
  }
  if (cpus.size > MAX_POINTS) errors.push(`${cpus.size} points: at most ${MAX_POINTS}`);
  return { cpus: [...cpus].sort((a, b) => a - b), errors };
}

/** Seconds per point: the typed value if any, else the experiment's seconds capped at POINT_SECONDS_CAP. */
export function pointSeconds(expSeconds, typed) {
  const t = String(typed ?? '').trim();
  if (t !== '') return { seconds: Number(t), typed: true };
  const s = Number(expSeconds);
  return { seconds: Number.isFinite(s) && s > 0 ? Math.min(s, POINT_SECONDS_CAP) : POINT_SECONDS_CAP, typed: false };
}

function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

const short = (v) => (v == null ? '' : Math.abs(v) >= 1e6 ? (v / 1e6).toFixed(1) + 'M' : Math.abs(v) >= 1e3 ? (v / 1e3).toFixed(1) + 'k' : +v.toFixed(2) + '');
const pct = (v) => (v == null ? '' : +v.toFixed(1) + '%');

/** The panel: chart + table of the points. Owns no engine state; app.js feeds it. */
export class SweepView {
  constructor() {
    this.el = $('sweep-chart');
    this.cpus = [];
    this.points = []; // per CPU count: null or {cpus, a: {tput, cont, events}, b: {...}}
    this.unit = '';
    this.perCpu = $('sweep-per-cpu').checked;
    this.plot = null;
    this.build();
    this.renderTable();
    new ResizeObserver(() => this.plot?.setSize(this.size())).observe(this.el);
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => this.build());
    $('sweep-per-cpu').addEventListener('change', () => { this.perCpu = $('sweep-per-cpu').checked; this.build(); });
  }

  size() {
    const w = Math.max(260, Math.floor(this.el.clientWidth || 400));
    // narrow screens: taller, so that the rotated axis labels fit beside the plot
    return { width: w, height: w < 560 ? 250 : Math.round(Math.min(260, Math.max(200, w * 0.32))) };
  }

  tpLabel() {
    const u = this.unit ? `${this.unit}/s` : 'throughput/s';
    return this.perCpu ? `${u} per CPU` : u;
  }

  build() {
    this.plot?.destroy();
    const fg = cssVar('--fg', '#222');
    const grid = cssVar('--grid', 'rgba(128,128,128,0.25)');
    const panel = cssVar('--panel', '#fff');
    const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
    const tpName = this.perCpu ? 'throughput/CPU' : 'throughput';
    const line = (side, scale, dashed) => ({
      label: `${side.toUpperCase()} ${scale === 'tp' ? tpName : 'contention'}`,
      scale,
      stroke: COLORS[side],
      width: dashed ? 1.5 : 2,
      dash: dashed ? [6, 4] : undefined,
      spanGaps: true,
      points: { show: true, size: dashed ? 7 : 8, width: 2, stroke: COLORS[side], fill: dashed ? panel : COLORS[side] },
      value: (u, v) => (v == null ? '–' : scale === 'tp' ? short(v) : pct(v)),
    });
    const opts = {
      ...this.size(),
      scales: {
        // log2 CPU axis; padded so that the end points do not sit on the frame
        x: { time: false, distr: 3, log: 2, range: (u, min, max) => (min == null ? [32, 2048] : [min / 1.3, max * 1.3]) },
        tp: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] },
        pct: { range: (u, min, max) => [0, Math.max(5, (max || 0) * 1.1)] },
      },
      cursor: { drag: { x: false, y: false }, points: { size: 9 } },
      legend: { live: true },
      axes: [
        {
          ...axis, label: 'CPUs (2 sockets, log₂ scale)',
          // ticks at the swept CPU counts themselves
          splits: (u, i, min, max) => u.data[0].filter((x) => x >= min && x <= max),
          values: (u, v) => v.map((x) => (x == null ? '' : String(x))),
        },
        { ...axis, scale: 'tp', label: this.tpLabel(), size: 62, values: (u, v) => v.map(short) },
        { ...axis, scale: 'pct', side: 1, label: '% cycles in contention', size: 56, grid: { show: false }, values: (u, v) => v.map(pct) },
      ],
      series: [
        { label: 'CPUs', value: (u, v) => (v == null ? '–' : String(v)) },
        line('a', 'tp', false), line('b', 'tp', false), line('a', 'pct', true), line('b', 'pct', true),
      ],
    };
    this.plot = new uPlot(opts, this.data(), this.el);
    this.mark();
  }

  data() {
    const get = (side, key) => this.points.map((p) => {
      if (!p) return null;
      const v = p[side][key];
      return key === 'tput' && this.perCpu ? v / p.cpus : v;
    });
    return [this.cpus.slice(), get('a', 'tput'), get('b', 'tput'), get('a', 'cont'), get('b', 'cont')];
  }

  /** New sweep: x = the requested CPU counts, no values yet. */
  reset(cpus) {
    this.cpus = cpus.slice();
    this.points = cpus.map(() => null);
    this.running = -1;
    this.halted = '';
    $('sweep-results').hidden = false;
    this.redraw();
  }

  /** The sweep stopped early (cancelled, failed, crashed): unfinished rows say so. */
  halt(why) {
    this.halted = why;
    this.running = -1;
    this.renderTable();
  }

  setUnit(unit) {
    if (unit && unit !== this.unit) { this.unit = unit; this.build(); }
  }

  /** Mark point i as running (table row state). */
  setRunning(i) { this.running = i; this.renderTable(); }

  setPoint(i, point) {
    this.points[i] = point;
    if (this.running === i) this.running = -1;
    this.redraw();
  }

  redraw() {
    this.plot.setData(this.data());
    this.mark();
    this.renderTable();
  }

  /** data-* for tests: x points and non-null values per side. */
  mark() {
    const d = this.plot.data;
    const nn = (arr) => arr.filter((v) => v != null).length;
    this.el.dataset.points = String(d[0].length);
    this.el.dataset.pointsA = String(Math.min(nn(d[1]), nn(d[3])));
    this.el.dataset.pointsB = String(Math.min(nn(d[2]), nn(d[4])));
  }

  renderTable() {
    const unit = this.unit ? ` (${this.unit}/s)` : ' (/s)';
    setText('sweep-th-a', `A${unit}`);
    setText('sweep-th-b', `B${unit}`);
    const tbody = clear($('sweep-table').tBodies[0]);
    this.cpus.forEach((cpus, i) => {
      const p = this.points[i];
      const state = p ? 'done' : i === this.running ? 'running' : this.halted ? 'halted' : 'pending';
      if (!p) {
        const text = { running: 'running…', halted: this.halted, pending: 'waiting' }[state];
        tbody.append(h('tr', { dataset: { cpus: String(cpus), state } },
          h('td', { class: 'num' }, String(cpus)),
          h('td', { colspan: '6', class: 'pending' }, text)));
        return;
      }
      const d = p.a.tput ? ((p.b.tput - p.a.tput) / Math.abs(p.a.tput)) * 100 : null;
      const perCpu = (x) => `${fmt(x / cpus, 2)} per CPU`;
      tbody.append(h('tr', { dataset: { cpus: String(cpus), state } },
        h('td', { class: 'num' }, String(cpus)),
        h('td', { class: 'num', title: perCpu(p.a.tput), dataset: { value: String(p.a.tput) } }, fmt(p.a.tput, 1)),
        h('td', { class: 'num', title: perCpu(p.b.tput), dataset: { value: String(p.b.tput) } }, fmt(p.b.tput, 1)),
        h('td', { class: `num ${d === null || Math.abs(d) < 0.05 ? '' : d > 0 ? 'good' : 'bad'}`.trim() }, fmtPct(d, 1, true)),
        h('td', { class: 'num', dataset: { value: String(p.a.cont) } }, fmtPct(p.a.cont, 2)),
        h('td', { class: 'num', dataset: { value: String(p.b.cont) } }, fmtPct(p.b.cont, 2)),
        h('td', { class: 'num' }, fmtInt(p.a.events + p.b.events))));
    });
    if (!this.cpus.length) tbody.append(h('tr', {}, h('td', { colspan: '7', class: 'pending' }, 'no sweep run yet')));
  }
}

// Scaling sweep: the current experiment (A and B patches, workload, HZ, seed) on 2-socket machines of
// growing CPU count — where does contention start to bite? The engine reads the CPU list
// (`sweep_cpus`: the counts it can simulate), resizes each point (`sweep_experiment`), and makes each
// row from the two reports (`sweep_point`, the CLI's SweepPoint); the page runs A and B of each point
// (~30 ms slices, cancellable) as one engine job. Two charts on one log2 CPU axis (throughput above,
// % cycles in contention below: a line of one never crosses a line of the other) and the table (the
// charts' text alternative) fill in as points finish.
import uPlot from '../vendor/uPlot.esm.js';
import { $, h, clear, setText, fmt, fmtInt, fmtPct, fmtFixed, columnDigits } from './dom.js';
import { COLORS } from './charts.js';
import { niceRange, yAxis } from './axis.js';

/** Simulated seconds per point unless the user types some: the experiment's, capped here. */
export const POINT_SECONDS_CAP = 0.1;

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

const short = (v) => (v == null ? '' : fmt(v, 1));
const pct = (v) => (v == null ? '' : `${fmt(v, 2)}%`);

/** The panel: chart + table of the points. Owns no engine state; app.js feeds it. */
export class SweepView {
  constructor() {
    this.el = $('sweep-chart');
    this.elC = $('sweep-chart-contention');
    this.cpus = [];
    this.points = []; // per CPU count: null or the engine's SweepPoint {cpus, a_throughput, b_throughput, a_contention_pct, b_contention_pct, throughput_pct, events}
    this.unit = '';
    this.perCpu = $('sweep-per-cpu').checked;
    this.plot = null; // throughput
    this.plotC = null; // % cycles in contention
    this.build();
    this.renderTable();
    new ResizeObserver(() => { this.plot?.setSize(this.size()); this.plotC?.setSize(this.size()); }).observe(this.el);
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => this.build());
    $('sweep-per-cpu').addEventListener('change', () => { this.perCpu = $('sweep-per-cpu').checked; this.build(); });
  }

  size() {
    const w = Math.max(260, Math.floor(this.el.clientWidth || 400));
    // narrow screens: taller, so that the rotated axis labels fit beside the plot
    return { width: w, height: w < 560 ? 230 : Math.round(Math.min(220, Math.max(180, w * 0.26))) };
  }

  /** The y label (short, so that it fits beside the plot on a phone); the heading says the rest. */
  tpLabel() {
    return this.unit ? `${this.unit}/s` : 'per s';
  }

  headings() {
    setText('sweep-h-tp', `Throughput${this.perCpu ? ' per CPU' : ''} (${this.tpLabel()})`);
  }

  build() {
    this.plot?.destroy();
    this.plotC?.destroy();
    const fg = cssVar('--fg', '#222');
    const grid = cssVar('--grid', 'rgba(128,128,128,0.25)');
    const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
    const tpName = this.perCpu ? 'throughput/CPU' : 'throughput';
    const line = (side, what, fmtV) => ({
      label: `${side.toUpperCase()} ${what}`,
      stroke: COLORS[side],
      width: 2,
      spanGaps: true,
      points: { show: true, size: 8, width: 2, stroke: COLORS[side], fill: COLORS[side] },
      value: (u, v) => (v == null ? '–' : fmtV(v)),
    });
    const opts = (yLabel, suffix, fromZero, series) => ({
      ...this.size(),
      scales: {
        // log2 CPU axis; padded so that the end points do not sit on the frame
        x: { time: false, distr: 3, log: 2, range: (u, min, max) => (min == null ? [32, 2048] : [min / 1.3, max * 1.3]) },
        y: { range: (u, min, max) => niceRange(min ?? 0, max ?? 1, fromZero) },
      },
      cursor: { drag: { x: false, y: false }, points: { size: 9 }, sync: { key: 'schedplay-sweep' } },
      legend: { live: true },
      axes: [
        {
          ...axis, label: 'CPUs (2 sockets, log₂ scale)',
          // ticks at the swept CPU counts themselves
          splits: (u, i, min, max) => u.data[0].filter((x) => x >= min && x <= max),
          values: (u, v) => v.map((x) => (x == null ? '' : x.toLocaleString('en-US'))),
        },
        yAxis(axis, yLabel, suffix),
      ],
      series: [{ label: 'CPUs', value: (u, v) => (v == null ? '–' : String(v)) }, ...series],
    });
    const d = this.data();
    this.plot = new uPlot(opts(this.tpLabel(), '', true, [line('a', tpName, short), line('b', tpName, short)]), [d[0], d[1], d[2]], this.el);
    this.headings();
    this.plotC = new uPlot(opts('% cycles', '%', true, [line('a', 'contention', pct), line('b', 'contention', pct)]), [d[0], d[3], d[4]], this.elC);
    this.mark();
  }

  data() {
    const get = (key, perCpu) => this.points.map((p) => {
      if (!p) return null;
      return perCpu && this.perCpu ? p[key] / p.cpus : p[key];
    });
    return [this.cpus.slice(), get('a_throughput', true), get('b_throughput', true), get('a_contention_pct'), get('b_contention_pct')];
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
    const d = this.data();
    this.plot.setData([d[0], d[1], d[2]]);
    this.plotC.setData([d[0], d[3], d[4]]);
    this.mark();
    this.renderTable();
  }

  /** data-* for tests: x points and non-null values per side. */
  mark() {
    const d = [...this.plot.data, ...this.plotC.data.slice(1)];
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
    // one format per column: the throughputs with the decimals of the column's largest value
    const tpDigits = columnDigits(this.points.flatMap((p) => (p ? [p.a_throughput, p.b_throughput] : [])));
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
      const d = p.throughput_pct; // the engine's B vs A (Delta::between)
      const perCpu = (x) => `${fmt(x / cpus, 2)} per CPU`;
      tbody.append(h('tr', { dataset: { cpus: String(cpus), state } },
        h('td', { class: 'num' }, fmtInt(cpus)),
        h('td', { class: 'num', title: perCpu(p.a_throughput), dataset: { value: String(p.a_throughput) } }, fmtFixed(p.a_throughput, tpDigits)),
        h('td', { class: 'num', title: perCpu(p.b_throughput), dataset: { value: String(p.b_throughput) } }, fmtFixed(p.b_throughput, tpDigits)),
        h('td', { class: 'num', dataset: { value: String(d) } }, fmtPct(d, 1, true)),
        h('td', { class: 'num', dataset: { value: String(p.a_contention_pct) } }, fmtPct(p.a_contention_pct, 2)),
        h('td', { class: 'num', dataset: { value: String(p.b_contention_pct) } }, fmtPct(p.b_contention_pct, 2)),
        h('td', { class: 'num' }, fmtInt(p.events))));
    });
    if (!this.cpus.length) tbody.append(h('tr', {}, h('td', { colspan: '7', class: 'pending' }, 'no sweep run yet')));
  }
}

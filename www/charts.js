// Live uPlot charts: throughput and contention over simulated time, A and B on each, synced cursors.
// Each chart has a text alternative: a summary table (per side: points, min, mean, max, last, and
// the report's figure) in a <details> under it.
import uPlot from '../vendor/uPlot.esm.js';
import { h, clear, fmt } from './dom.js';
import { niceRange, yAxis } from './axis.js';

export const COLORS = { a: '#2f7ed8', b: '#f28f1c' };

function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

export class Charts {
  constructor() {
    this.data = this.empty();
    this.unit = '';
    this.warmup = 0; // simulated seconds shaded at the start (left out of the figures)
    this.plots = {};
    this.pending = false;
    this.build();
    const ro = new ResizeObserver(() => this.resize());
    ro.observe(document.getElementById('chart-throughput'));
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => this.build());
  }

  empty() {
    return {
      a: { t: [], throughput: [], contention: [] },
      b: { t: [], throughput: [], contention: [] },
    };
  }

  size(el) {
    const w = Math.max(260, Math.floor(el.clientWidth || 400));
    // narrow screens: tall enough that the rotated y label fits beside the plot
    return { width: w, height: w < 560 ? 240 : Math.round(Math.min(220, Math.max(170, w * 0.4))) };
  }

  opts(el, yLabel, fmtY, fromZero, suffix = '') {
    const fg = cssVar('--fg', '#222');
    const grid = cssVar('--grid', 'rgba(128,128,128,0.25)');
    const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
    return {
      ...this.size(el),
      title: undefined,
      scales: { x: { time: false }, y: { range: (u, min, max) => niceRange(min, max, fromZero) } },
      cursor: { sync: { key: 'schedplay', setSeries: true }, drag: { x: true, y: false } },
      legend: { live: true },
      axes: [
        { ...axis, label: 'simulated s', values: (u, v) => v.map((x) => (x == null ? '' : +x.toFixed(3))) },
        yAxis(axis, yLabel, suffix),
      ],
      hooks: { drawClear: [(u) => this.shadeWarmup(u)] },
      series: [
        { label: 't (s)', value: (u, v) => (v == null ? '–' : v.toFixed(3)) },
        { label: 'A', stroke: COLORS.a, width: 2, spanGaps: false, value: (u, v) => (v == null ? '–' : fmtY(v)) },
        { label: 'B', stroke: COLORS.b, width: 2, spanGaps: false, value: (u, v) => (v == null ? '–' : fmtY(v)) },
      ],
    };
  }

  build() {
    for (const p of Object.values(this.plots)) p.destroy();
    const elT = document.getElementById('chart-throughput');
    const elC = document.getElementById('chart-contention');
    this.plots.throughput = new uPlot(this.opts(elT, this.unit || 'throughput', (v) => (v == null ? '' : fmt(v, 1)), false), this.aligned('throughput'), elT);
    this.plots.contention = new uPlot(this.opts(elC, '% cycles', (v) => (v == null ? '' : `${fmt(v, 2)}%`), true, '%'), this.aligned('contention'), elC);
    this.mark();
  }

  /** Shade [0, warm-up) of the x axis: the warm-up is drawn but left out of the figures. */
  shadeWarmup(u) {
    if (!(this.warmup > 0) || !u.data[0].length) return;
    const x0 = u.valToPos(u.scales.x.min, 'x', true);
    const x1 = u.valToPos(Math.min(this.warmup, u.scales.x.max), 'x', true);
    if (!(x1 > x0)) return;
    const ctx = u.ctx;
    ctx.save();
    ctx.fillStyle = cssVar('--warmup', 'rgba(128,128,128,0.18)');
    ctx.fillRect(x0, u.bbox.top, x1 - x0, u.bbox.height);
    ctx.restore();
  }

  setWarmup(seconds) {
    this.warmup = Number(seconds) || 0;
    for (const k of Object.keys(this.plots)) document.getElementById(`chart-${k}`).dataset.warmup = String(this.warmup);
    this.redraw();
  }

  resize() {
    for (const [k, p] of Object.entries(this.plots)) {
      p.setSize(this.size(document.getElementById(`chart-${k}`)));
    }
  }

  setUnit(unit) {
    if (unit && unit !== this.unit) { this.unit = unit; this.build(); }
  }

  reset() {
    this.data = this.empty();
    this.reports = {};
    this.redraw();
  }

  /** Append a progress slice: series = the engine's series by name ({t_s, throughput, contention_pct,
   * utilization, ...} typed arrays); the charts read t_s, throughput and contention_pct. */
  push(side, series) {
    const d = this.data[side];
    if (!series || !series.t_s) return;
    for (let i = 0; i < series.t_s.length; i++) {
      d.t.push(series.t_s[i]);
      d.throughput.push(series.throughput[i]);
      d.contention.push(series.contention_pct[i]);
    }
    this.schedule();
  }

  /** Replace a side with a report's full series (authoritative at the end of a run). */
  setFromReport(side, report) {
    const s = report && report.series;
    if (!s || !s.t_s) return;
    this.data[side] = { t: [...s.t_s], throughput: [...s.throughput], contention: [...s.contention_pct] };
    this.reports = { ...(this.reports || {}), [side]: report };
    this.schedule();
  }

  /** uPlot wants one x array: use the longer side's times, pad the other with nulls. */
  aligned(key) {
    const { a, b } = this.data;
    const x = a.t.length >= b.t.length ? a.t : b.t;
    const pad = (arr) => { const out = arr.slice(0, x.length); while (out.length < x.length) out.push(null); return out; };
    return [x.slice(), pad(a[key]), pad(b[key])];
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => { this.pending = false; this.redraw(); });
  }

  redraw() {
    this.plots.throughput.setData(this.aligned('throughput'));
    this.plots.contention.setData(this.aligned('contention'));
    this.mark();
    this.tables();
  }

  /** The text alternative of each chart: per side its points, min, mean, max and last value, and
   * the report's figure over the measured window (after the warm-up). */
  tables() {
    const spec = {
      throughput: { unit: this.unit || 'per s', digits: 1, figure: (r) => r.throughput_per_sec, suffix: '' },
      contention: { unit: '% cycles', digits: 2, figure: (r) => r.contention_pct, suffix: '%' },
    };
    for (const [key, sp] of Object.entries(spec)) {
      const table = document.getElementById(`table-${key}`);
      if (!table) continue;
      const tbody = clear(table.tBodies[0]);
      const f = (v) => (v == null || !Number.isFinite(v) ? '–' : `${fmt(v, sp.digits)}${sp.suffix}`);
      table.caption.textContent = `${key === 'throughput' ? 'Throughput' : 'Contention'} over simulated time (${sp.unit})`;
      for (const side of ['a', 'b']) {
        const v = this.data[side][key].filter((x) => x != null && Number.isFinite(x));
        const mean = v.length ? v.reduce((x, y) => x + y, 0) / v.length : null;
        const r = this.reports?.[side];
        tbody.append(h('tr', { dataset: { side } },
          h('th', { scope: 'row' }, side.toUpperCase()),
          h('td', { class: 'num' }, v.length.toLocaleString('en-US')),
          h('td', { class: 'num' }, f(v.length ? Math.min(...v) : null)),
          h('td', { class: 'num' }, f(mean)),
          h('td', { class: 'num' }, f(v.length ? Math.max(...v) : null)),
          h('td', { class: 'num' }, f(v.length ? v[v.length - 1] : null)),
          h('td', { class: 'num' }, f(r ? sp.figure(r) : null))));
      }
    }
  }

  mark() {
    for (const [k, p] of Object.entries(this.plots)) {
      const el = document.getElementById(`chart-${k}`);
      el.dataset.points = String(p.data[0].length);
      el.dataset.pointsA = String(p.data[1].filter((v) => v != null).length);
      el.dataset.pointsB = String(p.data[2].filter((v) => v != null).length);
    }
  }
}

// Live uPlot charts: throughput and contention over simulated time, A and B on each, synced cursors.
import uPlot from '../vendor/uPlot.esm.js';

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
    return { width: w, height: Math.round(Math.min(220, Math.max(150, w * 0.4))) };
  }

  opts(el, yLabel, fmtY) {
    const fg = cssVar('--fg', '#222');
    const grid = cssVar('--grid', 'rgba(128,128,128,0.25)');
    const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
    return {
      ...this.size(el),
      title: undefined,
      scales: { x: { time: false } },
      cursor: { sync: { key: 'schedplay', setSeries: true }, drag: { x: true, y: false } },
      legend: { live: true },
      axes: [
        { ...axis, label: 'simulated s', values: (u, v) => v.map((x) => (x == null ? '' : +x.toFixed(3))) },
        { ...axis, label: yLabel, size: 60, values: (u, v) => v.map(fmtY) },
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
    const short = (v) => (v == null ? '' : Math.abs(v) >= 1e6 ? (v / 1e6).toFixed(1) + 'M' : Math.abs(v) >= 1e3 ? (v / 1e3).toFixed(1) + 'k' : +v.toFixed(2) + '');
    const elT = document.getElementById('chart-throughput');
    const elC = document.getElementById('chart-contention');
    this.plots.throughput = new uPlot(this.opts(elT, this.unit || 'throughput', short), this.aligned('throughput'), elT);
    this.plots.contention = new uPlot(this.opts(elC, '% cycles', (v) => (v == null ? '' : +v.toFixed(2) + '%')), this.aligned('contention'), elC);
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

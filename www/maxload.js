// "Max load at a latency bound" (issue 46 item 2): for an open-loop workload (serve, memcached), the
// highest request rate whose latency percentile stays under a bound, as `schedplay maxload` searches
// it. The search's rule is the engine's (`maxload_step`: MaxLoad::next, the CLI's doubling then
// bisection, one probe at a time); this module only runs each probe on the worker pool (A's and B's
// searches and every repeat's at once, each one probe after the other), reads each report back
// through the engine and draws the probes as they arrive: the percentile and p50 against the
// offered rate, the bound as a horizontal line, each side's rate at the bound marked, with the table
// of every probe (the chart's text alternative), progress, time left and Cancel / Esc.
import uPlot from '../vendor/uPlot.esm.js';
import { $, h, clear, setText, enterStarts, fmtFixed, fmtInt } from './dom.js';
import { COLORS } from './charts.js';
import { axisSize } from './axis.js';
import { PROTOCOL } from './engine.js';
import { Eta } from './eta.js';

const { MSG } = PROTOCOL;

/** The workloads with a `rate` knob (open-loop): the only ones a search applies to. */
const openLoop = (w) => (w?.knobs || []).some((k) => k.name === 'rate');
const describe = (e) => (e.errors?.length ? e.errors.map((x) => `${String(x.field)}: ${String(x.message)}`).join('; ') : String(e.message));
const SIDES = ['a', 'b'];

function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

/** "p99", "p99.9" */
const pName = (p) => `p${p}`;

/** The chart and table of one maxload job. Owns no engine state; the panel feeds it. */
class MaxloadView {
  constructor() {
    this.el = $('maxload-chart');
    this.percentile = 99;
    this.bound = 1000;
    this.searches = []; // {side, index, seed, probes: [], line: null, running: rate|null}
    this.halted = '';
    this.plot = null;
    this.build();
    new ResizeObserver(() => this.plot?.setSize(this.size())).observe(this.el);
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => this.build());
  }

  size() {
    const w = Math.max(260, Math.floor(this.el.clientWidth || 400));
    return { width: w, height: w < 560 ? 240 : Math.round(Math.min(280, Math.max(200, w * 0.3))) };
  }

  /** x: every probed rate (ascending); per side the percentile and p50 at each (the mean over the
   * repeats that probed that rate), null where the side did not probe it. */
  data() {
    const xs = [...new Set(this.searches.flatMap((s) => s.probes.map((p) => p.rate)))].sort((a, b) => a - b);
    const at = (side, key) => xs.map((x) => {
      const v = this.searches.filter((s) => s.side === side).flatMap((s) => s.probes.filter((p) => p.rate === x)).map((p) => p[key]);
      return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
    });
    return [xs, at('a', 'at_percentile_us'), at('a', 'p50_us'), at('b', 'at_percentile_us'), at('b', 'p50_us')];
  }

  build() {
    this.plot?.destroy();
    const fg = cssVar('--fg', '#222');
    const grid = cssVar('--grid', 'rgba(128,128,128,0.25)');
    const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
    const color = { a: cssVar('--a', COLORS.a), b: cssVar('--b', COLORS.b) };
    const us = (v) => (v == null ? '–' : `${fmtFixed(v, 1)} µs`);
    const line = (side, what, dash) => ({
      label: `${side.toUpperCase()} ${what}`,
      stroke: color[side],
      width: dash ? 1.5 : 2,
      dash: dash ? [6, 4] : undefined,
      spanGaps: true,
      points: { show: true, size: dash ? 6 : 8, width: 2, stroke: color[side], fill: dash ? 'transparent' : color[side] },
      value: (u, v) => us(v),
    });
    const q = pName(this.percentile);
    this.plot = new uPlot({
      ...this.size(),
      scales: {
        x: { time: false, range: (u, min, max) => { if (min == null) return [0, 1]; const pad = (max - min) * 0.06 || Math.max(1, min * 0.1); return [Math.max(0, min - pad), max + pad]; } },
        // latency past saturation is 10–100× the latency below it: a log scale keeps both readable
        y: { distr: 3, log: 10, range: (u, min, max) => this.yRange(min, max) },
      },
      cursor: { drag: { x: false, y: false }, points: { size: 9 } },
      legend: { live: true },
      axes: [
        { ...axis, label: 'offered rate (requests/s)', values: (u, v) => v.map((x) => (x == null ? '' : x >= 1e6 ? `${+(x / 1e6).toPrecision(3)} M` : x >= 1e3 ? `${+(x / 1e3).toPrecision(3)} k` : String(x))) },
        { ...axis, label: 'latency (µs, log scale)', size: axisSize, values: (u, v) => v.map((x) => (x == null ? '' : x.toLocaleString('en-US'))) },
      ],
      hooks: { draw: [(u) => this.drawMarks(u, fg, color)] },
      series: [
        { label: 'rate', value: (u, v) => (v == null ? '–' : `${fmtInt(v)}/s`) },
        line('a', q, false), line('a', 'p50', true), line('b', q, false), line('b', 'p50', true),
      ],
    }, this.data(), this.el);
    setText('maxload-h', `Latency against the offered rate: ${q} and p50 of A and B, the bound ${q} ≤ ${fmtInt(this.bound)} µs`);
    this.mark();
  }

  /** Decades around the data and the bound, so the bound line is always in view. */
  yRange(min, max) {
    const lo = Math.min(min ?? this.bound, this.bound);
    const hi = Math.max(max ?? this.bound, this.bound);
    return [10 ** Math.floor(Math.log10(Math.max(lo, 0.1))), 10 ** Math.ceil(Math.log10(Math.max(hi, 1) * 1.05))];
  }

  /** The bound (a dashed horizontal line, labelled) and each finished side's rate at the bound (a
   * vertical line in its colour, labelled). */
  drawMarks(u, fg, color) {
    const ctx = u.ctx;
    const dpr = window.devicePixelRatio || 1;
    const { left, top, width, height } = u.bbox;
    ctx.save();
    ctx.font = `${12 * dpr}px system-ui, sans-serif`;
    const y = Math.round(u.valToPos(this.bound, 'y', true));
    if (y >= top && y <= top + height) {
      ctx.strokeStyle = fg;
      ctx.lineWidth = 1.5 * dpr;
      ctx.setLineDash([8 * dpr, 5 * dpr]);
      ctx.beginPath();
      ctx.moveTo(left, y);
      ctx.lineTo(left + width, y);
      ctx.stroke();
      ctx.setLineDash([]);
      const label = `bound: ${pName(this.percentile)} ≤ ${fmtInt(this.bound)} µs`;
      ctx.fillStyle = fg;
      ctx.textAlign = 'left';
      ctx.fillText(label, left + 6 * dpr, y - 5 * dpr);
    }
    if (u.data[0].length) {
      SIDES.forEach((side, k) => {
        const done = this.searches.filter((s) => s.side === side && s.line);
        if (!done.length || done.length < this.searches.filter((s) => s.side === side).length) return;
        const rate = done.reduce((a, s) => a + s.line.rate_at_bound, 0) / done.length;
        if (!(rate > 0)) return;
        const x = Math.round(u.valToPos(rate, 'x', true));
        if (x < left || x > left + width) return;
        ctx.strokeStyle = color[side];
        ctx.lineWidth = 2 * dpr;
        ctx.setLineDash([3 * dpr, 3 * dpr]);
        ctx.beginPath();
        ctx.moveTo(x, top);
        ctx.lineTo(x, top + height);
        ctx.stroke();
        ctx.setLineDash([]);
        const text = `${side.toUpperCase()}: ${fmtInt(Math.round(rate))}/s`;
        const w = ctx.measureText(text).width;
        const roomLeft = w + 12 * dpr < x - left;
        // the label in the page's text colour (the side's colour is on the line beside it), at the
        // top left of the line: latency rises with the rate, so that corner holds no probe
        const toLeft = roomLeft || x + 6 * dpr + w >= left + width;
        const tx = toLeft ? x - 6 * dpr - w : x + 6 * dpr;
        const ty = top + (16 + 16 * k) * dpr;
        ctx.fillStyle = fg;
        ctx.textAlign = 'left';
        ctx.fillText(text, tx, ty);
      });
    }
    ctx.restore();
  }

  reset(percentile, bound, searches) {
    this.percentile = percentile;
    this.bound = bound;
    this.searches = searches;
    this.halted = '';
    $('maxload-results').hidden = false;
    setText('maxload-result', '');
    this.build();
    this.renderTable();
  }

  update() {
    this.plot.setData(this.data());
    this.mark();
    this.renderTable();
  }

  halt(why) { this.halted = why; for (const s of this.searches) s.running = null; this.renderTable(); }

  /** data-* for tests: the rates probed, each side's probes, the bound. */
  mark() {
    const n = (side) => this.searches.filter((s) => s.side === side).reduce((a, s) => a + s.probes.length, 0);
    this.el.dataset.points = String(this.plot?.data[0].length ?? 0);
    this.el.dataset.probesA = String(n('a'));
    this.el.dataset.probesB = String(n('b'));
    this.el.dataset.bound = String(this.bound);
  }

  renderTable() {
    const q = pName(this.percentile);
    setText('maxload-th-q', `${q} µs`);
    setText('maxload-th-under', `${q} ≤ ${fmtInt(this.bound)} µs and kept up`);
    const tbody = clear($('maxload-table').tBodies[0]);
    for (const s of this.searches) {
      const who = `${s.side.toUpperCase()}${this.searches.length > 2 ? ` #${s.index}` : ''}`;
      for (const p of s.probes) {
        tbody.append(h('tr', { dataset: { side: s.side, rate: String(p.rate), under: p.under ? '1' : '0' } },
          h('th', { scope: 'row' }, who),
          h('td', { class: 'num' }, fmtInt(p.rate)),
          h('td', { class: 'num' }, fmtInt(Math.round(p.achieved))),
          h('td', { class: 'num' }, fmtFixed(p.p50_us, 1)),
          h('td', { class: 'num' }, fmtFixed(p.at_percentile_us, 1)),
          h('td', {}, p.under ? 'yes' : 'no')));
      }
      if (s.running != null) {
        tbody.append(h('tr', { dataset: { side: s.side, state: 'running' } }, h('th', { scope: 'row' }, who),
          h('td', { class: 'num' }, fmtInt(s.running)), h('td', { colspan: '4', class: 'pending' }, 'running…')));
      } else if (!s.line && this.halted) {
        tbody.append(h('tr', { dataset: { side: s.side, state: 'halted' } }, h('th', { scope: 'row' }, who), h('td', { colspan: '5', class: 'pending' }, this.halted)));
      }
    }
    if (!this.searches.length) tbody.append(h('tr', {}, h('td', { colspan: '6', class: 'pending' }, 'no search run yet')));
  }
}

/**
 * Wires the panel (once the engine is ready). `current()`: the form's experiment; `stopOthers()`:
 * stops whatever else the page runs.
 */
export function setupMaxload(engine, current, stopOthers) {
  const panel = $('maxload');
  const view = new MaxloadView();
  let token = 0;
  let result = null; // {searches, summary: {a, b}} of the last job, for tests

  const setState = (state, text) => {
    panel.dataset.state = state;
    if (text !== undefined) setText('maxload-progress-label', text);
    $('maxload-cancel').disabled = state !== 'running' && state !== 'preparing';
    $('maxload-run').disabled = !engine.ready;
  };

  /** Shown for an open-loop workload only; the note says what a search runs. */
  function refresh() {
    const exp = current();
    if (!exp) return;
    const w = (engine.presets?.workloads || []).find((x) => x.name === exp.workload?.name);
    panel.hidden = !openLoop(w);
    const n = Math.max(1, Number(exp.repeats) || 1);
    const secs = (x) => String(Number(Number(x).toPrecision(6)));
    setText('maxload-note', `Each probe runs the experiment for its ${secs(exp.seconds)} s with the warm-up at the steady state (auto), A and B each searched${n > 1 ? ` once per seed (${n} repeats: the rate with its 95% interval)` : ' once (repeats above 1 give an interval)'}. The same search and figures as schedplay maxload.`);
    if (!panel.dataset.state) setState('idle');
  }

  async function start() {
    if (!engine.ready) return;
    const exp = current();
    if (!exp) return;
    const my = ++token;
    const percentile = Number($('maxload-percentile').value);
    const boundText = $('maxload-bound').value.trim();
    setText('maxload-error', '');
    $('maxload-bound').removeAttribute('aria-invalid');
    const bound = boundText === '' ? NaN : Number(boundText);
    if (!Number.isFinite(bound)) {
      setText('maxload-error', `bound_us: ${JSON.stringify(boundText.slice(0, 40))} is not a number of µs`);
      $('maxload-bound').setAttribute('aria-invalid', 'true');
      setState('error', 'not run: fix what is named above');
      return;
    }
    setState('preparing', 'planning the search…');
    let plan;
    try {
      plan = (await engine.call(MSG.maxload_plan, { experiment: exp, percentile, bound_us: bound })).plan;
    } catch (e) {
      if (my !== token) return;
      setText('maxload-error', describe(e));
      if ((e.errors || []).some((x) => x.field === 'bound_us')) $('maxload-bound').setAttribute('aria-invalid', 'true');
      setState('error', 'not run: fix what is named above');
      return;
    }
    if (my !== token) return;
    stopOthers();
    const { maxload, seeds } = plan;
    const searches = SIDES.flatMap((side) => seeds.map((seed, index) => ({ side, index, seed, probes: [], line: null, running: null, next: null })));
    const keyOf = (s) => `${s.side}${s.index}p${s.probes.length}`;
    // the time left: every probe made or running, and the ones each search is estimated to need
    // still (the engine's `left`), weighed by the running probe's estimated events
    const work = () => Object.fromEntries(searches.flatMap((s) => {
      const w = s.next?.work ?? searches.find((x) => x.next)?.next?.work ?? 1;
      const made = s.probes.map((p, k) => [`${s.side}${s.index}p${k}`, s.work?.[k] ?? w]);
      const left = s.line ? [] : Array.from({ length: Math.max(1, s.next?.left ?? 1) }, (_, j) => [j ? `${s.side}${s.index}f${s.probes.length + j}` : keyOf(s), w]);
      return [...made, ...left];
    }));
    let eta = null;
    const label = () => {
      const n = (side) => searches.filter((s) => s.side === side).reduce((a, s) => a + s.probes.length, 0);
      const done = searches.filter((s) => s.line).length;
      const left = eta?.text() ?? '';
      if (eta) $('maxload-progress').value = eta.fraction();
      setText('maxload-progress-label', `${done} of ${searches.length} searches · probes A ${n('a')}, B ${n('b')}${left ? ` · ${left}` : ''}`);
    };
    const fail = (text) => {
      if (!engine.isCurrent(job)) return;
      engine.cancelJob(job, 'failed');
      setText('maxload-error', text);
      view.halt('not run: failed');
      setState('error', 'failed');
    };
    const finish = async () => {
      const summary = {};
      for (const side of SIDES) {
        const lines = searches.filter((s) => s.side === side).map((s) => s.line);
        summary[side] = (await engine.call(MSG.maxload_summary, { lines })).summary;
      }
      if (!engine.isCurrent(job)) return;
      engine.finishJob(job);
      eta.finish();
      result = { searches: searches.map((s) => ({ side: s.side, line: s.line })), summary };
      const box = clear($('maxload-result'));
      for (const side of SIDES) box.append(h('div', { dataset: { side, rate: String(summary[side].rate_at_bound.mean) } }, h('strong', {}, `${side.toUpperCase()}: `), summary[side].headline));
      view.update();
      $('maxload-progress').value = 1;
      const probes = searches.reduce((a, s) => a + s.probes.length, 0);
      setState('done', `done: ${searches.length} searches, ${probes} probes`);
    };
    /** One step of search `s`: read `report` (null at the start), then run its next probe or end it. */
    const step = async (s, report) => {
      let st;
      try {
        st = (await engine.call(MSG.maxload_step, { maxload, index: s.index, seed: s.seed, probes: s.probes, report })).step;
      } catch (e) {
        fail(`${s.side.toUpperCase()} search ${s.index}: ${describe(e)}`);
        return;
      }
      if (!engine.isCurrent(job)) return;
      s.probes = st.probes;
      s.next = st.next;
      s.running = st.next ? st.next.rate : null;
      if (st.next) (s.work ??= [])[s.probes.length] = st.next.work ?? 1;
      s.line = st.line;
      const keep = eta;
      eta = new Eta(work(), engine.workers.length, keep?.started);
      if (keep) eta.frac = keep.frac;
      view.update();
      label();
      if (st.next) engine.run(job, st.next.experiment, s.side, keyOf(s));
      else if (searches.every((x) => x.line)) await finish();
    };
    const bySearch = (key) => {
      const m = String(key ?? '').match(/^([ab])(\d+)p(\d+)$/);
      return m ? searches.find((s) => s.side === m[1] && s.index === Number(m[2]) && s.probes.length === Number(m[3])) : null;
    };
    const job = engine.startJob({
      kind: 'maxload',
      progress: (msg) => { if (bySearch(msg.key)) { eta?.set(msg.key, msg.frac); label(); } },
      done: (msg) => {
        const s = bySearch(msg.key);
        if (!s || s.running == null) return;
        eta?.set(msg.key, 1);
        s.running = null;
        step(s, msg.report);
      },
      error: (err, side, key) => {
        const s = bySearch(key);
        setText('maxload-error', `${String(side ?? '').toUpperCase()}${s ? ` at ${fmtInt(s.running)}/s` : ''}: ${describe(err)}`);
        view.halt('not run: failed');
        setState('error', 'failed');
      },
      cancelled: (reason) => {
        if (reason === 'failed') return;
        view.halt('cancelled');
        const probes = searches.reduce((a, s) => a + s.probes.length, 0);
        setState('cancelled', `${reason === 'user' ? 'cancelled' : 'stopped: another run started'} after ${probes} probe${probes === 1 ? '' : 's'}`);
      },
      crashed: () => { view.halt('not run: engine crashed'); setState('error', 'engine crashed'); },
    });
    result = null;
    view.reset(percentile, bound, searches);
    panel.dataset.searches = String(searches.length);
    $('maxload-progress').value = 0;
    setState('running', `0 of ${searches.length} searches`);
    for (const s of searches) step(s, null);
  }

  function cancel() {
    if (panel.dataset.state === 'preparing') { token++; setState('cancelled', 'cancelled'); return; }
    if (engine.job?.kind === 'maxload') engine.cancelJob(engine.job, 'user');
  }

  panel.addEventListener('submit', (ev) => { ev.preventDefault(); start(); });
  enterStarts(panel, start, () => engine.job);
  $('maxload-cancel').addEventListener('click', cancel);
  $('maxload-bound').addEventListener('input', () => { setText('maxload-error', ''); $('maxload-bound').removeAttribute('aria-invalid'); });
  for (const ev of ['input', 'change']) $('scenario').addEventListener(ev, () => queueMicrotask(refresh));
  new MutationObserver(refresh).observe(document.body, { attributes: true, attributeFilter: ['data-state', 'data-ready'] });
  setState('idle');
  refresh();
  (globalThis.schedplay ??= {}).maxload = () => result;
  return { refresh };
}

// The load curve (issue 43 item 4): the form's A/B at steady state over the values of one integer
// workload knob (clients, threads, groups), as `schedplay curve` runs it. The engine plans the runs
// (`curve_plan`: each point's experiment, its repeats' seeds, A and B; the default values, and every
// bad knob or value named) and turns each point's reports into its line (`curve_line`:
// experiment::curve's CurveLine, the CLI's figures to the bit); this module only runs the plan on
// the engine's worker pool as one job (progress, time left, Cancel / Esc) and draws the points as
// they arrive: throughput of A and B against the knob, the watched symbol's share below it on the
// same axis, and the table of every figure (the charts' text alternative). A story's curve (its knob
// and values) comes with the point its report sits at, marked, and where that is, in words.
import uPlot from '../vendor/uPlot.esm.js';
import { $, h, clear, setText, enterStarts, fmtFixed, fmtInt, fmtPct, columnDigits } from './dom.js';
import { COLORS } from './charts.js';
import { niceRange, yAxis, axisSize } from './axis.js';
import { PROTOCOL } from './engine.js';
import { Eta } from './eta.js';
import { SHIPPED_LABEL } from './precomputed.js';

const { MSG } = PROTOCOL;

/** The symbol whose share is drawn when no story names one: the seed-000 storm's. */
const DEFAULT_SYMBOL = 'sched_balance_domains';

/** A story's `where` (a clause) as a sentence of its own. */
const sentence = (t) => String(t).charAt(0).toUpperCase() + String(t).slice(1);
const describe = (e) => (e.errors?.length ? e.errors.map((x) => `${String(x.field)}: ${String(x.message)}`).join('; ') : String(e.message));

function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

/** The charts and the table of one curve. Owns no engine state; the panel feeds it. */
class CurveView {
  constructor() {
    this.el = $('curve-chart');
    this.elS = $('curve-chart-share');
    this.order = []; // point indices in value order
    this.values = []; // per point index
    this.lines = []; // per point index: null or the engine's CurveLine
    this.knob = '';
    this.symbol = DEFAULT_SYMBOL;
    this.unit = '';
    this.reported = null; // the knob value a story's report sits at
    this.running = new Set();
    this.halted = '';
    this.plot = null;
    this.plotS = null;
    this.build();
    new ResizeObserver(() => { this.plot?.setSize(this.size()); this.plotS?.setSize(this.size()); }).observe(this.el);
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => this.build());
  }

  size() {
    const w = Math.max(260, Math.floor(this.el.clientWidth || 400));
    return { width: w, height: w < 560 ? 220 : Math.round(Math.min(220, Math.max(170, w * 0.26))) };
  }

  /** Log₂ x when the values span 4× or more (the default halves to quadruples), else linear. */
  logX() {
    const xs = this.order.map((i) => this.values[i]);
    return xs.length > 1 && xs[0] > 0 && xs[xs.length - 1] / xs[0] >= 4;
  }

  build() {
    this.plot?.destroy();
    this.plotS?.destroy();
    this.widths = new Map();
    const fg = cssVar('--fg', '#222');
    const grid = cssVar('--grid', 'rgba(128,128,128,0.25)');
    const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
    // the theme's A and B (--a, --b: at least 3:1 on the panel in both schemes, as the legend's swatches)
    const color = { a: cssVar('--a', COLORS.a), b: cssVar('--b', COLORS.b) };
    const line = (side, what, fmtV) => ({
      label: `${side.toUpperCase()} ${what}`,
      stroke: color[side],
      width: 2,
      spanGaps: true,
      points: { show: true, size: 8, width: 2, stroke: color[side], fill: color[side] },
      value: (u, v) => (v == null ? '–' : fmtV(v)),
    });
    const log = this.logX();
    const opts = (yLabel, suffix, fromZero, series) => ({
      ...this.size(),
      scales: {
        x: log
          ? { time: false, distr: 3, log: 2, range: (u, min, max) => (min == null ? [1, 2] : [min / 1.25, max * 1.25]) }
          : { time: false, range: (u, min, max) => { if (min == null) return [0, 1]; const pad = (max - min) * 0.08 || Math.max(1, min * 0.1); return [min - pad, max + pad]; } },
        y: { range: (u, min, max) => niceRange(min ?? 0, max ?? 1, fromZero) },
      },
      cursor: { drag: { x: false, y: false }, points: { size: 9 }, sync: { key: 'schedplay-curve' } },
      legend: { live: true },
      axes: [
        {
          ...axis, label: `${this.knob || 'knob'}${log ? ' (log₂ scale)' : ''}`,
          // ticks at the curve's values themselves
          splits: (u, i, min, max) => u.data[0].filter((x) => x >= min && x <= max),
          values: (u, v) => v.map((x) => (x == null ? '' : x.toLocaleString('en-US'))),
        },
        yAxis(axis, yLabel, suffix, { size: (u, values, i) => this.axisWidth(u, values, i) }),
      ],
      hooks: { draw: [(u) => this.markReported(u, fg)] },
      series: [{ label: this.knob || 'knob', value: (u, v) => (v == null ? '–' : v.toLocaleString('en-US')) }, ...series],
    });
    const d = this.data();
    const tp = (v) => fmtFixed(v, 0);
    const pct = (v) => `${fmtFixed(v, 2)}%`;
    this.plot = new uPlot(opts(this.unit ? `${this.unit}/s` : 'per s', '', true, [line('a', 'throughput', tp), line('b', 'throughput', tp)]), [d[0], d[1], d[2]], this.el);
    this.plotS = new uPlot(opts('% cycles', '%', true, [line('a', this.symbol, pct), line('b', this.symbol, pct)]), [d[0], d[3], d[4]], this.elS);
    setText('curve-h-tp', `Throughput of A and B (${this.unit ? `${this.unit}/s` : 'per s'}) by ${this.knob || 'knob'}`);
    setText('curve-h-share', `${this.symbol}: share of non-idle cycles by ${this.knob || 'knob'}`);
    this.mark();
  }

  /** Both charts' y axes as wide as the wider one (each plot reports its own need), so that a
   * knob value sits at the same x in both. */
  axisWidth(u, values, i) {
    const need = axisSize(u, values, i);
    this.widths ??= new Map();
    this.widths.set(u.root.parentElement?.id ?? '', need);
    const widest = Math.max(...this.widths.values());
    // the other chart redraws at the new width once (a setSize on a changed width only)
    for (const p of [this.plot, this.plotS]) {
      if (p && p !== u && p.axes?.[1]?._size !== undefined && p.axes[1]._size < widest) queueMicrotask(() => p.redraw(false, true));
    }
    return widest;
  }

  /** A dashed vertical line at the value a story's report sits at, labelled. */
  markReported(u, fg) {
    if (this.reported == null || !u.data[0].includes(this.reported)) return;
    const x = Math.round(u.valToPos(this.reported, 'x', true));
    const ctx = u.ctx;
    const dpr = window.devicePixelRatio || 1;
    ctx.save();
    ctx.strokeStyle = fg;
    ctx.lineWidth = 1.5 * dpr;
    ctx.setLineDash([5 * dpr, 4 * dpr]);
    ctx.beginPath();
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + u.bbox.height);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = fg;
    ctx.font = `${12 * dpr}px system-ui, sans-serif`;
    const text = 'the report';
    const w = ctx.measureText(text).width;
    // the label on the side with room
    const right = x + 6 * dpr + w < u.bbox.left + u.bbox.width;
    ctx.textAlign = right ? 'left' : 'right';
    ctx.fillText(text, right ? x + 6 * dpr : x - 6 * dpr, u.bbox.top + 14 * dpr);
    ctx.restore();
  }

  data() {
    const xs = this.order.map((i) => this.values[i]);
    const get = (side, key) => this.order.map((i) => (this.lines[i] ? this.lines[i][side][key] : null));
    return [xs, get('a', 'throughput'), get('b', 'throughput'), get('a', 'symbol_pct'), get('b', 'symbol_pct')];
  }

  /** A new curve: x = its values (in value order), no points yet. */
  reset(curve, reported, unit) {
    this.knob = curve.knob;
    this.symbol = curve.symbol || DEFAULT_SYMBOL;
    this.values = curve.values.slice();
    this.order = this.values.map((_, i) => i).sort((x, y) => this.values[x] - this.values[y]);
    this.lines = this.values.map(() => null);
    this.reported = reported;
    this.unit = unit || '';
    this.running = new Set();
    this.halted = '';
    $('curve-results').hidden = false;
    this.build();
    this.renderTable();
  }

  setUnit(unit) { if (unit && unit !== this.unit) { this.unit = unit; this.build(); } }

  setRunning(i, on) { if (on) this.running.add(i); else this.running.delete(i); this.renderTable(); }

  setLine(i, line) {
    this.lines[i] = line;
    this.running.delete(i);
    const d = this.data();
    this.plot.setData([d[0], d[1], d[2]]);
    this.plotS.setData([d[0], d[3], d[4]]);
    this.mark();
    this.renderTable();
  }

  /** The curve stopped early (cancelled, failed, crashed): unfinished rows say so. */
  halt(why) { this.halted = why; this.running.clear(); this.renderTable(); }

  /** data-* for tests: x points and the points each side has. */
  mark() {
    const nn = (arr) => arr.filter((v) => v != null).length;
    const d = this.data();
    this.el.dataset.points = String(d[0].length);
    this.el.dataset.pointsA = String(Math.min(nn(d[1]), nn(d[3])));
    this.el.dataset.pointsB = String(Math.min(nn(d[2]), nn(d[4])));
  }

  renderTable() {
    setText('curve-th-knob', this.knob || 'knob');
    setText('curve-th-tp', `throughput A / B${this.unit ? ` (${this.unit}/s)` : ' (/s)'}`);
    setText('curve-th-sym', `${this.symbol} A → B`);
    const tbody = clear($('curve-table').tBodies[0]);
    const done = this.lines.filter(Boolean);
    const tpDigits = columnDigits(done.flatMap((l) => [l.a.throughput, l.b.throughput]));
    const pair = (l, key, f) => `${f(l.a[key])} / ${f(l.b[key])}`;
    for (const i of this.order) {
      const v = this.values[i];
      const l = this.lines[i];
      const reported = v === this.reported;
      const state = l ? 'done' : this.running.has(i) ? 'running' : this.halted ? 'halted' : 'pending';
      const head = h('th', { scope: 'row', class: 'num' }, fmtInt(v), reported ? h('span', { class: 'curve-reported' }, ' ◀ the report') : null);
      const attrs = { dataset: { value: String(v), state, ...(reported ? { reported: '1' } : {}) }, class: reported ? 'reported' : undefined };
      if (!l) {
        const text = { running: 'running…', halted: this.halted, pending: 'waiting' }[state];
        tbody.append(h('tr', attrs, head, h('td', { colspan: '7', class: 'pending' }, text)));
        continue;
      }
      const gain = `${fmtPct(l.gain_pct, 2, true)}${l.gain_ci95 ? ` [${fmtFixed(l.gain_ci95[0], 1, true)}, ${fmtFixed(l.gain_ci95[1], 1, true)}]` : ''}`;
      tbody.append(h('tr', attrs, head,
        h('td', { class: 'num', dataset: { a: String(l.a.throughput), b: String(l.b.throughput) } }, pair(l, 'throughput', (x) => fmtFixed(x, tpDigits))),
        h('td', { class: 'num', dataset: { value: String(l.gain_pct) } }, gain),
        h('td', { class: 'num', dataset: { a: String(l.a.symbol_pct), b: String(l.b.symbol_pct) } }, `${fmtFixed(l.a.symbol_pct, 2)}% → ${fmtFixed(l.b.symbol_pct, 2)}%`),
        h('td', { class: 'num' }, pair(l, 'idle_pct', (x) => fmtFixed(x, 1))),
        h('td', { class: 'num' }, pair(l, 'idle_entries_per_cpu_s', fmtInt)),
        h('td', { class: 'num' }, pair(l, 'softirqs_per_tick', (x) => fmtFixed(x, 2))),
        h('td', { class: 'num' }, pair(l, 'cmpxchg_per_s', fmtInt))));
    }
    if (!this.order.length) tbody.append(h('tr', {}, h('td', { colspan: '8', class: 'pending' }, 'no curve run yet')));
  }
}

/**
 * Wires the panel (once the engine is ready). `current()`: the form's experiment; `storyOf()`: the
 * story whose own experiment the form is, or null; `stopOthers()`: stops whatever else the page runs.
 */
export function setupCurve(engine, current, storyOf, stopOthers) {
  const panel = $('curve');
  const view = new CurveView();
  let token = 0; // a newer start or a cancel makes an older plan call stale
  let lines = [];

  const setState = (state, text) => {
    panel.dataset.state = state;
    if (text !== undefined) setText('curve-progress-label', text);
    $('curve-cancel').disabled = state !== 'running' && state !== 'preparing';
    $('curve-run').disabled = !engine.ready;
  };

  /** The knob list (the workload's integer knobs), the story's curve and the note. */
  function refresh() {
    const exp = current();
    if (!exp) return;
    const story = storyOf();
    const w = (engine.presets?.workloads || []).find((x) => x.name === exp.workload?.name);
    const ints = (w?.knobs || []).filter((k) => k.kind === 'int');
    const sel = $('curve-knob');
    const keep = sel.value;
    const want = story?.curve?.knob;
    const names = ints.map((k) => k.name).join('\u0000');
    if (sel.dataset.names !== names) {
      clear(sel);
      for (const k of ints) sel.append(h('option', { value: k.name, title: k.description || '' }, k.name));
      sel.dataset.names = names;
      sel.value = ints.some((k) => k.name === keep) ? keep : want ?? ints[0]?.name ?? '';
    }
    if (story && sel.dataset.story !== story.name && want && ints.some((k) => k.name === want)) sel.value = want;
    sel.dataset.story = story?.name ?? '';
    const storyCurve = story?.curve && story.curve.knob === sel.value ? story.curve : null;
    $('curve-values').placeholder = storyCurve
      ? storyCurve.values.join(', ')
      : 'empty: ½×, 1×, 2×, 4× the current value';
    const where = $('curve-where');
    where.hidden = !storyCurve;
    clear(where);
    if (storyCurve) {
      where.append(h('strong', {}, `${story.title || story.name}: `),
        `its report sits at ${storyCurve.knob} = ${fmtInt(storyCurve.reported)} (marked). ${sentence(storyCurve.where)}.`);
    }
    const n = Math.max(1, Number(exp.repeats) || 1);
    const secs = (x) => String(Number(Number(x).toPrecision(6)));
    setText('curve-note', `Each point runs A and B${n > 1 ? `, ${n} seeds each,` : ''} for the experiment's ${secs(exp.seconds)} s with its ${secs(exp.warmup ?? 0)} s warm-up left out (the steady state${storyCurve ? ', as the story runs' : ''}): ` +
      `${storyCurve ? `the story's ${storyCurve.values.length} values unless you type others` : 'the values typed, or half to four times the knob\'s value'}. ` +
      `Share is of non-idle cycles; f is SCHED_SOFTIRQs raised per tick. The same figures as schedplay curve.`);
    setState(panel.dataset.state || 'idle');
  }

  async function start() {
    if (!engine.ready) return;
    const exp = current();
    if (!exp) return;
    const my = ++token;
    const story = storyOf();
    const knob = $('curve-knob').value;
    const storyCurve = story?.curve && story.curve.knob === knob ? story.curve : null;
    let values = $('curve-values').value.trim();
    if (!values && storyCurve) values = storyCurve.values.join(', ');
    const symbol = story?.symbol || DEFAULT_SYMBOL;
    setText('curve-error', '');
    $('curve-values').removeAttribute('aria-invalid');
    setState('preparing', 'planning the curve…');
    let plan;
    try {
      plan = (await engine.call(MSG.curve_plan, { experiment: exp, knob, values, symbol })).plan;
    } catch (e) {
      if (my !== token) return;
      setText('curve-error', describe(e));
      if ((e.errors || []).some((x) => x.field === 'values')) $('curve-values').setAttribute('aria-invalid', 'true');
      setState('error', 'not run: fix what is named above');
      return;
    }
    if (my !== token) return;
    stopOthers(); // only once the curve can run: a refused one leaves a running job alone
    delete panel.dataset.shipped;
    const { curve, points } = plan;
    const N = points.reduce((acc, p) => acc + p.runs.length, 0);
    const reports = points.map((p) => new Array(p.runs.length));
    const got = points.map(() => 0);
    let runsDone = 0;
    let pointsDone = 0;
    lines = points.map(() => null);
    // keyed as the runs are started below, each weighed by its estimated events
    const eta = new Eta(Object.fromEntries(points.flatMap((p) => p.runs.map((r, k) => [`c${p.index}r${k}`, r.work]))), engine.workers.length);
    const label = () => {
      $('curve-progress').value = eta.fraction();
      const left = eta.text();
      setText('curve-progress-label', `${pointsDone} of ${points.length} points (${runsDone} of ${N} runs)${left ? ` · ${left}` : ''}`);
    };
    const keyOf = (msg) => String(msg.key ?? '').match(/^c(\d+)r(\d+)$/);
    const job = engine.startJob({
      kind: 'curve',
      progress: (msg) => {
        const m = keyOf(msg);
        if (!m) return;
        eta.set(msg.key, msg.frac);
        if (!view.running.has(Number(m[1])) && !lines[Number(m[1])]) view.setRunning(Number(m[1]), true);
        label();
      },
      done: async (msg) => {
        const m = keyOf(msg);
        if (!m) return;
        const [i, k] = [Number(m[1]), Number(m[2])];
        if (!reports[i] || reports[i][k]) return;
        reports[i][k] = msg.report;
        eta.set(msg.key, 1);
        runsDone++;
        if (msg.side === 'a') view.setUnit(msg.report.throughput_unit || '');
        label();
        if (++got[i] < reports[i].length) return;
        let line;
        try {
          line = (await engine.call(MSG.curve_line, { curve, index: i, reports: reports[i] })).line;
        } catch (e) {
          if (!engine.isCurrent(job)) return;
          engine.cancelJob(job, 'failed');
          setText('curve-error', `${curve.knob} = ${curve.values[i]}: ${describe(e)}`);
          view.halt('not run: failed');
          setState('error', 'failed');
          return;
        }
        if (!engine.isCurrent(job)) return; // cancelled, replaced or crashed meanwhile
        lines[i] = line;
        pointsDone++;
        view.setLine(i, line);
        label();
        if (pointsDone < points.length) return;
        engine.finishJob(job);
        eta.finish();
        $('curve-progress').value = 1;
        setState('done', `done: ${points.length} point${points.length === 1 ? '' : 's'}, ${N} runs`);
      },
      error: (err, side, key) => {
        const m = String(key ?? '').match(/^c(\d+)/);
        const at = m ? `${curve.knob} = ${curve.values[Number(m[1])]}, ` : '';
        setText('curve-error', `${at}run ${String(side ?? '').toUpperCase()}: ${describe(err)}`);
        view.halt('not run: failed');
        setState('error', `failed after ${pointsDone} of ${points.length} points`);
      },
      cancelled: (reason) => {
        if (reason === 'failed') return;
        view.halt('cancelled');
        setState('cancelled', `${reason === 'user' ? 'cancelled' : 'stopped: another run started'} after ${pointsDone} of ${points.length} points`);
      },
      crashed: () => { view.halt('not run: engine crashed'); setState('error', `engine crashed after ${pointsDone} of ${points.length} points`); },
    });
    view.reset(curve, storyCurve ? storyCurve.reported : null, '');
    panel.dataset.points = String(points.length);
    panel.dataset.runs = String(N);
    $('curve-progress').value = 0;
    setState('running', `0 of ${points.length} points (0 of ${N} runs)`);
    // point by point: the pool takes the first point's runs first, so points arrive in order
    for (const p of points) p.runs.forEach((r, k) => engine.run(job, r.experiment, r.side, `c${p.index}r${k}`));
  }

  function cancel() {
    if (panel.dataset.state === 'preparing') { token++; setState('cancelled', 'cancelled'); return; }
    if (engine.job?.kind === 'curve') engine.cancelJob(engine.job, 'user');
  }

  panel.addEventListener('submit', (ev) => { ev.preventDefault(); start(); });
  enterStarts(panel, start, () => engine.job);
  $('curve-cancel').addEventListener('click', cancel);
  $('curve-knob').addEventListener('change', () => { setText('curve-error', ''); refresh(); });
  $('curve-values').addEventListener('input', () => { setText('curve-error', ''); $('curve-values').removeAttribute('aria-invalid'); });
  // the knobs and the story follow the form: its edits, and a link or story loaded into it
  for (const ev of ['input', 'change']) $('scenario').addEventListener(ev, () => queueMicrotask(refresh));
  new MutationObserver(refresh).observe(document.body, { attributes: true, attributeFilter: ['data-state', 'data-ready'] });
  panel.addEventListener('focusin', refresh);
  /** A story's curve shipped with the page (www/precomputed.js: `curve`, `reported`, `points` with
   * each point's engine line), drawn at once and labelled; Run recomputes it. */
  function showShipped(shipped, unit) {
    if (engine.job?.kind === 'curve') return;
    token++;
    view.reset(shipped.curve, shipped.reported, unit);
    lines = shipped.points.map((p) => p.line);
    lines.forEach((l, i) => view.setLine(i, l));
    panel.dataset.points = String(lines.length);
    panel.dataset.shipped = '1';
    $('curve-progress').value = 1;
    setState('done', `${lines.length} points ${SHIPPED_LABEL}`);
  }

  /** The form changed (or a run started): a shipped curve leaves the panel. */
  function dropShipped() {
    if (panel.dataset.shipped !== '1') return;
    delete panel.dataset.shipped;
    lines = [];
    view.reset({ knob: view.knob, values: [], symbol: view.symbol }, null, view.unit);
    $('curve-results').hidden = true;
    $('curve-progress').value = 0;
    setState('idle', '');
  }

  setState('idle');
  refresh();
  (globalThis.schedplay ??= {}).curve = () => lines;
  return { refresh, showShipped, dropShipped };
}

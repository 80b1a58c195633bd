// "How sure is this?" (issue 32 item 4): the form's experiment screened one at a time over the
// plausible range of every assumed figure (src/assumptions), as `schedplay sensitivity` does. The
// engine plans the runs (`sensitivity_plan`: 2k+1 points, A and B per seed) and makes the bands and
// the tornados from their reports (`sensitivity_summary`, the CLI's `--json`), so no figure is
// computed here; the page only runs the plan on the engine's worker pool as one job (progress n of
// N runs, Cancel / Esc stop it: queued runs are dropped, running ones cancelled) and draws the
// tornado of the chosen figure (CSS bars) with its table (the chart's text alternative).
import { $, h, clear, setText, enterStarts, fmtFixed } from './dom.js';
import { PROTOCOL } from './engine.js';
import { Eta, storedRate } from './eta.js';

const { MSG } = PROTOCOL;

/** Simulated seconds per run unless the user types some, while this browser's speed is not yet
 * measured (no job finished): the experiment's, capped here (the screen has 2k+1 points, each A and
 * B per seed: 98 runs for one seed). */
export const HOWSURE_SECONDS_CAP = 0.05;
/** Once the speed is measured, the wall time a screen may take when no seconds are typed: the
 * experiment's own seconds when the screen fits in it, else the longest runs that fit. */
export const HOWSURE_BUDGET_S = 120;

// the panel's own names for the fields it sets
const FIELD = { seconds: 'seconds per run', repeats: 'seeds', assume: 'assume (the link\'s assume.NAME keys)' };
const describe = (e) => (e.errors?.length ? e.errors.map((x) => `${FIELD[x.field] ?? String(x.field)}: ${String(x.message)}`).join('; ') : String(e.message));
const secs = (x) => String(Number(Number(x).toPrecision(6)));
const value = (key, x) => (key === 'throughput_pct' ? `${fmtFixed(x, 2, true)}%` : `${fmtFixed(x, 2)}%`);

/**
 * Seconds per run: the typed value if any; else the experiment's own, or, when the screen would
 * take longer than HOWSURE_BUDGET_S at this browser's measured speed (eta.js), the longest runs that
 * fit (at least 0.01 s); before any speed is measured, the experiment's capped at HOWSURE_SECONDS_CAP.
 * `cost`: {runs, eventsPerSec (the experiment's estimated events per simulated second), workers}.
 */
function runSeconds(expSeconds, typed, cost) {
  const t = String(typed ?? '').trim();
  if (t !== '') return { seconds: Number(t), typed: true, by: 'typed' };
  const s = Number(expSeconds);
  if (!(Number.isFinite(s) && s > 0)) return { seconds: HOWSURE_SECONDS_CAP, typed: false, by: 'cap' };
  const rate = storedRate();
  if (rate && cost?.eventsPerSec > 0 && cost.runs > 0) {
    // wall ms = runs × seconds × events/s × ms/event ÷ workers
    const fit = (HOWSURE_BUDGET_S * 1000 * Math.max(1, cost.workers)) / (cost.runs * cost.eventsPerSec * rate);
    if (fit >= s) return { seconds: s, typed: false, by: 'fits' };
    return { seconds: Math.max(0.01, Number(fit.toPrecision(2))), typed: false, by: 'speed' };
  }
  return { seconds: Math.min(s, HOWSURE_SECONDS_CAP), typed: false, by: 'cap' };
}

/**
 * Wires the panel (once the engine is ready). `current()`: the form's experiment; `stopOthers()`:
 * stops whatever the page runs (an A/B run, a sweep still preparing) before the screen starts;
 * `eventsPerSec()`: the form's experiment's estimated events per simulated second (sizes the runs
 * to the speed), or null.
 */
export function setupHowsure(engine, current, stopOthers, cards = () => null, eventsPerSec = () => null) {
  const panel = $('howsure');
  let summary = null; // the engine's Summary of the last finished screen
  let ranges = [];
  let token = 0; // a newer start or a cancel makes an older plan call stale
  let screened = null; // {seconds, warmup} the screen ran against the experiment's

  // what a screen of `runs` runs of `exp` costs: the engine's event estimate per simulated second
  const costOf = (runs) => ({ runs, eventsPerSec: Number(eventsPerSec()), workers: engine.workers?.length ?? 1 });

  const setState = (state, text) => {
    panel.dataset.state = state;
    if (text !== undefined) setText('howsure-progress-label', text);
    $('howsure-cancel').disabled = state !== 'running' && state !== 'preparing';
    $('howsure-run').disabled = false; // set up once the engine is ready; a click while it restarts does nothing
  };

  const note = () => {
    const exp = current();
    if (!exp) return;
    const n = Math.max(1, Math.floor(Number($('howsure-seeds').value)) || 1);
    const k = engine.presets?.assumptions?.length ?? 0;
    const runs = (2 * k + 1) * 2 * n;
    const { seconds, by } = runSeconds(exp.seconds, $('howsure-seconds').value, costOf(runs));
    const why = {
      typed: '',
      fits: ` (the experiment's own: the screen fits about ${HOWSURE_BUDGET_S / 60} min at this browser's measured speed)`,
      speed: ` (the experiment's ${secs(exp.seconds)} s, shortened so that the screen takes about ${HOWSURE_BUDGET_S / 60} min at this browser's measured speed; the band is then of another figure than the cards', said with it; type more for a closer screen)`,
      cap: ` (the experiment's ${secs(exp.seconds)} s, capped at ${HOWSURE_SECONDS_CAP} s until a first run has measured this browser's speed; type more for a closer screen)`,
    }[by];
    const set = Object.entries(exp.assume || {}).map(([name, v]) => `${name} = ${v}`);
    setText('howsure-note', `${runs} runs: ${2 * k + 1} points (the table's values, then ${k} assumptions at each end) × A and B × ${n} seed${n === 1 ? '' : 's'}, ` +
      `${secs(seconds)} s simulated each${why}.` +
      (set.length ? ` This experiment sets assumptions (${set.join(', ')}, from its link): the screen varies them itself and starts from the table's values, so remove them from the link to screen it.` : ''));
  };

  async function start() {
    if (!engine.ready) return;
    const exp = current();
    if (!exp) return;
    const my = ++token;
    const repeats = Math.floor(Number($('howsure-seeds').value));
    const k = engine.presets?.assumptions?.length ?? 0;
    const { seconds } = runSeconds(exp.seconds, $('howsure-seconds').value, costOf((2 * k + 1) * 2 * Math.max(1, repeats || 1)));
    setText('howsure-error', '');
    setState('preparing', 'planning the screen…');
    // the experiment's warm-up where it fits the screen's runs; else none (the start-up is in the
    // figure, and the result says so)
    const w = Number(exp.warmup) || 0;
    const warmup = w > 0 && w <= seconds - 0.001 ? w : 0;
    screened = { seconds, warmup, expSeconds: Number(exp.seconds), expWarmup: w };
    const base = { ...exp, seconds, repeats, warmup };
    let plan;
    try {
      plan = (await engine.call(MSG.sensitivity_plan, { experiment: base })).plan;
    } catch (e) {
      if (my !== token) return;
      setText('howsure-error', describe(e));
      setState('error', 'not run: fix the fields named above');
      return;
    }
    if (my !== token) return;
    stopOthers(); // only once the screen can run: a refused one leaves a running A/B run alone
    ranges = plan.ranges;
    const N = plan.runs.length;
    const reports = new Array(N);
    let done = 0;
    // keyed as the runs are started below, each weighed by its estimated events
    const eta = new Eta(Object.fromEntries(plan.runs.map((r, i) => [`${r.side}${i}`, r.work])), engine.workers.length);
    const label = () => {
      $('howsure-progress').value = eta.fraction();
      const left = eta.text();
      setText('howsure-progress-label', `${done} of ${N} runs${left ? ` · ${left}` : ''}`);
    };
    const job = engine.startJob({
      kind: 'howsure',
      progress: (msg) => { eta.set(msg.key, msg.frac); label(); },
      done: async (msg) => {
        const i = Number(String(msg.key).slice(1));
        if (reports[i]) return;
        reports[i] = msg.report;
        eta.set(msg.key, 1);
        done++;
        label();
        if (done < N) return;
        eta.finish();
        let s;
        try {
          s = (await engine.call(MSG.sensitivity_summary, { experiment: base, reports })).summary;
        } catch (e) {
          if (!engine.isCurrent(job)) return;
          engine.finishJob(job);
          setText('howsure-error', describe(e));
          setState('error', 'failed');
          return;
        }
        if (!engine.isCurrent(job)) return;
        engine.finishJob(job);
        summary = s;
        render();
        setState('done', `${N} of ${N} runs · done`);
      },
      error: (err, side, key) => {
        setText('howsure-error', `run ${String(key ?? side ?? '')}: ${describe(err)}`);
        setState('error', `failed after ${done} of ${N} runs`);
      },
      cancelled: (reason) => setState('cancelled', `${reason === 'user' ? 'cancelled' : 'stopped: another run started'} after ${done} of ${N} runs`),
      crashed: () => setState('error', `engine crashed after ${done} of ${N} runs`),
    });
    $('howsure-progress').value = 0;
    setState('running', `0 of ${N} runs`);
    panel.dataset.runs = String(N);
    plan.runs.forEach((r, i) => engine.run(job, r.experiment, r.side, `${r.side}${i}`));
  }

  function cancel() {
    if (panel.dataset.state === 'preparing') { token++; setState('cancelled', 'cancelled'); return; }
    if (engine.job?.kind === 'howsure') engine.cancelJob(engine.job, 'user');
  }

  /** The bands, the figure chooser, and the chosen figure's tornado and table. */
  function render() {
    const s = summary;
    $('howsure-results').hidden = false;
    const seeds = s.seeds.join(', ');
    setText('howsure-about', `${s.machine}, ${s.workload}; A: ${s.a_patches.join(', ') || '(none)'}, B: ${s.b_patches.join(', ') || '(none)'}. ` +
      `One at a time over ${ranges.length} assumptions (${s.points} points), ${secs(s.sim_seconds)} s simulated per run, seed${s.seeds.length === 1 ? '' : 's'} ${seeds}. ` +
      `The band is the envelope of single changes; two ends together may move a figure further. ` +
      `With ${s.seeds.length === 1 ? 'one seed' : `${s.seeds.length} seeds`} at ${secs(s.sim_seconds)} s, a swing below the run-to-run noise (the form's repeats show it) is noise, not sensitivity.`);
    // a screen of shorter runs (or without the warm-up) bands another figure than the cards': said,
    // with the cards' figure beside the screen's own
    const other = screened && (screened.seconds !== screened.expSeconds || screened.warmup !== screened.expWarmup);
    const c = cards();
    const differ = $('howsure-differs');
    differ.hidden = !other;
    differ.textContent = other
      ? `This band is of a different figure than the cards': runs of ${secs(screened.seconds)} s with ${screened.warmup > 0 ? `a ${secs(screened.warmup)} s warm-up` : 'no warm-up (the start-up is in it)'}, against the experiment's ${secs(screened.expSeconds)} s with ${screened.expWarmup > 0 ? `a ${secs(screened.expWarmup)} s warm-up` : 'no warm-up'}. ` +
        (c ? 'Each figure below is this screen\'s, with the cards\' beside it.' : 'Run the A/B to set the cards\' figures beside these.') +
        ' Type the experiment\'s seconds into "seconds per run" to screen the cards\' figure itself.'
      : '';
    const bands = clear($('howsure-bands'));
    for (const hl of s.headlines) {
      const card = other && c && Number.isFinite(c[hl.key]) ? c[hl.key] : null;
      bands.append(h('div', { class: 'band', dataset: { key: hl.key } },
        h('span', { class: 'band-label' }, hl.label),
        h('strong', {}, value(hl.key, hl.base)),
        h('span', { class: 'band-range' }, ` band ${value(hl.key, hl.band[0])} … ${value(hl.key, hl.band[1])}`),
        card !== null ? h('span', { class: 'band-card', dataset: { testid: `howsure-card-${hl.key}` } }, ` · the cards (${secs(screened.expSeconds)} s): ${value(hl.key, card)}`) : null));
    }
    const sel = $('howsure-figure');
    const keep = sel.value;
    clear(sel);
    for (const hl of s.headlines) sel.append(h('option', { value: hl.key, selected: hl.key === keep }, hl.label));
    drawTornado();
  }

  function drawTornado() {
    if (!summary) return;
    const hl = summary.headlines.find((x) => x.key === $('howsure-figure').value) ?? summary.headlines[0];
    const byName = new Map(ranges.map((r) => [r.name, r]));
    const lo = Math.min(hl.band[0], hl.base);
    const hi = Math.max(hl.band[1], hl.base);
    const pad = (hi - lo) * 0.05 || Math.max(Math.abs(hl.base) * 0.01, 0.01);
    const [x0, x1] = [lo - pad, hi + pad];
    const at = (x) => ((x - x0) / (x1 - x0)) * 100;
    const chart = clear($('howsure-tornado'));
    chart.setAttribute('aria-label', `Tornado of ${hl.label}: each assumption's low and high end around ${value(hl.key, hl.base)}`);
    // positions through the CSSOM: the CSP (style-src 'self') refuses style attributes
    const place = (el, left, width) => { el.style.left = `${left.toFixed(3)}%`; if (width !== undefined) el.style.width = `${width.toFixed(3)}%`; return el; };
    // the axis: its two ends, and below them the base figure over its line
    chart.append(h('div', { class: 'tornado-axis', 'aria-hidden': 'true' }, h('span'),
      h('span', { class: 'tornado-scale' },
        h('span', { class: 'end lo' }, value(hl.key, x0)),
        place(h('span', { class: 'at-base' }, value(hl.key, hl.base)), Math.min(85, Math.max(15, at(hl.base)))),
        h('span', { class: 'end hi' }, value(hl.key, x1)))));
    const seg = (from, to, cls) => {
      if (from === to) return null; // this end does not move the figure
      const [a, b] = [Math.min(from, to), Math.max(from, to)];
      return place(h('span', { class: `seg ${cls}` }), at(a), Math.max(0.4, at(b) - at(a)));
    };
    for (const b of hl.tornado) {
      const r = byName.get(b.assumption);
      chart.append(h('div', { class: 'tornado-row', dataset: { assumption: b.assumption, swing: String(b.swing) }, title: r?.why ?? '' },
        h('span', { class: 'tornado-name' }, b.assumption),
        h('span', { class: 'tornado-track' },
          place(h('span', { class: 'base' }), at(hl.base)),
          seg(hl.base, b.at_low, 'low'), seg(hl.base, b.at_high, 'high'))));
    }
    const top = hl.tornado[0];
    setText('howsure-most', top && top.swing > 0
      ? `Measuring ${top.assumption} would narrow this figure most: across its range (${fmtNum(top.low_value)} to ${fmtNum(top.high_value)} ${byName.get(top.assumption)?.unit ?? ''}) it moves it by up to ${fmtFixed(top.swing, 2)} points.`
      : 'No assumption moves this figure over its range.');
    setText('howsure-caption', `${hl.label}: ${value(hl.key, hl.base)} at the table's values, band ${value(hl.key, hl.band[0])} … ${value(hl.key, hl.band[1])}`);
    const tbody = clear($('howsure-table').tBodies[0]);
    hl.tornado.forEach((b, i) => {
      const r = byName.get(b.assumption);
      const unit = r?.unit ?? '';
      tbody.append(h('tr', { dataset: { assumption: b.assumption } },
        h('td', { class: 'num' }, String(i + 1)),
        h('th', { scope: 'row', title: r?.why ?? '' }, b.assumption),
        h('td', { class: 'num' }, `${fmtNum(r?.value)} (${fmtNum(b.low_value)} … ${fmtNum(b.high_value)}) ${unit}`),
        h('td', { class: 'num', title: r?.why_low ?? '' }, value(hl.key, b.at_low)),
        h('td', { class: 'num', title: r?.why_high ?? '' }, value(hl.key, b.at_high)),
        h('td', { class: 'num', dataset: { value: String(b.swing) } }, b.swing > 0 ? fmtFixed(b.swing, 2) : 'none')));
    });
  }

  const fmtNum = (x) => (typeof x === 'number' ? x.toLocaleString('en-US') : '–');

  panel.addEventListener('submit', (ev) => { ev.preventDefault(); start(); });
  enterStarts(panel, start, () => engine.job);
  $('howsure-cancel').addEventListener('click', cancel);
  $('howsure-figure').addEventListener('change', drawTornado);
  for (const id of ['howsure-seconds', 'howsure-seeds']) $(id).addEventListener('input', note);
  // the note follows the form's seconds: its edits, and a link or story loaded into it (the page's
  // state changes then)
  for (const ev of ['input', 'change']) $('scenario').addEventListener(ev, () => queueMicrotask(note));
  new MutationObserver(note).observe(document.body, { attributes: true, attributeFilter: ['data-state', 'data-ready'] });
  panel.addEventListener('focusin', note);
  setState('idle');
  note();
  (globalThis.schedplay ??= {}).howsure = () => summary;
  return { note };
}

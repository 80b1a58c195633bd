// schedplay page: scenario form, A/B runs in the engine worker, live charts, reports, share links.
//
// A/B runs: sides A and B, and with repeats every seed of each, run at the same time on the engine's
// pool of workers (same run id, one key per run: `a0`, `b0`, `a1`, …), so a comparison takes about
// the time of its slowest run times runs/workers. The charts and the cards show the first seed (the
// scenario's own); the repeat table is the engine's (repeat::Table). Every run is deterministic, so
// the pool never changes a figure.
// The A/B run and the scaling sweep are both engine *jobs* (engine.js): one at a time, starting one
// cancels the other, Cancel / Esc stop whichever runs, a crash ends it.
// Why one file past 800 lines: it is the page's wiring, the one place that holds the shown run
// (`last`), the form's link and the jobs, and every path that puts results on the screen (a live
// run, a repeat, a story's shipped results) or takes them off goes through that state. The panels
// (curve, max load, How sure?, sweep, features, sched_ext, exports) are modules of their own.
import { $, clear, setText, fmtInt } from './dom.js';
import { Engine, PROTOCOL } from './engine.js';
import { ScenarioForm, showErrors, showMachineSummary, fieldInput } from './form.js';
import { Charts } from './charts.js';
import { clearSummary, setPatchLists, renderSide, renderDelta, renderProfile, renderC2C, renderCounters, renderFlag, renderRepeatTable } from './results.js';
import { Heatmap, renderDomains } from './heatmap.js';
import { exportJSON, exportCSV } from './export.js';
import { SweepView, POINT_SECONDS_CAP, pointSeconds } from './sweep.js';
import { setupTrace } from './trace.js';
import { setupImport } from './import.js';
import { setupRtapp } from './rtapp.js';
import { setupScx, linkHref, linkOfLocation } from './scx.js';
import { showSchedstat } from './schedstat.js';
import { renderClaim, renderVerdict } from './story.js';
import { Eta } from './eta.js';
import { renderValidation } from './validation.js';
import { setupHowsure } from './howsure.js';
import { setupCurve } from './curve.js';
import { setupMaxload } from './maxload.js';
import { loadShipped, shippedFor, renderShippedNote, renderShippedGone, hideShippedNote, SHIPPED_LABEL } from './precomputed.js';

const { MSG, ERROR_KINDS } = PROTOCOL;
// the stories' shipped results load beside the engine (www/precomputed.js)
loadShipped();

let form = null;
let linkErrors = []; // decode_link errors of the page's link; each stays until its field is edited
let validateErrors = []; // the form's errors (decode_link of the typed text, then validate)
const dismissed = new Set(); // `field\0message` of messages the user closed (until the field changes)
let userEdited = false; // the address bar keeps the link it was opened with until the user edits
let currentLink = null; // canonical link (encode_link) of the form while it is valid, else null
let last = null; // the last finished run: {id, exp, link, reports, compare, topo: {a, b}}
let lastValidation = null; // the last model check: {rows, seconds, repeats}, beside a story's verdict
let formWork = null; // the form's experiment's estimated events per run (validate's `work`), for the time left
let formSeconds = null; // the simulated seconds formWork is of
let selectedCpu = null;
let curveView = null; // the load-curve panel (setupCurve): a story's shipped curve is drawn there

const charts = new Charts();
const heatmap = new Heatmap($('heatmap'), (cpu, o) => { selectedCpu = cpu; showDomains(o?.focus); });
heatmap.clear();
$('heat-metric').addEventListener('change', () => heatmap.setMetric($('heat-metric').value));
const sweep = new SweepView();
// The sticky form is as tall as the viewport below the header, so its Run box shows from the start
// (the header wraps to two or three rows on narrower screens).
const topbar = document.querySelector('.topbar');
new ResizeObserver(() => document.documentElement.style.setProperty('--topbar-h', `${topbar.offsetHeight}px`)).observe(topbar);
// For tests and the devtools console: the live uPlot instances, the engine's tables.
window.schedplay = { charts, sweep, presets: () => engine.presets, lastReport: (side) => last?.reports?.[side] ?? null };

function setState(state, text) {
  document.body.dataset.state = state;
  if (text !== undefined) { setText('status', text); $('status').title = text; }
  const running = state === 'running';
  $('run').disabled = !engine.ready || !form;
  $('cancel').disabled = !running;
  $('run').textContent = running ? 'Restart A/B' : 'Run A/B';
  setSweepState();
}

const engine = new Engine({ ready: onReady, crash: onCrash });

// ---------------------------------------------------------------- startup, link <-> form

async function onReady(presets) {
  $('engine-error').hidden = document.body.dataset.crashed !== '1';
  if (!form) {
    form = new ScenarioForm(presets, onFormChange);
    setupImport(engine, form, presets);
    setupRtapp(engine, form);
    setupScx(form);
    setupHowsure(engine, () => form.get(), () => { starting = 'howsure'; stopAll('replaced'); }, cardsFigures,
      () => (formWork && formSeconds ? formWork / formSeconds : null));
    // the load curve: a story's own when the form is that story's experiment
    curveView = setupCurve(engine, () => form.get(), () => (storyShown && currentLink === storyLinks.get(storyShown.name) ? storyShown : null),
      () => { starting = 'curve'; stopAll('replaced'); });
    // the rate at a latency bound, for an open-loop workload (serve)
    setupMaxload(engine, () => form.get(), () => { starting = 'maxload'; stopAll('replaced'); });
    wireStories(presets);
    try {
      // each story's canonical link (its shared link is this + &story=NAME)
      for (const st of presets.stories || []) storyCanon.set(st.name, (await engine.call(MSG.encode_link, { experiment: st.experiment })).link);
      const query = linkOfLocation();
      // the landing scenario is an A≠B comparison: the first story (its claim shown, not run)
      const first = (presets.stories || [])[0];
      if (!query && first) { form.set(first.experiment); await syncNow(); storyLinks.set(first.name, currentLink); showStory(first); }
      else await loadLink(query);
    } catch (e) {
      setText('status', `could not read the link: ${e.message}`);
    }
    setState('idle', 'ready');
  } else {
    setState('idle', 'engine restarted; ready');
  }
  document.body.dataset.ready = '1';
  document.body.dataset.workers = String(engine.size);
}

/** The figures the cards show, when they are the form's experiment's (for "How sure?" to set its
 * band beside): the engine's Δ and the reports' contention, with the run's seconds and warm-up. */
function cardsFigures() {
  if (!last || last.link !== currentLink || !last.compare || !last.reports?.a || !last.reports?.b) return null;
  return {
    throughput_pct: last.compare.throughput_pct,
    a_contention_pct: last.reports.a.contention_pct,
    b_contention_pct: last.reports.b.contention_pct,
    seconds: Number(last.exp.seconds), warmup: Number(last.exp.warmup) || 0,
  };
}

async function loadLink(query) {
  const r = await engine.call(MSG.decode_link, { query });
  form.set(r.experiment);
  // `warmup=auto` stays auto in the form (the engine resolved it for this machine and run)
  if (new URLSearchParams(query).get('warmup')?.trim() === 'auto') $('warmup').value = 'auto';
  sweepNote();
  // a bad value was replaced by the engine's default: say which value the form now uses
  linkErrors = (r.errors || []).map((e) => ({ field: String(e.field), message: String(e.message), used: form.shownValue(String(e.field)) }));
  linkProblemsAtLoad = linkErrors.length;
  validateErrors = [];
  refreshErrors();
  await syncNow();
  // A story link (`&story=NAME`, checked by the engine): its claim, and a run at once when the
  // link's experiment is the story's own (its verdict then follows the results).
  const name = new URLSearchParams(query).getAll('story').pop();
  const s = (engine.presets?.stories || []).find((x) => x.name === name);
  if (!s) return;
  const decoded = (r.errors || []).length ? null : (await engine.call(MSG.encode_link, { experiment: r.experiment })).link;
  const own = currentLink !== null && decoded === storyCanon.get(s.name);
  if (own) storyLinks.set(s.name, currentLink);
  showStory(s, !own);
  if (own) {
    selectDetailSide(s.details_side);
    queueMicrotask(() => openStory(s));
  }
}

const errorKey = (e) => `${e.field}\u0000${e.message}`;

/** How many problems the loaded link had (decode_link's errors); the banner counts them. */
let linkProblemsAtLoad = 0;

/**
 * The banner at the top: how many problems the link had and how many are still open. An open one
 * blocks Run (nothing runs on a value the link did not give) until its field is edited or its
 * message dismissed (accepting the value shown).
 */
function showLinkBanner() {
  const open = linkErrors.length;
  const banner = $('link-banner');
  banner.hidden = open === 0;
  banner.dataset.open = String(open);
  if (!open) return;
  const n = linkProblemsAtLoad;
  $('link-banner-text').textContent = `This link had ${n} problem${n === 1 ? '' : 's'}`
    + `${open < n ? ` (${open} still open)` : ''}: ${linkErrors.map((e) => e.field).join(', ')}. `
    + 'Run waits until each is fixed or its message dismissed (accepting the value shown).';
}

/** Scroll to and focus the first problem: its field, else its message's dismiss button. */
function focusFirstProblem(errors) {
  const e = errors[0];
  if (!e) return;
  const input = fieldInput(e.field);
  const msg = [...document.querySelectorAll('.field-error.shown .msg')].find((m) => m.dataset.field === e.field);
  const target = input && !input.closest('[hidden]') && !input.disabled ? input : msg?.querySelector('button.dismiss');
  if (!target) return;
  // a closed <details> holding it is opened first
  for (let d = target.closest('details'); d; d = d.parentElement?.closest('details')) d.open = true;
  target.scrollIntoView({ block: 'center' });
  target.focus({ preventScroll: true });
}

function refreshErrors() {
  showLinkBanner();
  const seen = new Set();
  const all = [];
  for (const e of [...linkErrors, ...validateErrors]) {
    const k = errorKey(e);
    if (!seen.has(k) && !dismissed.has(k)) { seen.add(k); all.push(e); }
  }
  showErrors(all, (e) => {
    dismissed.add(errorKey(e));
    linkErrors = linkErrors.filter((x) => errorKey(x) !== errorKey(e));
    refreshErrors();
  });
}

let syncTimer = null;
let syncPromise = Promise.resolve();

function onFormChange(field) {
  userEdited = true;
  for (const k of [...dismissed]) if (!field || k.startsWith(`${field}\u0000`)) dismissed.delete(k);
  if (field) {
    linkErrors = linkErrors.filter((e) => e.field !== field);
    if (field === 'machine') linkErrors = linkErrors.filter((e) => !form.machineKeys.some((k) => k.key === e.field));
    if (field === 'workload') linkErrors = linkErrors.filter((e) => !(form.knobs || []).some((k) => k.name === e.field));
  }
  if (field === 'seconds') sweepNote();
  clearTimeout(syncTimer);
  syncTimer = setTimeout(() => { syncTimer = null; syncPromise = syncNow(); }, 150);
}

async function flushSync() {
  if (syncTimer) { clearTimeout(syncTimer); syncTimer = null; syncPromise = syncNow(); }
  await syncPromise;
}

/**
 * Field messages <- the engine reads the typed text (decode_link: every field, all at once) and then
 * checks the whole experiment (validate: limits across fields). Address bar <- canonical link
 * (encode_link), once the user changed something. Marks the results out of date when the form no
 * longer is their experiment.
 */
async function syncNow() {
  if (!form) return;
  currentLink = null;
  try {
    const d = await engine.call(MSG.decode_link, { query: form.rawQuery() });
    let errors = (d.errors || []).map((e) => ({ field: String(e.field), message: String(e.message) }));
    form.setAutoWarmup(form.warmupIsAuto() ? d.experiment?.warmup : null);
    const experiment = errors.length ? d.experiment : form.get();
    const v = await engine.call(MSG.validate, { experiment });
    formWork = Number(v.work) || null;
    formSeconds = Number(experiment.seconds) || null;
    errors = errors.concat((v.errors || []).filter((e) => !errors.some((x) => x.field === e.field)));
    validateErrors = errors;
    await machineSummary(experiment, errors);
    if (!errors.length) {
      currentLink = (await engine.call(MSG.encode_link, { experiment })).link;
      if (userEdited) history.replaceState(null, '', `${location.pathname}${linkHref(withStory(currentLink))}`);
    }
  } catch (e) {
    validateErrors = e.errors?.length ? e.errors : [{ field: 'experiment', message: e.message }];
  }
  refreshErrors();
  markStale();
}

/** The machine summary is the engine's (topology_summary); none while a machine field is invalid. */
async function machineSummary(experiment, errors) {
  const machineFields = new Set(['machine', ...form.machineKeys.map((k) => k.key)]);
  const bad = errors.filter((e) => machineFields.has(e.field));
  if (bad.length) { showMachineSummary(null, `fix ${bad.map((e) => e.field).join(', ')}`); return; }
  try {
    const s = (await engine.call(MSG.topology_summary, { experiment })).summary;
    const imported = !!experiment.machine?.cpu_map;
    showMachineSummary(s, '', imported, imported ? form.importNote : '');
    if (imported) form.showImportedLayout(s);
  } catch (e) {
    showMachineSummary(null, e.errors?.length ? e.errors.map((x) => `${x.field}: ${x.message}`).join('; ') : e.message);
  }
}

/** The results shown are "out of date" when the form is not (or no longer) their experiment. */
function markStale() {
  if (!last) return;
  const stale = currentLink !== last.link;
  // shipped results never stand in for a changed scenario: they go, and a note says why
  if (stale && last.shipped) { dropShipped(); return; }
  $('stale').hidden = !stale;
  document.querySelector('section.results').dataset.stale = stale ? '1' : '0';
}

const absoluteLink = (link) => `${location.origin}${location.pathname}${linkHref(link)}`;

/** The link with `&story=NAME` when it is the shown story's own experiment: opened, it shows the
 * claim and runs the story. */
function withStory(link, s = storyShown) {
  return s && link && link === storyLinks.get(s.name) && storyCanon.has(s.name) ? `${storyCanon.get(s.name)}&story=${encodeURIComponent(s.name)}` : link;
}

/** The results' experiment: its canonical link, as a link. */
function showResultsOf(label, link) {
  $('results-of').hidden = false;
  setText('results-progress', '');
  setText('results-of-label', label);
  const a = $('results-link');
  a.hidden = false;
  a.href = linkHref(link);
  // an object it carries is shown by its first characters
  a.textContent = link.replace(/(scx_[ab]_object=[^&]{24})[^&]+/g, '$1…');
}

const storyLinks = new Map(); // story name -> the form's link once the story was loaded into it
const storyCanon = new Map(); // story name -> encode_link of the story's own experiment
let storyShown = null; // the story whose claim is shown, until its results are in

/** The story whose claim is shown (`edited`: the form is not the story's experiment; no verdict). */
function showStory(s, edited = false) {
  storyShown = edited ? null : s;
  renderClaim(s, edited);
  if (!edited && currentLink && userEdited) history.replaceState(null, '', `${location.pathname}${linkHref(withStory(currentLink))}`);
}

/** The story's validation rows checked on this run (the engine's validation::check), with a verdict
 * each, next to the results. */
async function showStoryFigure(story, job) {
  if (!story) { renderVerdict(null, []); return []; }
  const of = (s) => job.seeds.map((_, i) => job.runs[`${s}${i}`]);
  let checks = [];
  try {
    checks = (await engine.call(MSG.story_check, { name: story.name, a: of('a'), b: of('b') })).checks;
  } catch (e) {
    setText('status', `story check failed: ${e.message}`);
  }
  renderVerdict(story, checks, showValidationRow, { a: job.reports.a, b: job.reports.b, compare: job.compare, exp: job.exp }, lastValidation);
  return checks;
}

/** "row 000-gain": the validation panel, the row marked when the table has been run. */
function showValidationRow(id) {
  for (const tr of document.querySelectorAll('#validation-table tr[data-marked]')) delete tr.dataset.marked;
  const row = document.getElementById(`vrow-${id}`);
  if (row) row.dataset.marked = '1';
  $('validation').dataset.wanted = id;
  setText('validation-wanted', row ? '' : `Row ${id} is in the table once the model is checked: press "Check the model".`);
  (row || $('validation')).scrollIntoView({ block: 'center' });
  (row ? row : $('validation-run')).focus?.({ preventScroll: true });
}

function selectDetailSide(side) {
  const el = $(side === 'a' ? 'side-a' : 'side-b');
  if (el && !el.checked) { el.checked = true; showDetails(); }
}
function wireStories(presets) {
  for (const btn of document.querySelectorAll('#stories button.story')) {
    btn.addEventListener('click', async () => {
      const s = (presets.stories || []).find((x) => x.name === btn.dataset.story);
      if (!s) return;
      stopAll('restart'); // the old run ends before the story's form is shown
      form.set(s.experiment);
      // the side the story's "look at" is about (the unpatched A for the first story)
      selectDetailSide(s.details_side);
      sweepNote();
      linkErrors = [];
      dismissed.clear();
      userEdited = true;
      await (syncPromise = syncNow());
      storyLinks.set(s.name, currentLink);
      showStory(s);
      setText('status', `story: ${s.title || s.name}`);
      await openStory(s);
      // on a phone the results start far below the form: bring them into view
      if (matchMedia('(max-width: 900px)').matches) $('results-of').scrollIntoView({ block: 'start' });
    });
  }
}

// ---------------------------------------------------------------- runs (A/B)

/** The kind of job being started ('ab', 'sweep', 'validate') while it stops the one before, so that
 * the stopped job says what replaced it. */
let starting = null;

/** Stop whatever runs (an A/B run, a sweep, or a sweep still resizing its points). */
function stopAll(reason) {
  if ($('sweep').dataset.state === 'preparing') cancelSweep(reason);
  engine.cancelJob(engine.job, reason);
}

async function startRun(story = null) {
  if (!engine.ready || !form) return;
  starting = 'ab';
  stopAll(engine.job?.kind === 'ab' ? 'restart' : 'replaced');
  await flushSync();
  const exp = form.get();
  if (linkErrors.length) {
    setState('error', `the link had ${linkErrors.length === 1 ? 'a problem' : `${linkErrors.length} problems`} still open (${linkErrors.map((e) => e.field).join(', ')}): fix or dismiss ${linkErrors.length === 1 ? 'it' : 'them'} first`);
    focusFirstProblem(linkErrors);
    return;
  }
  if (validateErrors.length || !currentLink) {
    setState('error', `fix the marked fields first (${validateErrors.map((e) => e.field).join(', ')})`);
    focusFirstProblem(validateErrors);
    return;
  }
  if (!story && storyShown && currentLink !== storyLinks.get(storyShown.name)) showStory(null);
  const link = currentLink;
  const n = Math.max(1, Number(exp.repeats) || 1);
  let seeds = [exp.seed];
  if (n > 1) {
    try {
      seeds = (await engine.call(MSG.repeat_seeds, { seed: exp.seed, n })).seeds;
    } catch (e) {
      setState('error', `repeats: ${e.message}`);
      return;
    }
  }
  const job = engine.startJob({
    kind: 'ab',
    exp,
    link,
    story: storyShown,
    seeds,
    reports: {},
    runs: {},
    schedstat: {}, // DoneMsg.schedstat of each side's first seed
    progress: (msg) => onProgress(job, msg),
    done: (msg) => onDone(job, msg),
    error: onRunError,
    cancelled: (reason) => {
      if (reason === 'restart') return; // the new run sets the state
      setText('progress-label', 'cancelled');
      // say what stopped it: the job that replaced it (engine.job is the new one by now)
      const by = { sweep: 'the scaling sweep runs', validate: 'the model check ("How close is the model?") runs', howsure: 'the "How sure?" screen runs', curve: 'the load curve runs', maxload: 'the max-load search runs' }[starting];
      showResultsOf('Cancelled, not run to the end:', link);
      $('results-cancel').hidden = true;
      setState('cancelled', reason === 'replaced' && by ? `A/B run cancelled: ${by}` : 'A/B run cancelled');
    },
  });
  charts.reset();
  charts.setWarmup(exp.warmup);
  clearSummary();
  renderRepeatTable(null);
  showSchedstat(engine, null, null);
  for (const s of ['a', 'b']) renderFlag(s, null);
  setPatchLists(exp);
  last = null;
  hideShippedNote();
  $('export-json').disabled = true;
  $('export-csv').disabled = true;
  $('stale').hidden = true;
  document.querySelector('section.results').dataset.stale = '0';
  $('story-figure').hidden = true;
  showResultsOf('Running:', link);
  $('results-cancel').hidden = false;
  renderVerdict(null, []);
  for (const side of ['a', 'b']) setText(`summary-${side}-seed`, n > 1 ? `seed 1 of ${n} (${seeds[0]}); the means are in the table below` : '');
  job.frac = {};
  job.started = performance.now();
  // every run weighs the same (both sides of one machine); the speed is measured across them
  job.eta = new Eta(Object.fromEntries(seeds.flatMap((_, i) => ['a', 'b'].map((s) => [`${s}${i}`, formWork]))), engine.workers.length);
  $('progress').value = 0;
  const guess = job.eta.text(); // shown at once: a first guess from earlier jobs, if any
  const startText = `A 0% · B 0%${guess ? ` · ${guess}` : ''}`;
  setText('progress-label', startText);
  setText('results-progress', `(${startText})`);
  setState('running', n > 1 ? `running A and B, ${n} seeds each…` : 'running A and B…');
  // seed-major, so the first seed of both sides starts first (its charts fill first)
  seeds.forEach((seed, i) => {
    for (const side of ['a', 'b']) engine.run(job, { ...exp, seed }, side, `${side}${i}`);
  });
}

/** A story opened (its button, or its link with its own experiment): the results shipped with the
 * page when the form is exactly the story's experiment, else a live run. */
async function openStory(s) {
  const entry = await shippedFor(s.name, currentLink);
  if (entry && currentLink === storyCanon.get(s.name) && !engine.job) await showShipped(s, entry);
  else await startRun(s);
}

/** The story's shipped results (www/precomputed.js), through the renderers of a live run: the
 * cards, charts, Δ, profile, counters, schedstat, verdict and details, and its curve. */
async function showShipped(s, entry) {
  const link = currentLink;
  const exp = form.get();
  const reports = { a: entry.a.report, b: entry.b.report };
  const bounds = {};
  for (const side of ['a', 'b']) {
    try { bounds[side] = (await engine.call(MSG.percentile_bounds, { report: reports[side] })).bounds; } catch (_) { bounds[side] = null; }
  }
  if (currentLink !== link || engine.job) return; // edited or a run started meanwhile
  charts.reset();
  charts.setWarmup(exp.warmup);
  clearSummary();
  renderRepeatTable(null);
  setPatchLists(exp);
  charts.setUnit(reports.a.throughput_unit ? `${reports.a.throughput_unit}/s` : '');
  for (const side of ['a', 'b']) {
    charts.setFromReport(side, reports[side]);
    renderSide(side, reports[side], bounds[side]);
    renderFlag(side, reports[side]);
    setText(`summary-${side}-seed`, '');
  }
  const r = { id: null, exp, link, reports, compare: entry.compare, topo: {}, seeds: [exp.seed], runs: { a: [reports.a], b: [reports.b] }, story: s, shipped: true, checks: entry.checks };
  last = r;
  showResultsOf('Results of', link);
  $('results-cancel').hidden = true;
  $('stale').hidden = true;
  document.querySelector('section.results').dataset.stale = '0';
  renderShippedNote(entry);
  renderDelta(entry.compare, bounds);
  renderProfile(reports.a, reports.b);
  renderCounters(reports.a, reports.b);
  r.schedstat = { a: entry.a.schedstat, b: entry.b.schedstat };
  await showSchedstat(engine, entry.a.schedstat, entry.b.schedstat);
  renderVerdict(s, entry.checks, showValidationRow, { a: reports.a, b: reports.b, compare: entry.compare, exp, shipped: true }, lastValidation);
  if (entry.curve) curveView?.showShipped(entry.curve, reports.a.throughput_unit || '');
  await showDetails();
  $('progress').value = 1;
  setText('progress-label', 'shipped results');
  // the exports are of full reports: Run computes them
  $('export-json').disabled = true;
  $('export-csv').disabled = true;
  if (last === r) setState('done', `story: ${s.title || s.name} — results ${SHIPPED_LABEL}`);
}

/** The form no longer is the story's experiment: its shipped results leave the screen. */
function dropShipped() {
  const title = last?.story?.title || last?.story?.name || 'the story';
  last = null;
  charts.reset();
  clearSummary();
  renderDelta(null);
  renderProfile(null, null);
  renderCounters(null, null);
  renderRepeatTable(null);
  showSchedstat(engine, null, null);
  for (const side of ['a', 'b']) renderFlag(side, null);
  renderVerdict(null, []);
  showDetails();
  curveView?.dropShipped();
  $('stale').hidden = true;
  document.querySelector('section.results').dataset.stale = '0';
  setText('results-of-label', 'No results for the form yet.');
  $('results-link').hidden = true;
  renderShippedGone(title);
  setText('progress-label', '');
  $('progress').value = 0;
}

function cancelRun() {
  if (engine.job?.kind === 'ab') engine.cancelJob(engine.job, 'user');
}

function onProgress(job, msg) {
  const key = msg.key ?? `${msg.side}0`;
  if (key === `${msg.side}0`) charts.push(msg.side, msg.series);
  job.frac[key] = Math.max(0, Math.min(1, Number(msg.frac) || 0));
  const n = job.seeds.length;
  const side = (s) => job.seeds.reduce((acc, _, i) => acc + (job.frac[`${s}${i}`] || 0), 0) / n;
  const [a, b] = [side('a'), side('b')];
  $('progress').value = (a + b) / 2;
  job.eta.set(key, job.frac[key]);
  const left = job.eta.text();
  const text = `A ${Math.round(a * 100)}% · B ${Math.round(b * 100)}%${left ? ` · ${left}` : ''}`;
  setText('progress-label', text);
  setText('results-progress', `(${text})`); // beside the results too: on a phone the Run box is far up
}

async function onDone(job, msg) {
  const key = msg.key ?? `${msg.side}0`;
  job.runs[key] = msg.report;
  job.frac[key] = 1;
  job.eta.set(key, 1);
  if (key === `${msg.side}0`) {
    job.reports[msg.side] = msg.report;
    job.schedstat[msg.side] = msg.schedstat;
    charts.setUnit(msg.report.throughput_unit ? `${msg.report.throughput_unit}/s` : '');
    charts.setFromReport(msg.side, msg.report);
    renderSide(msg.side, msg.report);
    renderFlag(msg.side, msg.report);
  }
  const n = job.seeds.length;
  const left = 2 * n - Object.keys(job.runs).length;
  if (left > 0) {
    setText('status', n > 1 ? `running: ${left} of ${2 * n} runs left…` : `running ${msg.side === 'a' ? 'B' : 'A'}…`);
    return;
  }
  let table = null;
  if (n > 1) {
    const of = (s) => job.seeds.map((_, i) => job.runs[`${s}${i}`]);
    try {
      table = (await engine.call(MSG.repeat_table, { a: of('a'), b: of('b') })).table;
    } catch (e) {
      setText('status', `repeat table failed: ${e.message}`);
    }
  }
  // The Δ figures are the engine's (Delta::between, as the CLI's compare prints them).
  let compare = null;
  let compareError = '';
  try {
    compare = (await engine.call(MSG.compare, { a: job.reports.a, b: job.reports.b })).result;
  } catch (e) {
    compareError = `; no Δ: compare failed: ${e.message}`;
  }
  // the histogram bucket of each percentile on the cards: a percentile is a bucket bound
  const bounds = {};
  for (const side of ['a', 'b']) {
    try { bounds[side] = (await engine.call(MSG.percentile_bounds, { report: job.reports[side] })).bounds; } catch (_) { bounds[side] = null; }
  }
  if (!engine.isCurrent(job)) return; // cancelled, superseded or crashed meanwhile
  engine.finishJob(job);
  job.eta.finish();
  for (const side of ['a', 'b']) renderSide(side, job.reports[side], bounds[side]);
  const of = (s) => job.seeds.map((_, i) => job.runs[`${s}${i}`]);
  job.compare = compare;
  const r = { id: job.id, exp: job.exp, link: job.link, reports: job.reports, compare, topo: {}, seeds: job.seeds, runs: { a: of('a'), b: of('b') }, story: job.story };
  last = r;
  showResultsOf('Results of', r.link);
  $('results-cancel').hidden = true;
  markStale();
  renderDelta(r.compare, bounds);
  renderRepeatTable(table);
  r.table = table;
  renderProfile(r.reports.a, r.reports.b);
  renderCounters(r.reports.a, r.reports.b);
  r.schedstat = job.schedstat;
  await showSchedstat(engine, job.schedstat.a, job.schedstat.b);
  r.checks = await showStoryFigure(job.story, job);
  await showDetails();
  $('progress').value = 1;
  setText('progress-label', 'done');
  $('export-json').disabled = false;
  $('export-csv').disabled = false;
  setState('done', `done: ${fmtInt(r.reports.a.events)} + ${fmtInt(r.reports.b.events)} events${compareError}`);
}

function onRunError(err, side) {
  if (err.kind === ERROR_KINDS.invalid) {
    validateErrors = err.errors;
    refreshErrors();
    setState('error', `run ${String(side || '').toUpperCase()} rejected: fix the marked fields`);
  } else {
    setState('error', `run failed: ${err.message}`);
  }
}

function onCrash(message, job) {
  document.body.dataset.ready = '0';
  document.body.dataset.crashed = '1';
  const banner = $('engine-error');
  const during = job ? (job.kind === 'sweep' ? ' (during the sweep)' : ' (during a run)') : '';
  banner.textContent = `${message}${during} — the engine was restarted; your scenario is kept.`;
  banner.hidden = false;
  setState('error', 'engine crashed; restarting…');
}

// ---------------------------------------------------------------- scaling sweep

let sweepToken = 0; // bumped by every sweep start / cancel: a start still awaiting the engine gives up

function setSweepState(state, text) {
  const el = $('sweep');
  if (state !== undefined) el.dataset.state = state;
  if (text !== undefined) setText('sweep-progress-label', text);
  const busy = el.dataset.state === 'running' || el.dataset.state === 'preparing';
  $('sweep-run').disabled = !engine.ready || !form;
  $('validation-run').disabled = !engine.ready;
  $('sweep-cancel').disabled = !busy;
  $('sweep-run').textContent = busy ? 'Restart sweep' : 'Run sweep';
}

function setSweepError(text, cpusField = false) {
  setText('sweep-error', text);
  if (cpusField) $('sweep-cpus').setAttribute('aria-invalid', 'true');
  else $('sweep-cpus').removeAttribute('aria-invalid');
}

const describeErrors = (errors) => errors.map((e) => `${String(e.field)}: ${String(e.message)}`).join('; ');

/** The panel's note: how long each point simulates and why, and how many points the engine reads
 * in the CPU list (once it is up). */
let sweepNoteSeq = 0;
let sweepCount = ''; // " N points, 2N runs." for the last list the engine read
async function sweepNote() {
  const seq = ++sweepNoteSeq;
  const exp = Number($('seconds').value);
  const { seconds, typed } = pointSeconds($('seconds').value, $('sweep-seconds').value);
  const capped = Number.isFinite(exp) && exp > POINT_SECONDS_CAP;
  $('sweep-seconds').placeholder = String(pointSeconds($('seconds').value, '').seconds);
  const why = typed
    ? `${seconds} s simulated (typed here; empty = the experiment's seconds, capped at ${POINT_SECONDS_CAP} s)`
    : capped
      ? `${seconds} s simulated: the experiment's ${exp} s capped at ${POINT_SECONDS_CAP} s per point to keep the sweep interactive`
      : `${seconds} s simulated: the experiment's seconds (capped at ${POINT_SECONDS_CAP} s per point to keep the sweep interactive)`;
  setText('sweep-note', `Each point runs A and B for ${why}.${sweepCount}`);
  if (!engine.ready) return;
  let r;
  try {
    r = await engine.call(MSG.sweep_cpus, { text: $('sweep-cpus').value });
  } catch (_) { return; }
  if (seq !== sweepNoteSeq) return;
  const n = r.cpus.length;
  sweepCount = r.ok ? ` ${n} point${n === 1 ? '' : 's'}, ${2 * n} runs.` : '';
  setText('sweep-note', `Each point runs A and B for ${why}.${sweepCount}`);
}

function cancelSweep(reason = 'user') {
  const state = $('sweep').dataset.state;
  sweepToken++;
  if (engine.job?.kind === 'sweep') { engine.cancelJob(engine.job, reason); return; }
  if (state === 'preparing') setSweepState('cancelled', 'cancelled');
}

async function startSweep() {
  if (!engine.ready || !form) return;
  const token = ++sweepToken;
  // The CPU list is the engine's to read: the counts it can simulate (sweep::parse_cpu_list).
  let plan;
  try {
    plan = await engine.call(MSG.sweep_cpus, { text: $('sweep-cpus').value });
  } catch (e) {
    setSweepError(e.message);
    setSweepState('error', 'failed');
    return;
  }
  if (token !== sweepToken) return;
  if (!plan.ok) {
    setSweepError(describeErrors(plan.errors), true);
    setSweepState('error', 'fix the CPU list');
    return;
  }
  const { cpus } = plan;
  starting = 'sweep';
  engine.cancelJob(engine.job, engine.job?.kind === 'sweep' ? 'restart' : 'replaced');
  setSweepError('');
  $('sweep-progress').value = 0; // not the previous sweep's
  setSweepState('preparing', 'resizing the experiment…');
  await flushSync();
  if (token !== sweepToken) return;
  if (validateErrors.length) {
    setSweepError('fix the marked fields of the experiment first');
    setSweepState('error', '');
    return;
  }
  const exp = form.get();
  const { seconds } = pointSeconds(exp.seconds, $('sweep-seconds').value);
  const base = { ...exp, seconds };
  // Resize every point before running any, so that every bad size is reported at once.
  const points = [];
  const bad = [];
  for (const n of cpus) {
    try {
      points.push({ cpus: n, exp: (await engine.call(MSG.sweep_experiment, { experiment: base, cpus: n })).experiment });
    } catch (e) {
      bad.push(`${n} CPUs: ${e.errors?.length ? describeErrors(e.errors) : e.message}`);
    }
    if (token !== sweepToken) return;
  }
  if (bad.length) {
    setSweepError(bad.join(' · '));
    setSweepState('error', 'some sizes are invalid');
    return;
  }

  // Every point's A and B go to the pool at once, smallest first; rows fill in as points finish.
  const frac = {}; // run key (`a0`, `b3`, …) -> fraction done
  let finished = 0;
  const pointOf = (msg) => Number(String(msg.key ?? '').slice(1));
  const firstOpen = () => points.findIndex((p) => !p.row);
  const job = engine.startJob({
    kind: 'sweep',
    progress: (msg) => {
      frac[msg.key] = Math.max(0, Math.min(1, Number(msg.frac) || 0));
      const total = Object.values(frac).reduce((x, y) => x + y, 0);
      $('sweep-progress').value = total / (2 * points.length);
      const j = pointOf(msg);
      if (points[j]) setText('sweep-progress-label', `${points[j].cpus} CPUs: ${msg.side.toUpperCase()} ${Math.round(frac[msg.key] * 100)}% · ${finished} of ${points.length} points done`);
    },
    done: async (msg) => {
      const j = pointOf(msg);
      const p = points[j];
      if (!p) return;
      frac[msg.key] = 1;
      p[msg.side] = msg.report;
      if (msg.side === 'a') sweep.setUnit(msg.report.throughput_unit || '');
      if (!p.a || !p.b) return; // the other side still runs
      // the row (figures and B vs A) is the engine's SweepPoint, as `schedplay sweep` prints it
      let row;
      try {
        row = (await engine.call(MSG.sweep_point, { cpus: p.cpus, a: p.a, b: p.b })).point;
      } catch (e) {
        if (!engine.isCurrent(job)) return;
        engine.cancelJob(job, 'failed');
        setSweepError(`${p.cpus} CPUs: ${e.message}`);
        sweep.halt('not run: failed');
        setSweepState('error', 'failed');
        return;
      }
      if (!engine.isCurrent(job)) return; // cancelled, replaced or crashed meanwhile
      p.row = row;
      sweep.setPoint(j, row);
      if (++finished < points.length) { sweep.setRunning(firstOpen()); return; }
      engine.finishJob(job);
      $('sweep-progress').value = 1;
      setSweepState('done', `done: ${points.length} point${points.length === 1 ? '' : 's'}`);
      setText('status', 'sweep done');
    },
    error: (err, side, key) => {
      const why = err.errors.length ? describeErrors(err.errors) : err.message;
      const p = points[Number(String(key ?? '').slice(1))] || points[Math.max(0, firstOpen())];
      setSweepError(`${p.cpus} CPUs, run ${String(side || '').toUpperCase()}: ${why}`);
      sweep.halt('not run: failed');
      setSweepState('error', 'failed');
    },
    cancelled: (reason) => {
      if (reason === 'restart' || reason === 'failed') return;
      sweep.halt('cancelled');
      const by = { ab: 'the A/B run started', validate: 'the model check started', howsure: 'the "How sure?" screen started', curve: 'the load curve started', maxload: 'the max-load search started' }[starting];
      setSweepState('cancelled', reason === 'replaced' && by ? `stopped: ${by}` : 'cancelled');
    },
    crashed: () => { sweep.halt('not run: engine crashed'); setSweepState('error', 'engine crashed'); },
  });
  sweep.reset(cpus);
  $('sweep-progress').value = 0;
  setSweepState('running', `${cpus[0]} CPUs: A 0%`);
  setText('status', `running the sweep (${cpus.join(', ')} CPUs)…`);
  sweep.setRunning(0);
  points.forEach((p, j) => { for (const side of ['a', 'b']) engine.run(job, p.exp, side, `${side}${j}`); });
}

// ---------------------------------------------------------------- how close is the model?

async function startValidation() {
  if (!engine.ready) return;
  const seconds = Number($('validation-seconds').value);
  const repeats = Number($('validation-repeats').value);
  setText('validation-error', '');
  let runs;
  try {
    runs = (await engine.call(MSG.validation_plan, { seconds, repeats })).runs;
  } catch (e) {
    setText('validation-error', e.errors?.length ? describeErrors(e.errors) : e.message);
    $('validation').dataset.state = 'error';
    return;
  }
  starting = 'validate';
  stopAll(engine.job?.kind === 'validate' ? 'restart' : 'replaced');
  const reports = new Array(runs.length);
  let done = 0;
  // the keys the runs are started with below (`v<i>`), each weighed by its estimated events
  const eta = new Eta(Object.fromEntries(runs.map((r, i) => [`v${i}`, r.work])), engine.workers.length);
  const label = () => {
    $('validation-progress').value = eta.fraction();
    const left = eta.text();
    setText('validation-progress-label', `${done} of ${runs.length} runs${left ? ` · ${left}` : ''}`);
  };
  const job = engine.startJob({
    kind: 'validate',
    progress: (msg) => { eta.set(msg.key, msg.frac); label(); },
    done: async (msg) => {
      reports[Number(String(msg.key).slice(1))] = msg.report;
      eta.set(msg.key, 1);
      ++done;
      label();
      if (done < runs.length) return;
      eta.finish();
      let rows, headline;
      try {
        ({ rows, headline } = await engine.call(MSG.validation_table, { seconds, repeats, reports }));
      } catch (e) {
        setText('validation-error', e.message);
        $('validation').dataset.state = 'error';
        return;
      }
      if (!engine.isCurrent(job)) return;
      engine.finishJob(job);
      renderValidation(rows);
      lastValidation = { rows, seconds, repeats };
      // a story's verdict on screen now says what the model check gave for its rows
      if (last?.story && last.checks) renderVerdict(last.story, last.checks, showValidationRow, { a: last.reports.a, b: last.reports.b, compare: last.compare, exp: last.exp, shipped: !!last.shipped }, lastValidation);
      // the engine's headline: behaviour checks and inputs counted apart
      setText('validation-progress-label', headline);
      setText('validation-wanted', '');
      $('validation').dataset.state = 'done';
      $('validation-cancel').disabled = true;
    },
    error: (err) => {
      setText('validation-error', err.errors.length ? describeErrors(err.errors) : err.message);
      $('validation').dataset.state = 'error';
    },
    cancelled: (reason) => {
      $('validation').dataset.state = 'cancelled';
      $('validation-cancel').disabled = true;
      const by = { ab: 'the A/B run started', sweep: 'the scaling sweep started', howsure: 'the "How sure?" screen started', curve: 'the load curve started', maxload: 'the max-load search started' }[starting];
      setText('validation-progress-label', reason === 'replaced' && by ? `cancelled: ${by}` : 'cancelled');
    },
    crashed: () => { $('validation').dataset.state = 'error'; $('validation-cancel').disabled = true; setText('validation-progress-label', 'engine crashed'); },
  });
  $('validation').dataset.state = 'running';
  $('validation-cancel').disabled = false;
  $('validation-progress').value = 0;
  setText('validation-progress-label', `0 of ${runs.length} runs`);
  runs.forEach((r, i) => engine.run(job, r.experiment, r.side, `v${i}`));
}

$('validation').addEventListener('submit', (ev) => { ev.preventDefault(); startValidation(); });
$('validation-cancel').addEventListener('click', () => { if (engine.job?.kind === 'validate') engine.cancelJob(engine.job, 'user'); });

// ---------------------------------------------------------------- details (c2c, heatmap, domains)

function detailSide() {
  return $('side-a').checked ? 'a' : 'b';
}

async function topology(side, cpu) {
  const { topology: t } = await engine.call(MSG.topology, { experiment: last.exp, side, cpu });
  return t;
}

async function showDetails() {
  const side = detailSide();
  const label = side.toUpperCase();
  setText('heat-side', label);
  if (!last) { renderC2C(null, label); heatmap.clear(); return; }
  const report = last.reports[side];
  renderC2C(report, label);
  try {
    if (!last.topo[side]) last.topo[side] = await topology(side, selectedCpu ?? 0);
    heatmap.set(last.topo[side].cpu_info, report.cpu_heat);
    if (selectedCpu !== null) await showDomains();
  } catch (e) {
    setText('heat-tip', `topology failed: ${e.message}`);
  }
}

async function showDomains(focus = false) {
  if (!last || selectedCpu === null) return;
  const side = detailSide();
  try {
    renderDomains(await topology(side, selectedCpu), selectedCpu, side.toUpperCase(), focus);
  } catch (e) {
    setText('heat-tip', `topology failed: ${e.message}`);
  }
}

for (const id of ['side-a', 'side-b']) $(id).addEventListener('change', () => { showDetails(); });

// ---------------------------------------------------------------- share, export, keys

async function share() {
  await flushSync();
  if (!currentLink) {
    // never a link to another experiment than the form's
    $('share-box').hidden = true;
    delete $('share').dataset.link;
    const why = validateErrors.map((e) => `${e.field}: ${e.message}`).join('; ');
    setText('status', `not shared: the form has invalid fields (${why || 'see the marked fields'})`);
    return;
  }
  const url = absoluteLink(withStory(currentLink));
  const box = $('share-url');
  $('share-box').hidden = false;
  box.value = url;
  $('share').dataset.link = url;
  // what the link cannot promise (an rt-app file making it too long for some tools), said with it
  const note = await engine.call(MSG.link_note, { experiment: form.get() }).then((r) => r.note, () => null);
  setText('share-note', note ? `Note: ${note}.` : '');
  $('share-note').hidden = !note;
  // after an edit the form is not the results on screen: offer the results' link too
  const stale = !!last && last.link !== currentLink;
  $('share-results-row').hidden = !stale;
  if (stale) $('share-results-url').value = absoluteLink(withStory(last.link, last.story));
  setText('share-form-label', stale ? 'Link to the form (copied if the browser allowed it):' : 'Link (copied if the browser allowed it):');
  try {
    await navigator.clipboard.writeText(url);
    setText('status', 'link copied to the clipboard');
  } catch (_) {
    box.focus();
    box.select();
    let ok = false;
    try { ok = document.execCommand('copy'); } catch (_) { ok = false; }
    setText('status', ok ? 'link copied' : 'copy the selected link (Ctrl+C)');
  }
}

function bundle() {
  if (!last) return null;
  // What is on screen: the run's own experiment and link (whatever the form says now), every seed's
  // report of each side, the cards' seed (a, b: the first), the Δ card and the repeat table.
  return {
    schedplay: 1, link: absoluteLink(withStory(last.link, last.story)), experiment: last.exp,
    seeds: last.seeds, a: last.reports.a, b: last.reports.b, compare: last.compare,
    runs: last.runs, repeat_table: last.table ?? null, schedstat: last.schedstat ?? null,
    story: last.story ? { name: last.story.name, checks: last.checks ?? [] } : null,
  };
}

$('share').addEventListener('click', share);
$('link-banner-show').addEventListener('click', () => focusFirstProblem(linkErrors));
// "Results of <link>": load the results' experiment into the form, keep the results (a new tab or a
// copied link still opens the page fresh)
$('results-link').addEventListener('click', async (ev) => {
  if (!last || ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.altKey) return;
  ev.preventDefault();
  form.set(last.exp);
  sweepNote();
  linkErrors = [];
  dismissed.clear();
  userEdited = true;
  await (syncPromise = syncNow());
  if (last.story) showStory(last.story);
  setText('status', 'the form is the results\' experiment again');
});
$('results-cancel').addEventListener('click', () => cancelRun());
setupTrace(engine, () => last?.exp ?? null);
$('export-json').addEventListener('click', () => { const b = bundle(); if (b) exportJSON(b); });
$('export-csv').addEventListener('click', () => { const b = bundle(); if (b) exportCSV(b); });
$('scenario').addEventListener('submit', (ev) => { ev.preventDefault(); startRun(); });
$('cancel').addEventListener('click', () => cancelRun());
$('sweep').addEventListener('submit', (ev) => { ev.preventDefault(); startSweep(); });
$('sweep-cancel').addEventListener('click', () => cancelSweep());
$('sweep-seconds').addEventListener('input', () => sweepNote());
$('sweep-cpus').addEventListener('input', () => { setSweepError(''); sweepNote(); });

document.addEventListener('keydown', (ev) => {
  if (ev.key === 'Escape') {
    if (engine.job) { ev.preventDefault(); engine.cancelJob(engine.job, 'user'); }
    else if ($('sweep').dataset.state === 'preparing') { ev.preventDefault(); cancelSweep(); }
    return;
  }
  if (ev.key !== 'Enter' || ev.isComposing || ev.shiftKey || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const t = ev.target;
  if (t && (t.closest?.('button, a, summary, textarea, #share-box') || t === $('heatmap'))) return;
  ev.preventDefault(); // also stops implicit form submission, so a run starts once
  if (engine.job) return;
  if (t?.closest?.('#validation')) startValidation();
  else if (t?.closest?.('#sweep')) startSweep();
  else startRun();
});

sweepNote();
setState('loading', 'loading engine…');

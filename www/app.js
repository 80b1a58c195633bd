// schedplay page: scenario form, A/B runs in the engine worker, live charts, reports, share links.
//
// A/B runs go through ONE worker, A first, then B (same run id, side 'a' then 'b'). Why not two
// workers in parallel: results are per-side deterministic either way, but one worker means one wasm
// instance to load, one crash/restart path and one cancel target; the slices stay ~30 ms so the page
// stays live, and on the 2-core CI machines two busy workers would only fight over the cores.
import { $, setText } from './dom.js';
import { Engine, newId } from './engine.js';
import { ScenarioForm, showErrors } from './form.js';
import { Charts } from './charts.js';
import { clearSummary, setPatchLists, renderSide, renderDelta, renderProfile, renderC2C, renderCounters } from './results.js';
import { Heatmap, renderDomains } from './heatmap.js';
import { exportJSON, exportCSV } from './export.js';

let form = null;
let linkErrors = []; // decode_link errors; each stays until its field is edited
let validateErrors = [];
let run = null; // the current run: {id, exp, reports: {a, b}}
let last = null; // the last finished run: {id, exp, reports, compare, topo: {a, b}}
let selectedCpu = null;

const charts = new Charts();
const heatmap = new Heatmap($('heatmap'), (cpu) => { selectedCpu = cpu; showDomains(); });
heatmap.clear();
// For tests and the devtools console: the live uPlot instances.
window.schedplay = { charts };

function setState(state, text) {
  document.body.dataset.state = state;
  if (text !== undefined) setText('status', text);
  const running = state === 'running';
  $('run').disabled = !engine.ready || !form;
  $('cancel').disabled = !running;
  $('run').textContent = running ? 'Restart A/B' : 'Run A/B';
}

const engine = new Engine({
  ready: onReady,
  progress: onProgress,
  done: onDone,
  error: onRunError,
  cancelled: () => {},
  crash: onCrash,
});

// ---------------------------------------------------------------- startup, link <-> form

async function onReady(presets) {
  $('engine-error').hidden = document.body.dataset.crashed !== '1';
  if (!form) {
    form = new ScenarioForm(presets, onFormChange);
    wireStories(presets);
    try {
      await loadLink(location.search.replace(/^\?/, ''));
    } catch (e) {
      setText('status', `could not read the link: ${e.message}`);
    }
    setState('idle', 'ready');
  } else {
    setState('idle', 'engine restarted; ready');
  }
  document.body.dataset.ready = '1';
}

async function loadLink(query) {
  const r = await engine.call('decode_link', { query });
  form.set(r.experiment);
  linkErrors = (r.errors || []).map((e) => ({ field: String(e.field), message: String(e.message) }));
  validateErrors = [];
  refreshErrors();
  await syncNow();
}

function refreshErrors() {
  const seen = new Set();
  const all = [];
  for (const e of [...linkErrors, ...validateErrors]) {
    const k = `${e.field}\u0000${e.message}`;
    if (!seen.has(k)) { seen.add(k); all.push(e); }
  }
  showErrors(all);
}

let syncTimer = null;
let syncPromise = Promise.resolve();

function onFormChange(field) {
  if (field) {
    linkErrors = linkErrors.filter((e) => e.field !== field);
    if (field === 'machine') linkErrors = linkErrors.filter((e) => !['sockets', 'cores_per_socket', 'smt', 'nodes_per_socket', 'cores_per_llc'].includes(e.field));
    if (field === 'workload') linkErrors = linkErrors.filter((e) => !(form.knobs || []).some((k) => k.name === e.field));
  }
  clearTimeout(syncTimer);
  syncTimer = setTimeout(() => { syncTimer = null; syncPromise = syncNow(); }, 150);
}

async function flushSync() {
  if (syncTimer) { clearTimeout(syncTimer); syncTimer = null; syncPromise = syncNow(); }
  await syncPromise;
}

/** Address bar <- canonical link of the form (encode_link); field messages <- validate. */
async function syncNow() {
  if (!form) return;
  const experiment = form.get();
  try {
    const v = await engine.call('validate', { experiment });
    validateErrors = v.errors || [];
    if (!validateErrors.length) {
      const { link } = await engine.call('encode_link', { experiment });
      history.replaceState(null, '', `${location.pathname}?${link}`);
    }
  } catch (e) {
    validateErrors = e.errors || [];
  }
  refreshErrors();
}

function wireStories(presets) {
  for (const btn of document.querySelectorAll('#stories button.story')) {
    btn.addEventListener('click', async () => {
      const s = (presets.stories || []).find((x) => x.name === btn.dataset.story);
      if (!s) return;
      form.set(s.experiment);
      linkErrors = [];
      await (syncPromise = syncNow());
      setText('status', `loaded story: ${s.title || s.name}`);
    });
  }
}

// ---------------------------------------------------------------- runs

async function startRun() {
  if (!engine.ready || !form) return;
  if (run) cancelRun(false);
  await flushSync();
  const exp = form.get();
  if (validateErrors.length) {
    setState('error', 'fix the marked fields first');
    return;
  }
  run = { id: newId(), exp, reports: {} };
  charts.reset();
  clearSummary();
  setPatchLists(exp);
  $('progress').value = 0;
  setText('progress-label', 'A 0%');
  setState('running', 'running A…');
  engine.run(run.id, exp, 'a');
}

function cancelRun(report = true) {
  if (!run) return;
  engine.cancel(run.id);
  run = null;
  if (report) {
    setText('progress-label', 'cancelled');
    setState('cancelled', 'cancelled');
  }
}

function onProgress(msg) {
  if (!run || msg.id !== run.id) return;
  charts.push(msg.side, msg.series);
  const frac = Math.max(0, Math.min(1, Number(msg.frac) || 0));
  $('progress').value = msg.side === 'a' ? frac / 2 : 0.5 + frac / 2;
  setText('progress-label', `${msg.side.toUpperCase()} ${Math.round(frac * 100)}%`);
}

async function onDone(msg) {
  if (!run || msg.id !== run.id) return;
  const r = run;
  r.reports[msg.side] = msg.report;
  charts.setUnit(msg.report.throughput_unit ? `${msg.report.throughput_unit}/s` : '');
  charts.setFromReport(msg.side, msg.report);
  renderSide(msg.side, msg.report);
  if (msg.side === 'a') {
    setText('status', 'running B…');
    engine.run(r.id, r.exp, 'b');
    return;
  }
  try {
    r.compare = (await engine.call('compare', { a: r.reports.a, b: r.reports.b })).result;
  } catch (e) {
    r.compare = null;
    console.warn('compare failed, deltas computed in the page:', e.message);
  }
  if (run !== r) return; // superseded meanwhile
  run = null;
  r.topo = {};
  last = r;
  renderDelta(r.reports.a, r.reports.b, r.compare);
  renderProfile(r.reports.a, r.reports.b);
  renderCounters(r.reports.a, r.reports.b);
  await showDetails();
  $('progress').value = 1;
  setText('progress-label', 'done');
  $('export-json').disabled = false;
  $('export-csv').disabled = false;
  setState('done', `done: ${r.reports.a.events ?? '?'} + ${r.reports.b.events ?? '?'} events`);
}

function onRunError(msg) {
  if (!run || msg.id !== run.id) return;
  run = null;
  if (msg.errors && msg.errors.length) {
    validateErrors = msg.errors;
    refreshErrors();
    setState('error', `run ${String(msg.side || '').toUpperCase()} rejected: fix the marked fields`);
  } else {
    setState('error', `run failed: ${msg.message || 'unknown error'}`);
  }
}

function onCrash(message) {
  const wasRunning = !!run;
  run = null;
  document.body.dataset.ready = '0';
  document.body.dataset.crashed = '1';
  const banner = $('engine-error');
  banner.textContent = `${message}${wasRunning ? ' (during a run)' : ''} — the engine was restarted; your scenario is kept.`;
  banner.hidden = false;
  setState('error', 'engine crashed; restarting…');
}

// ---------------------------------------------------------------- details (c2c, heatmap, domains)

function detailSide() {
  return $('side-a').checked ? 'a' : 'b';
}

async function topology(side, cpu) {
  const { topology: t } = await engine.call('topology', { experiment: last.exp, side, cpu });
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

async function showDomains() {
  if (!last || selectedCpu === null) return;
  const side = detailSide();
  try {
    renderDomains(await topology(side, selectedCpu), selectedCpu, side.toUpperCase());
  } catch (e) {
    setText('heat-tip', `topology failed: ${e.message}`);
  }
}

for (const id of ['side-a', 'side-b']) $(id).addEventListener('change', () => { showDetails(); });

// ---------------------------------------------------------------- share, export, keys

async function share() {
  await flushSync();
  const url = location.href;
  const box = $('share-url');
  $('share-box').hidden = false;
  box.value = url;
  $('share').dataset.link = url;
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
  return { schedplay: 1, link: location.href, experiment: last.exp, a: last.reports.a, b: last.reports.b, compare: last.compare };
}

$('share').addEventListener('click', share);
$('export-json').addEventListener('click', () => { const b = bundle(); if (b) exportJSON(b); });
$('export-csv').addEventListener('click', () => { const b = bundle(); if (b) exportCSV(b); });
$('scenario').addEventListener('submit', (ev) => { ev.preventDefault(); startRun(); });
$('cancel').addEventListener('click', () => cancelRun());

document.addEventListener('keydown', (ev) => {
  if (ev.key === 'Escape') {
    if (run) { ev.preventDefault(); cancelRun(); }
    return;
  }
  if (ev.key !== 'Enter' || ev.isComposing || ev.shiftKey || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const t = ev.target;
  if (t && (t.closest?.('button, a, summary, textarea, #share-box') || t === $('heatmap'))) return;
  ev.preventDefault(); // also stops implicit form submission, so a run starts once
  if (!run) startRun();
});

setState('loading', 'loading engine…');

/* schedplay engine worker (classic worker script, copied verbatim to dist/www/engine-worker.js).
 *
 * Loads the wasm engine built by Trunk (dist/worker.js defines the global `wasm_bindgen`,
 * dist/worker_bg.wasm) and speaks this protocol with the page (www/engine.js):
 *
 * page -> worker
 *   {type:'run', id, experiment, side}        run one side ('a' | 'b'); replaces any current run
 *   {type:'cancel', id}                       stop run `id` (no reply beyond {type:'cancelled'})
 *   {type:'decode_link', id, query}           -> {type:'decode_link', id, experiment, errors}
 *   {type:'encode_link', id, experiment}      -> {type:'encode_link', id, link}
 *   {type:'validate', id, experiment}         -> {type:'validate', id, errors}
 *   {type:'topology', id, experiment, side, cpu} -> {type:'topology', id, topology}
 *   {type:'compare', id, a, b}                -> {type:'compare', id, result}
 *   {type:'sweep_experiment', id, experiment, cpus} -> {type:'sweep_experiment', id, experiment}
 *                                             the experiment resized to a 2-socket machine of `cpus`
 *                                             CPUs (one point of the scaling sweep; then run it)
 * worker -> page
 *   {type:'ready', presets}                   once, after the wasm module is instantiated
 *   {type:'progress', id, side, frac, series} after each ~30 ms slice (series buffers transferred)
 *   {type:'done', id, side, report}
 *   {type:'cancelled', id, side}
 *   {type:'error', id, side?, errors?, message?} bad input (errors: [{field,message}]) or a failed call
 *   {type:'fatal', id?, message}              the engine trapped / failed to load: the page restarts us
 */
'use strict';

const SLICE_MS = 30;
let ready = false;
const early = [];
let current = null; // {id, side, sim, cancelled, n}

// Queue messages until the engine is up (the page may send before 'ready').
self.onmessage = (ev) => { early.push(ev.data); };

/** Deep copy into plain JSON-able data: Map -> object, typed arrays -> arrays, BigInt -> number. */
function plain(v) {
  if (v === null || v === undefined) return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v !== 'object') return v;
  if (ArrayBuffer.isView(v)) return Array.from(v);
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Map) {
    const o = {};
    for (const [k, x] of v) o[String(k)] = plain(x);
    return o;
  }
  const o = {};
  for (const k of Object.keys(v)) o[k] = plain(v[k]);
  return o;
}

/** An engine error whose message is JSON [{field, message}] -> that array, else null. */
function fieldErrors(e) {
  const text = e && typeof e === 'object' && 'message' in e ? e.message : e;
  if (typeof text !== 'string') return null;
  try {
    const j = JSON.parse(text);
    if (Array.isArray(j) && j.every((x) => x && typeof x.field === 'string')) return j;
  } catch (_) { /* not JSON */ }
  return null;
}

function describe(e) {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}

/** A wasm trap (panic=abort -> unreachable) or anything that is not a plain engine Error poisons the instance. */
function isFatal(e) {
  return (typeof WebAssembly !== 'undefined' && e instanceof WebAssembly.RuntimeError) ||
    (e instanceof Error && /unreachable|memory access out of bounds|RuntimeError/i.test(e.message + ' ' + e.name));
}

function fatal(id, e) {
  current = null;
  self.postMessage({ type: 'fatal', id, message: describe(e) });
}

// Yield to the event loop so that a queued 'cancel' is handled between slices.
// MessageChannel instead of setTimeout(0): nested timeouts get clamped to >= 4 ms.
const yieldChannel = new MessageChannel();
let yieldCb = null;
yieldChannel.port1.onmessage = () => { const cb = yieldCb; yieldCb = null; if (cb) cb(); };
function yieldThen(cb) { yieldCb = cb; yieldChannel.port2.postMessage(0); }

function freeRun(run) {
  if (run && run.sim) {
    try { run.sim.free(); } catch (_) { /* already gone */ }
    run.sim = null;
  }
}

function takeSeries(sim) {
  const s = sim.take_series();
  // Copy: the arrays may be views into wasm memory, whose buffer must never be transferred.
  const out = {};
  const transfer = [];
  for (const k of ['t_s', 'throughput', 'contention_pct', 'utilization']) {
    const src = s && (s instanceof Map ? s.get(k) : s[k]);
    const arr = Float64Array.from(src || []);
    out[k] = arr;
    transfer.push(arr.buffer);
  }
  return { series: out, transfer };
}

function startRun(msg) {
  if (current) { current.cancelled = true; freeRun(current); current = null; }
  const { id, side, experiment } = msg;
  let sim;
  try {
    sim = new wasm_bindgen.Sim(experiment, side);
  } catch (e) {
    if (isFatal(e)) return fatal(id, e);
    const errors = fieldErrors(e);
    self.postMessage(errors ? { type: 'error', id, side, errors } : { type: 'error', id, side, message: describe(e) });
    return;
  }
  current = { id, side, sim, cancelled: false, n: 256 };
  slice(current);
}

function slice(run) {
  if (run.cancelled || current !== run) { freeRun(run); return; }
  const t0 = performance.now();
  let finished = false, frac = 0, series, transfer;
  try {
    // Several step() calls per slice; n adapts so that one call takes about 1/4 of a slice.
    do {
      const s0 = performance.now();
      finished = run.sim.step(run.n);
      const dt = performance.now() - s0;
      if (dt < SLICE_MS / 8) run.n = Math.min(run.n * 2, 1 << 24);
      else if (dt > SLICE_MS / 2) run.n = Math.max(1, Math.floor(run.n / 2));
    } while (!finished && performance.now() - t0 < SLICE_MS);
    frac = finished ? 1 : run.sim.progress();
    ({ series, transfer } = takeSeries(run.sim));
  } catch (e) {
    freeRun(run);
    return fatal(run.id, e);
  }
  self.postMessage({ type: 'progress', id: run.id, side: run.side, frac, series }, transfer);
  if (!finished) { yieldThen(() => slice(run)); return; }
  let report;
  try {
    report = plain(run.sim.report());
  } catch (e) {
    freeRun(run);
    return fatal(run.id, e);
  }
  freeRun(run);
  if (current === run) current = null;
  self.postMessage({ type: 'done', id: run.id, side: run.side, report });
}

function reply(msg, fn) {
  try {
    self.postMessage({ type: msg.type, id: msg.id, ...fn() });
  } catch (e) {
    if (isFatal(e)) return fatal(msg.id, e);
    const errors = fieldErrors(e);
    self.postMessage({ type: 'error', id: msg.id, errors: errors || undefined, message: describe(e) });
  }
}

function handle(msg) {
  if (!msg || typeof msg !== 'object') return;
  switch (msg.type) {
    case 'run': return startRun(msg);
    case 'cancel':
      if (current && (msg.id === undefined || current.id === msg.id)) {
        const run = current;
        run.cancelled = true;
        current = null;
        freeRun(run);
        self.postMessage({ type: 'cancelled', id: run.id, side: run.side });
      }
      return;
    case 'decode_link':
      return reply(msg, () => {
        const r = plain(wasm_bindgen.decode_link(String(msg.query ?? '')));
        return { experiment: r.experiment, errors: r.errors || [] };
      });
    case 'encode_link':
      return reply(msg, () => ({ link: String(wasm_bindgen.encode_link(msg.experiment)) }));
    case 'validate':
      return reply(msg, () => ({ errors: plain(wasm_bindgen.validate(msg.experiment)).errors }));
    case 'topology':
      return reply(msg, () => ({ topology: plain(wasm_bindgen.topology(msg.experiment, msg.side, msg.cpu)) }));
    case 'compare':
      return reply(msg, () => ({ result: plain(wasm_bindgen.compare(msg.a, msg.b)) }));
    case 'sweep_experiment':
      return reply(msg, () => ({ experiment: plain(wasm_bindgen.sweep_experiment(msg.experiment, msg.cpus)) }));
    default:
      self.postMessage({ type: 'error', id: msg.id, message: `unknown message type ${String(msg.type)}` });
  }
}

(async () => {
  try {
    // worker.js: wasm-bindgen --target no-modules glue built by Trunk into dist/ (we live in dist/www/).
    importScripts('../worker.js');
    await wasm_bindgen({ module_or_path: '../worker_bg.wasm' });
    const presets = plain(wasm_bindgen.presets());
    ready = true;
    // Set after init: the engine's own `main` (if any) must not keep the message handler.
    self.onmessage = (ev) => handle(ev.data);
    self.postMessage({ type: 'ready', presets });
    for (const m of early.splice(0)) handle(m);
  } catch (e) {
    self.postMessage({ type: 'fatal', message: 'engine failed to load: ' + describe(e) });
  }
})();

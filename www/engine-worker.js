/* schedplay engine worker (classic worker script, copied verbatim to dist/www/engine-worker.js).
 *
 * Loads the wasm engine built by Trunk (dist/worker.js defines the global `wasm_bindgen`,
 * dist/worker_bg.wasm) and answers the page (www/engine.js). The messages and their fields are
 * listed in www/protocol.js (PROTOCOL), which both sides load.
 */
'use strict';

importScripts('protocol.js', 'engine-warmup.js');
const { MSG, ERROR_KINDS, INVALID_INPUT, isSide } = self.PROTOCOL;

const SLICE_MS = 30;
let ready = false;
const early = [];
let current = null; // {id, side, key, sim, cancelled, n}

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

function describe(e) {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}

/**
 * The error message for a thrown value. Its kind comes from what was thrown, never from its text:
 * a wasm trap (panic = abort -> `unreachable`, out-of-bounds access) is a WebAssembly.RuntimeError
 * and poisons the instance (fatal); an engine Error named InvalidInput carries field errors
 * (invalid); anything else is a failed call (`otherKind`: failed, or fatal inside a running Sim,
 * whose state is then unknown).
 */
function errorMsg(e, fields, otherKind = ERROR_KINDS.failed) {
  let kind = otherKind;
  let errors = [];
  if (typeof WebAssembly !== 'undefined' && e instanceof WebAssembly.RuntimeError) kind = ERROR_KINDS.fatal;
  else if (e instanceof Error && e.name === INVALID_INPUT && Array.isArray(e.errors)) {
    kind = ERROR_KINDS.invalid;
    errors = plain(e.errors).map((x) => ({ field: String(x.field), message: String(x.message) }));
  }
  return { type: MSG.error, ...fields, kind, errors, message: describe(e) };
}

/** Post an error; a fatal one also ends the current run (the page restarts this worker). */
function postError(e, fields, otherKind) {
  const msg = errorMsg(e, fields, otherKind);
  if (msg.kind === ERROR_KINDS.fatal) current = null;
  self.postMessage(msg);
}

/** An error the worker itself raises (bad message): a failed call, or refused input. */
function refuse(fields, field, message) {
  self.postMessage({ type: MSG.error, ...fields, kind: field ? ERROR_KINDS.invalid : ERROR_KINDS.failed,
    errors: field ? [{ field, message }] : [], message: field ? `${field}: ${message}` : message });
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

/** The new series points, keyed by the engine's own series names (Sim.take_series). */
function takeSeries(sim) {
  const s = sim.take_series();
  // Copy: the arrays may be views into wasm memory, whose buffer must never be transferred.
  const out = {};
  const transfer = [];
  for (const [k, src] of s instanceof Map ? s : Object.entries(s || {})) {
    const arr = Float64Array.from(src || []);
    out[k] = arr;
    transfer.push(arr.buffer);
  }
  return { series: out, transfer };
}

function startRun(msg) {
  if (current) { current.cancelled = true; freeRun(current); current = null; }
  const { id, side, experiment, key } = msg;
  if (!isSide(side)) return refuse({ id }, 'side', `${JSON.stringify(String(side)).slice(0, 40)} is not a side: allowed "a" or "b"`);
  let sim;
  try {
    sim = new wasm_bindgen.Sim(experiment, side);
  } catch (e) {
    return postError(e, { id, side, key });
  }
  current = { id, side, key, sim, cancelled: false, n: 256 };
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
    return postError(e, { id: run.id, side: run.side, key: run.key }, ERROR_KINDS.fatal);
  }
  self.postMessage({ type: MSG.progress, id: run.id, side: run.side, key: run.key, frac, series }, transfer);
  if (!finished) { yieldThen(() => slice(run)); return; }
  let report, schedstat;
  try {
    report = plain(run.sim.report());
    schedstat = plain(run.sim.schedstat());
  } catch (e) {
    freeRun(run);
    return postError(e, { id: run.id, side: run.side, key: run.key }, ERROR_KINDS.fatal);
  }
  freeRun(run);
  if (current === run) current = null;
  self.postMessage({ type: MSG.done, id: run.id, side: run.side, key: run.key, report, schedstat });
}

function reply(msg, fn) {
  try {
    self.postMessage({ type: msg.type, id: msg.id, ...fn() });
  } catch (e) {
    postError(e, { id: msg.id });
  }
}

function handle(msg) {
  if (!msg || typeof msg !== 'object') return;
  switch (msg.type) {
    case MSG.run: return startRun(msg);
    case MSG.cancel:
      if (current && (msg.id === undefined || current.id === msg.id)) {
        const run = current;
        run.cancelled = true;
        current = null;
        freeRun(run);
        self.postMessage({ type: MSG.cancelled, id: run.id, side: run.side, key: run.key });
      }
      return;
    case MSG.decode_link:
      return reply(msg, () => {
        const r = plain(wasm_bindgen.decode_link(String(msg.query ?? '')));
        return { experiment: r.experiment, errors: r.errors };
      });
    case MSG.encode_link:
      return reply(msg, () => ({ link: String(wasm_bindgen.encode_link(msg.experiment)) }));
    case MSG.validate:
      return reply(msg, () => {
        const { ok, errors, work } = plain(wasm_bindgen.validate(msg.experiment));
        return { ok, errors, work };
      });
    case MSG.topology:
      if (!isSide(msg.side)) return refuse({ id: msg.id }, 'side', 'allowed "a" or "b"');
      return reply(msg, () => ({ topology: plain(wasm_bindgen.topology(msg.experiment, msg.side, msg.cpu)) }));
    case MSG.topology_summary:
      return reply(msg, () => ({ summary: plain(wasm_bindgen.topology_summary(msg.experiment)) }));
    case MSG.compare:
      return reply(msg, () => ({ result: plain(wasm_bindgen.compare(msg.a, msg.b)) }));
    case MSG.sweep_cpus:
      return reply(msg, () => {
        const { ok, cpus, errors } = plain(wasm_bindgen.sweep_cpus(String(msg.text ?? '')));
        return { ok, cpus, errors };
      });
    case MSG.sweep_experiment:
      return reply(msg, () => ({ experiment: plain(wasm_bindgen.sweep_experiment(msg.experiment, msg.cpus)) }));
    case MSG.sweep_point:
      return reply(msg, () => ({ point: plain(wasm_bindgen.sweep_point(msg.cpus, msg.a, msg.b)) }));
    case MSG.repeat_seeds:
      return reply(msg, () => ({ seeds: plain(wasm_bindgen.repeat_seeds(msg.seed, msg.n)) }));
    case MSG.validation_plan:
      return reply(msg, () => ({ runs: plain(wasm_bindgen.validation_plan(Number(msg.seconds), Number(msg.repeats) >>> 0)) }));
    case MSG.validation_table:
      return reply(msg, () => {
        const { rows, headline } = plain(wasm_bindgen.validation_table(Number(msg.seconds), Number(msg.repeats) >>> 0, msg.reports));
        return { rows, headline };
      });
    case MSG.story_check:
      return reply(msg, () => ({ checks: plain(wasm_bindgen.story_check(String(msg.name ?? ''), msg.a, msg.b)) }));
    case MSG.percentile_bounds:
      return reply(msg, () => ({ bounds: plain(wasm_bindgen.percentile_bounds(msg.report)) }));
    case MSG.trace:
      if (!isSide(msg.side)) return refuse({ id: msg.id }, 'side', 'allowed "a" or "b"');
      return reply(msg, () => {
        const t = wasm_bindgen.run_trace(msg.experiment, msg.side, String(msg.format ?? 'pftrace'), msg.from ?? undefined, msg.to ?? undefined);
        // the bytes as they are (a copy out of wasm memory), the rest plain
        return { bytes: new Uint8Array(t.bytes), format: String(t.format), from_s: Number(t.from_s), to_s: Number(t.to_s),
          cut: !!t.cut, events: Number(t.events), summary: String(t.summary) };
      });
    case MSG.schedstat_diff:
      return reply(msg, () => ({ sections: plain(wasm_bindgen.schedstat_diff(msg.a, msg.b)) }));
    case MSG.link_note:
      return reply(msg, () => ({ note: wasm_bindgen.link_note(msg.experiment) ?? null }));
    case MSG.import_machine:
      return reply(msg, () => ({ machine: plain(wasm_bindgen.import_machine(String(msg.text ?? ''), String(msg.hardware ?? ''))) }));
    case MSG.sensitivity_plan:
      return reply(msg, () => ({ plan: plain(wasm_bindgen.sensitivity_plan(msg.experiment, msg.only ?? undefined)) }));
    case MSG.sensitivity_summary:
      return reply(msg, () => ({ summary: plain(wasm_bindgen.sensitivity_summary(msg.experiment, msg.only ?? undefined, msg.reports)) }));
    case MSG.curve_plan:
      return reply(msg, () => ({ plan: plain(wasm_bindgen.curve_plan(msg.experiment, String(msg.knob ?? ''), String(msg.values ?? ''), String(msg.symbol ?? ''))) }));
    case MSG.curve_line:
      return reply(msg, () => ({ line: plain(wasm_bindgen.curve_line(msg.curve, Number(msg.index) >>> 0, msg.reports)) }));
    case MSG.maxload_plan:
      return reply(msg, () => ({ plan: plain(wasm_bindgen.maxload_plan(msg.experiment, Number(msg.percentile), Number(msg.bound_us))) }));
    case MSG.maxload_step:
      return reply(msg, () => ({ step: plain(wasm_bindgen.maxload_step(msg.maxload, Number(msg.index) >>> 0, Number(msg.seed), msg.probes, msg.report ?? null)) }));
    case MSG.maxload_summary:
      return reply(msg, () => ({ summary: plain(wasm_bindgen.maxload_summary(msg.lines)) }));
    case MSG.repeat_table:
      return reply(msg, () => ({ table: plain(wasm_bindgen.repeat_table(msg.a, msg.b)) }));
    default:
      return refuse({ id: msg.id }, null, `unknown message type ${String(msg.type).slice(0, 40)}`);
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
    self.postMessage({ type: MSG.ready, presets });
    for (const m of early.splice(0)) handle(m);
    // optimized code for the first run (engine-warmup.js); it yields to any run at once
    self.warmUpEngine(wasm_bindgen.Sim, () => current !== null);
  } catch (e) {
    self.postMessage({ type: MSG.error, kind: ERROR_KINDS.fatal, errors: [], message: 'engine failed to load: ' + describe(e) });
  }
})();

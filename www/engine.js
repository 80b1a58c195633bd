// Page side of the worker protocol. The messages and their fields are in protocol.js (PROTOCOL),
// which engine-worker.js loads too.
// Two workers, one per side: side A's runs go to the first, side B's to the second, so the two sides
// of a comparison (and of each sweep point) simulate at the same time on two cores. Request/reply
// calls go to the first. A crash of either (trap, load failure, uncaught error) terminates both and
// starts fresh ones, rejecting pending calls; the caller keeps its form state.
//
// Jobs. A worker runs one Sim at a time, so the page runs one *job* at a time: `run` messages (sides,
// sweep points) sharing one run id. The A/B run and the scaling sweep are both jobs. Starting a job
// cancels the current one; `progress`, `done`, run `error` and `cancelled` messages reach only the job
// whose id they carry (late messages of an old job are dropped); a crash ends the job through its
// `crashed` handler.

import './protocol.js'; // sets globalThis.PROTOCOL (a plain script, so that the classic worker can load it)

/** @type {{MSG: Object<string, string>, ERROR_KINDS: Object<string, string>, isSide: (s: any) => boolean}} */
export const PROTOCOL = globalThis.PROTOCOL;
const { MSG, ERROR_KINDS, isSide } = PROTOCOL;

let nextId = 1;
const newId = () => nextId++;

/** An Error for a failed call or run: `kind` (PROTOCOL.ERROR_KINDS) and `errors` [{field, message}]. */
export function engineError(msg) {
  const e = new Error(msg.message || 'engine error');
  e.kind = msg.kind;
  e.errors = Array.isArray(msg.errors) ? msg.errors : [];
  return e;
}

export class Engine {
  /**
   * @param {object} handlers {ready(presets), crash(message, job)}
   */
  constructor(handlers) {
    this.h = handlers;
    this.pending = new Map(); // id -> {resolve, reject, type}
    this.workers = []; // [side A's, side B's]; the first also answers calls
    this.nReady = 0;
    this.ready = false;
    this.presets = null;
    this.job = null; // the current job: {id, kind, progress?, done?, error?, cancelled?, crashed?}
    this.start();
  }

  start() {
    this.ready = false;
    this.nReady = 0;
    this.workers = ['a', 'b'].map((side) => {
      const w = new Worker(new URL('./engine-worker.js', import.meta.url), { name: `schedplay-engine-${side}` });
      const live = () => this.workers.includes(w);
      w.onmessage = (ev) => { if (live()) this.dispatch(ev.data); };
      w.onerror = (ev) => {
        ev.preventDefault();
        if (live()) this.crash(`worker error: ${ev.message || 'unknown'}`);
      };
      w.onmessageerror = () => { if (live()) this.crash('worker sent an unreadable message'); };
      return w;
    });
  }

  /** The worker that runs `side` ('a' or 'b'; anything else is a bug of the caller). */
  workerFor(side) {
    if (!isSide(side)) throw new Error(`not a side: ${String(side)}`);
    return this.workers[side === 'b' ? 1 : 0];
  }

  /** Terminate both, end the current job, report, start fresh workers. */
  crash(message) {
    const old = this.workers;
    this.workers = [];
    for (const w of old) w.terminate();
    for (const [, p] of this.pending) p.reject(new Error(message));
    this.pending.clear();
    const job = this.job;
    this.job = null;
    job?.crashed?.(message);
    this.h.crash?.(message, job);
    this.start();
  }

  dispatch(msg) {
    if (!msg || typeof msg !== 'object') return;
    switch (msg.type) {
      case MSG.ready:
        if (++this.nReady < this.workers.length) return;
        this.ready = true;
        this.presets = msg.presets;
        this.h.ready?.(msg.presets);
        return;
      case MSG.error:
        // whether it is fatal comes from its kind, set by the worker from what was thrown
        if (msg.kind === ERROR_KINDS.fatal) { this.crash(`engine crashed: ${msg.message}`); return; }
        break;
      case MSG.progress: return this.forJob(msg, 'progress');
      case MSG.done: return this.forJob(msg, 'done');
      case MSG.cancelled: return; // cancelJob already ended the job on the page side
    }
    const p = this.pending.get(msg.id);
    if (p) {
      this.pending.delete(msg.id);
      if (msg.type === MSG.error) p.reject(engineError(msg));
      else p.resolve(msg);
      return;
    }
    if (msg.type === MSG.error && this.job && msg.id === this.job.id) {
      // a run was rejected (field errors) or failed: that ends the job, and the other side's run
      const job = this.job;
      this.job = null;
      for (const w of this.workers) w.postMessage({ type: MSG.cancel, id: job.id });
      job.error?.(engineError(msg), msg.side);
    }
  }

  forJob(msg, handler) {
    const job = this.job;
    if (job && msg.id === job.id) job[handler]?.(msg);
  }

  /** Request/reply call (a PROTOCOL.REQUESTS type): resolves with the reply message, rejects with
   * engineError(). */
  call(type, payload = {}) {
    const id = newId();
    if (!PROTOCOL.REQUESTS.includes(type)) return Promise.reject(new Error(`not a request: ${type}`));
    return new Promise((resolve, reject) => {
      const w = this.workers[0];
      if (!w) { reject(new Error('engine not running')); return; }
      this.pending.set(id, { resolve, reject, type });
      w.postMessage({ type, id, ...payload });
    });
  }

  /**
   * Start a job, cancelling the current one (its `cancelled('replaced')` runs).
   * handlers: {kind, progress(msg), done(msg), error(err, side), cancelled(reason), crashed(message)}; any
   * other keys are the caller's job state.
   */
  startJob(handlers) {
    this.cancelJob(this.job, 'replaced');
    const job = { ...handlers, id: newId() };
    this.job = job;
    return job;
  }

  /** Whether `job` is still the current job (not finished, cancelled, replaced or crashed). */
  isCurrent(job) { return !!job && this.job === job; }

  /** Run one side of `experiment` as part of `job` on that side's worker (ignored if the job is no
   * longer current). Sides A and B run concurrently. */
  run(job, experiment, side) {
    if (!this.isCurrent(job)) return;
    this.workerFor(side)?.postMessage({ type: MSG.run, id: job.id, experiment, side });
  }

  /** The job ended normally. */
  finishJob(job) { if (this.isCurrent(job)) this.job = null; }

  /**
   * Stop `job` (default: the current one); its `cancelled(reason)` handler runs. Reasons used by the
   * page: 'user' (Cancel / Esc), 'replaced' (another kind of job starts), 'restart' (the same kind
   * restarts). Returns whether anything stopped.
   */
  cancelJob(job = this.job, reason = 'user') {
    if (!this.isCurrent(job)) return false;
    this.job = null;
    for (const w of this.workers) w.postMessage({ type: MSG.cancel, id: job.id });
    job.cancelled?.(reason);
    return true;
  }
}

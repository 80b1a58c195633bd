// Page side of the worker protocol. The messages and their fields are in protocol.js (PROTOCOL),
// which engine-worker.js loads too.
// A pool of workers (poolSize(): navigator.hardwareConcurrency, at least 2, at most 8, and at most
// one per 256 MiB of half of navigator.deviceMemory where the browser tells it). Runs queue and go
// to the first idle worker, so the two sides of a comparison, its repeats and each sweep point's
// sides simulate at the same time on as many cores. Each run's result depends only on its scenario
// and seed, so which worker runs it never changes a byte. Request/reply calls go to the first
// worker. A crash of any (trap, load failure, uncaught error) terminates all and starts fresh ones,
// rejecting pending calls; the caller keeps its form state.
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

/** Workers in the pool: every core (at least 2, at most MAX_WORKERS), and no more than
 * MiB_PER_WORKER each in half of the device's memory when the browser reports it (deviceMemory is
 * in GiB; a 4096-CPU run's engine takes about 80 MiB, with its runtime). */
export const MAX_WORKERS = 8;
const MIB_PER_WORKER = 256;
export function poolSize(nav = globalThis.navigator) {
  const cores = Number(nav?.hardwareConcurrency) || 2;
  const mem = Number(nav?.deviceMemory);
  const byMem = mem > 0 ? Math.floor((mem * 1024) / 2 / MIB_PER_WORKER) : MAX_WORKERS;
  return Math.max(2, Math.min(cores, byMem, MAX_WORKERS));
}

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
    this.workers = []; // the pool; the first also answers calls
    this.busy = []; // per worker: the run it has (`key`) or null
    this.queue = []; // runs waiting for a worker: {job, msg}
    this.size = poolSize();
    this.nReady = 0;
    this.ready = false;
    this.presets = null;
    this.job = null; // the current job: {id, kind, progress?, done?, error?, cancelled?, crashed?}
    this.start();
  }

  start() {
    this.ready = false;
    this.nReady = 0;
    this.queue = [];
    this.busy = Array.from({ length: this.size }, () => null);
    this.workers = this.busy.map((_, i) => {
      const w = new Worker(new URL('./engine-worker.js', import.meta.url), { name: `schedplay-engine-${i}` });
      const live = () => this.workers.includes(w);
      w.onmessage = (ev) => { if (live()) this.dispatch(ev.data, this.workers.indexOf(w)); };
      w.onerror = (ev) => {
        ev.preventDefault();
        if (live()) this.crash(`worker error: ${ev.message || 'unknown'}`);
      };
      w.onmessageerror = () => { if (live()) this.crash('worker sent an unreadable message'); };
      return w;
    });
  }

  /** Hand queued runs to idle workers. */
  pump() {
    for (let i = 0; i < this.workers.length && this.queue.length; i++) {
      if (this.busy[i] !== null) continue;
      const { job, msg } = this.queue.shift();
      if (!this.isCurrent(job)) { i--; continue; }
      this.busy[i] = msg.key;
      this.workers[i].postMessage(msg);
    }
  }

  /** Forget queued runs and who runs what (the job ended; its workers were told to cancel). */
  idle() {
    this.queue = [];
    this.busy = this.busy.map(() => null);
  }

  /** Terminate all, end the current job, report, start fresh workers. */
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

  dispatch(msg, worker = -1) {
    if (!msg || typeof msg !== 'object') return;
    // A worker whose run ended (done, failed, cancelled) takes the next queued run.
    const ended = msg.type === MSG.done || msg.type === MSG.cancelled || (msg.type === MSG.error && msg.side !== undefined);
    if (ended && worker >= 0 && this.job && msg.id === this.job.id) {
      this.busy[worker] = null;
      queueMicrotask(() => this.pump());
    }
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
      this.idle();
      job.error?.(engineError(msg), msg.side, msg.key);
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

  /** Run one side of `experiment` as part of `job` on the next idle worker (ignored if the job is no
   * longer current). `key` names the run in its replies (default: the side). Runs queued together
   * run at the same time, as many as there are workers. */
  run(job, experiment, side, key = side) {
    if (!this.isCurrent(job)) return;
    if (!isSide(side)) throw new Error(`not a side: ${String(side)}`);
    this.queue.push({ job, msg: { type: MSG.run, id: job.id, experiment, side, key } });
    this.pump();
  }

  /** The job ended normally. */
  finishJob(job) { if (this.isCurrent(job)) { this.job = null; this.idle(); } }

  /**
   * Stop `job` (default: the current one); its `cancelled(reason)` handler runs. Reasons used by the
   * page: 'user' (Cancel / Esc), 'replaced' (another kind of job starts), 'restart' (the same kind
   * restarts). Returns whether anything stopped.
   */
  cancelJob(job = this.job, reason = 'user') {
    if (!this.isCurrent(job)) return false;
    this.job = null;
    for (const w of this.workers) w.postMessage({ type: MSG.cancel, id: job.id });
    this.idle();
    job.cancelled?.(reason);
    return true;
  }
}

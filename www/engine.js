// Page side of the worker protocol (see engine-worker.js for the message list).
// One worker runs everything; a crash (trap, load failure, uncaught error) terminates it and starts a
// fresh one, rejecting pending calls; the caller keeps its form state.
//
// Jobs. The worker runs one Sim at a time, so the page runs one *job* at a time: a sequence of
// `run` messages (sides, sweep points) sharing one run id. The A/B run and the scaling sweep are both
// jobs. Starting a job cancels the current one; `progress`, `done`, run `error` and `cancelled`
// messages reach only the job whose id they carry (late messages of an old job are dropped); a crash
// ends the job through its `crashed` handler.

let nextId = 1;
export const newId = () => nextId++;

export class Engine {
  /**
   * @param {object} handlers {ready(presets), crash(message, job)}
   */
  constructor(handlers) {
    this.h = handlers;
    this.pending = new Map(); // id -> {resolve, reject, type}
    this.worker = null;
    this.ready = false;
    this.presets = null;
    this.job = null; // the current job: {id, kind, progress?, done?, error?, cancelled?, crashed?}
    this.start();
  }

  start() {
    this.ready = false;
    const w = new Worker(new URL('./engine-worker.js', import.meta.url), { name: 'schedplay-engine' });
    this.worker = w;
    w.onmessage = (ev) => { if (this.worker === w) this.dispatch(ev.data); };
    w.onerror = (ev) => {
      ev.preventDefault();
      if (this.worker === w) this.crash(`worker error: ${ev.message || 'unknown'}`);
    };
    w.onmessageerror = () => { if (this.worker === w) this.crash('worker sent an unreadable message'); };
  }

  /** Terminate, end the current job, report, start a fresh worker. */
  crash(message) {
    const old = this.worker;
    this.worker = null;
    if (old) old.terminate();
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
      case 'ready':
        this.ready = true;
        this.presets = msg.presets;
        this.h.ready?.(msg.presets);
        return;
      case 'fatal':
        this.crash(`engine crashed: ${msg.message}`);
        return;
      case 'progress': return this.forJob(msg, 'progress');
      case 'done': return this.forJob(msg, 'done');
      case 'cancelled': return; // cancelJob already ended the job on the page side
    }
    const p = this.pending.get(msg.id);
    if (p) {
      this.pending.delete(msg.id);
      if (msg.type === 'error') {
        const e = new Error(msg.message || 'engine error');
        e.errors = msg.errors;
        p.reject(e);
      } else {
        p.resolve(msg);
      }
      return;
    }
    if (msg.type === 'error' && this.job && msg.id === this.job.id) {
      // a run was rejected (field errors) or failed: that ends the job
      const job = this.job;
      this.job = null;
      job.error?.(msg);
    }
  }

  forJob(msg, handler) {
    const job = this.job;
    if (job && msg.id === job.id) job[handler]?.(msg);
  }

  /** Request/reply call: resolves with the reply message. */
  call(type, payload = {}) {
    const id = newId();
    return new Promise((resolve, reject) => {
      if (!this.worker) { reject(new Error('engine not running')); return; }
      this.pending.set(id, { resolve, reject, type });
      this.worker.postMessage({ type, id, ...payload });
    });
  }

  /**
   * Start a job, cancelling the current one (its `cancelled('replaced')` runs).
   * handlers: {kind, progress(msg), done(msg), error(msg), cancelled(reason), crashed(message)}; any
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

  /** Run one side of `experiment` as part of `job` (ignored if the job is no longer current). */
  run(job, experiment, side) {
    if (!this.isCurrent(job)) return;
    this.worker?.postMessage({ type: 'run', id: job.id, experiment, side });
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
    this.worker?.postMessage({ type: 'cancel', id: job.id });
    job.cancelled?.(reason);
    return true;
  }
}

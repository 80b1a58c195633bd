// Page side of the worker protocol (see engine-worker.js for the message list).
// One worker runs everything; a crash (trap, load failure, uncaught error) terminates it and starts a
// fresh one, rejecting pending calls; the caller keeps its form state.

let nextId = 1;
export const newId = () => nextId++;

export class Engine {
  /**
   * @param {object} handlers {ready(presets), progress(msg), done(msg), error(msg), cancelled(msg), crash(message)}
   */
  constructor(handlers) {
    this.h = handlers;
    this.pending = new Map(); // id -> {resolve, reject, type}
    this.worker = null;
    this.ready = false;
    this.presets = null;
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

  /** Terminate, report, start a fresh worker. */
  crash(message) {
    const old = this.worker;
    this.worker = null;
    if (old) old.terminate();
    for (const [, p] of this.pending) p.reject(new Error(message));
    this.pending.clear();
    this.h.crash?.(message);
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
      case 'progress': return this.h.progress?.(msg);
      case 'done': return this.h.done?.(msg);
      case 'cancelled': return this.h.cancelled?.(msg);
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
    if (msg.type === 'error') this.h.error?.(msg);
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

  run(id, experiment, side) {
    this.worker?.postMessage({ type: 'run', id, experiment, side });
  }

  cancel(id) {
    this.worker?.postMessage({ type: 'cancel', id });
  }
}

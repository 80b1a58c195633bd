// Time left of a job (an A/B with its repeats, the model check, "How sure?", a curve): the runs'
// work is the engine's estimate of their events (validate's and the plans' `work`), so a job's
// speed is measured from its first progress messages across all its runs, queued ones included,
// and corrected with every message after. Before the first measure, a first guess from this
// browser's earlier jobs (wall time per estimated event per worker, kept in localStorage; no
// network) is shown and named as such.

const STORE = 'schedplay-eta-ms-per-event';
/** Too early to measure before this much wall time: the first slices include compile and start. */
const MEASURE_AFTER_MS = 500;

function words(sec) {
  if (sec < 60) return `about ${Math.max(1, Math.round(sec))} s left`;
  if (sec < 3600) return `about ${Math.round(sec / 60)} min left`;
  return `about ${(sec / 3600).toFixed(1)} h left`;
}

/** This browser's measured speed from earlier jobs: wall ms per estimated event on one worker, or
 * null before any job finished. */
export function storedRate() {
  try {
    const x = Number(globalThis.localStorage?.getItem(STORE));
    return Number.isFinite(x) && x > 0 ? x : null;
  } catch (_) { return null; }
}

export class Eta {
  /**
   * `work`: key -> the run's estimated events (a missing or unusable estimate counts as the mean of
   * the others, or 1 when none has one); `workers`: the pool's size (runs beyond it queue).
   */
  constructor(work, workers, now = performance.now()) {
    const vals = Object.values(work).map(Number).filter((x) => Number.isFinite(x) && x > 0);
    const mean = vals.length ? vals.reduce((a, b) => a + b, 0) / vals.length : 1;
    this.work = Object.fromEntries(Object.entries(work).map(([k, w]) => [k, Number(w) > 0 ? Number(w) : mean]));
    this.total = Object.values(this.work).reduce((a, b) => a + b, 0);
    this.parallel = Math.max(1, Math.min(Number(workers) || 1, Object.keys(this.work).length));
    this.frac = {};
    this.started = now;
    this.prior = storedRate();
  }

  /** A run's fraction done (0..1). */
  set(key, frac) {
    if (key in this.work) this.frac[key] = Math.max(0, Math.min(1, Number(frac) || 0));
  }

  /** The estimated events done so far. */
  done() {
    return Object.entries(this.frac).reduce((acc, [k, f]) => acc + f * this.work[k], 0);
  }

  /** The job's fraction done, each run weighed by its work. */
  fraction() {
    return this.total > 0 ? this.done() / this.total : 0;
  }

  /** "about 40 s left", "about 3 min left (first guess)", or '' (nothing to go by yet). */
  text(now = performance.now()) {
    const elapsed = now - this.started;
    const done = this.done();
    if (done >= this.total) return '';
    if (done > 0 && elapsed >= MEASURE_AFTER_MS) return words(((this.total - done) * elapsed) / done / 1000);
    if (this.prior) {
      const left = (this.total * this.prior) / this.parallel - elapsed;
      return `${words(Math.max(1000, left) / 1000)} (first guess from earlier runs)`;
    }
    return '';
  }

  /** At the end of a job that ran to completion: its speed becomes the next job's first guess. */
  finish(now = performance.now()) {
    const elapsed = now - this.started;
    if (!(elapsed > MEASURE_AFTER_MS && this.total > 0)) return;
    const rate = (elapsed * this.parallel) / this.total;
    // smoothed, so one job on a busy machine does not decide the next guess alone
    const next = this.prior ? 0.5 * this.prior + 0.5 * rate : rate;
    try { globalThis.localStorage?.setItem(STORE, String(next)); } catch (_) { /* private mode */ }
    this.prior = next;
  }
}

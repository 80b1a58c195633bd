/* schedplay engine worker: the warm-up run (classic script, loaded by engine-worker.js).
 *
 * Why: V8 first runs a fresh wasm module's functions in its baseline compiler and recompiles the hot
 * ones optimized only after they have run a while (dynamic tiering). A user's first run in a fresh
 * worker then spends its first simulated milliseconds, the ones the first chart point waits for, in
 * slow code: in Node, the first 10 simulated ms of gnr-2s-96c-snc3 oltp took ~730 ms cold and ~370
 * ms warm, and ~480 ms after this warm-up (measured with wasm-bindgen --target nodejs builds). So each worker runs a small
 * scenario of the same code paths (balancing over NUMA domains, wakeups, the line model) once the
 * engine is up, in slices, and drops it the moment real work arrives. It shares nothing with later
 * runs: every Sim is built from its own scenario and seed, so results are unchanged.
 */
'use strict';

(() => {
  /** 2 sockets x 2 nodes x 4 cores x SMT2 (32 CPUs), OLTP, 10 simulated ms: ~175 ms in Node. */
  const WARMUP_EXPERIMENT = {
    v: 1, hz: 1000, seconds: 0.01, seed: 1, a: [], b: [],
    machine: { preset: 'custom', sockets: 2, cores_per_socket: 8, nodes_per_socket: 2 },
    workload: { name: 'oltp' },
  };
  /** Events per step: a few ms of work, so real work waits at most that long. */
  const STEP_EVENTS = 2000;
  /** Never longer than this in total, whatever the machine. */
  const BUDGET_MS = 400;

  // Its own channel: the worker's yield slot belongs to the runs.
  const channel = new MessageChannel();
  let next = null;
  channel.port1.onmessage = () => { const f = next; next = null; if (f) f(); };

  /**
   * Warm `Sim` up while `busy()` is false; stops at the first slice where it is true, when the run
   * ends, or after BUDGET_MS. Errors end it silently: the warm-up is never worth a message.
   */
  self.warmUpEngine = function warmUpEngine(Sim, busy) {
    let sim;
    try { sim = new Sim(WARMUP_EXPERIMENT, 'a'); } catch (_) { return; }
    const t0 = performance.now();
    const slice = () => {
      let done = busy() || performance.now() - t0 > BUDGET_MS;
      if (!done) {
        try { done = sim.step(STEP_EVENTS); } catch (_) { done = true; }
      }
      if (done) { try { sim.free(); } catch (_) { /* already gone */ } return; }
      next = slice;
      channel.port2.postMessage(0);
    };
    slice();
  };
})();

// The reference scenarios of `schedplay bench`, compiled to wasm and run in Node.js (the engine
// the page's worker runs), so native and wasm speeds stand side by side.
// Usage: node scripts/bench-wasm.mjs <dir with wasm-bindgen --target nodejs output> [seconds]
// Then the BPF interpreter's two benchmark workloads (tests/bpf_bench.rs runs the same code natively).
// Env: BENCH_RUNS (runs per scenario, default 3), BENCH_ONLY (only scenarios whose name contains it;
// `bpf`: only the interpreter's)
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const dir = resolve(process.argv[2] ?? 'target/bench-node');
const seconds = Number(process.argv[3] ?? 0.5);
const require = createRequire(import.meta.url);
const wasm = require(`${dir}/worker.js`);

const base = { v: 1, hz: 1000, seconds, seed: 1, a: [], b: [] };
const scenarios = [
  ['gnr-2s-snc3/oltp', { ...base, machine: { preset: 'gnr-2s-snc3' }, workload: { name: 'oltp' } }],
  ['gnr-2s-96c-snc3/oltp', { ...base, machine: { preset: 'gnr-2s-96c-snc3' }, workload: { name: 'oltp' } }],
  ['milan-2s/oltp+cache-aware', { ...base, machine: { preset: 'milan-2s' }, workload: { name: 'oltp' }, a: ['cache-aware'] }],
  ['custom-4096/spin', { ...base, machine: { preset: 'custom', sockets: 8, cores_per_socket: 256, nodes_per_socket: 2 }, workload: { name: 'spin' } }],
];
// the scenarios the page's stories run, side A, as `schedplay bench` runs them: each story's own
// experiment at `seconds`, its warm-up kept where it fits in half the run, and seed 002's hackbench
const story = (name) => {
  const e = wasm.presets().stories.find((s) => s.name === name).experiment;
  return { ...e, seconds, warmup: Math.min(e.warmup ?? 0, seconds / 2) };
};
scenarios.push(
  ['story/sched-balance-running', story('sched-balance-running')],
  ['story/cache-aware-false-sharing', story('cache-aware-false-sharing')],
  ['milan-2s/hackbench+cache-aware', { ...base, machine: { preset: 'milan-2s' }, workload: { name: 'hackbench' }, a: ['cache-aware'] }],
);
const ONLY = process.env.BENCH_ONLY ?? '';

console.log(`${'scenario (wasm, Node ' + process.version + ')'.padEnd(20)}  CPUs   sim s/wall s      events/s   ns/switch   ns/event   RSS MiB`);
// Wall and CPU time are the medians of RUNS runs: single runs on a shared 2-core VM vary by ±30%.
// ns/switch and ns/event are CPU time (process.cpuUsage: user + system) per simulated context
// switch (rq->nr_switches summed, the report's counter) and per simulated event: figures that do
// not move with the workload's intensity, unlike sim s / wall s.
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
for (const [name, exp] of scenarios.filter(([n]) => n.includes(ONLY))) {
  const walls = [];
  const cpus = [];
  let r;
  for (let i = 0; i < RUNS; i++) {
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    const sim = new wasm.Sim(exp, 'a');
    while (!sim.step(200000)) { /* slices, as the worker runs them */ }
    r = sim.report();
    walls.push(Number(process.hrtime.bigint() - t0) / 1e9);
    const c = process.cpuUsage(c0);
    cpus.push((c.user + c.system) / 1e6);
    sim.free();
  }
  const wall = walls.sort((x, y) => x - y)[walls.length >> 1];
  const cpu = cpus.sort((x, y) => x - y)[cpus.length >> 1];
  const switches = Math.max(1, r.counters.context_switches ?? 0);
  const rss = process.memoryUsage().rss / 1048576;
  console.log(`${name.padEnd(32)} ${String(r.machine.cpus).padStart(5)} ${(r.sim_seconds / wall).toFixed(3).padStart(14)} ${Math.round(r.events / wall).toString().padStart(13)} ${Math.round(cpu * 1e9 / switches).toString().padStart(11)} ${(cpu * 1e9 / Math.max(1, r.events)).toFixed(1).padStart(10)} ${rss.toFixed(1).padStart(9)}`);
}

// The BPF interpreter (docs/MODEL.md §13c): instructions per second, best of 5 as natively
// (`cargo test --release --test bpf_bench -- --ignored --nocapture`): the synthetic ALU/stack/helper
// loop, and the vtime fixture's 3001 clang-compiled callbacks with their kfunc calls (load included).
if ('bpf'.includes(ONLY) || ONLY === '') {
  const vtime = readFileSync(resolve('tests/bpf/vtime.bpf.o'));
  for (const [name, which, calls] of [['bpf interpreter, synthetic loop', 'loop', 0], ['bpf vtime fixture replay', 'vtime', 3001]]) {
    let best = 0;
    let callsPerS = 0;
    for (let i = 0; i < 5; i++) {
      const t0 = process.hrtime.bigint();
      const insns = wasm.bpf_bench(which, vtime);
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      if (insns / secs > best) { best = insns / secs; callsPerS = calls / secs; }
    }
    console.log(`${name.padEnd(32)} ${(best / 1e6).toFixed(1)} M instructions/s (best of 5)${calls ? `, ${(callsPerS / 1e6).toFixed(2)} M callbacks/s` : ''}`);
  }
}

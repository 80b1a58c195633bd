// Benchmark (not a test) of the Trunk-built page (dist/) in headless Chromium: how long from clicking
// Run to the first chart point (the target: within 1 s), and to the run's end.
// Usage: BASE_URL=http://127.0.0.1:8765/ node scripts/bench-page.mjs
// Env: BENCH_RUNS (runs per scenario, default 5), CHROMIUM (default /usr/bin/chromium).
// Every run is a fresh page (a user's first Run: wasm not yet tiered up); times are taken inside the
// page with performance.now(), so Playwright's round trips are not counted.
import { chromium } from 'playwright-core';

const BASE_URL = process.env.BASE_URL ?? 'http://127.0.0.1:8080/';
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const RUN_TIMEOUT = 300000;
// [label, link query]; each runs with the scenario's own seconds, as a user clicking Run would.
const SCENARIOS = [
  ['gnr-2s-snc3/oltp', '?v=1&machine=gnr-2s-snc3&workload=oltp'], // also the page's default
  ['milan-2s/oltp+cas', '?v=1&machine=milan-2s&workload=oltp&a=cache-aware&b=cache-aware,cas-skip-many-threads'],
];

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

/** One A/B run on a fresh page: {cpus, seconds, firstMs, doneMs}. */
async function once(query) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console.error: ${m.text()}`); });
  try {
    await page.goto(new URL(query, BASE_URL).href);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
    await page.evaluate(() => {
      const t = (window.__bench = {});
      // capture: runs before the form's submit handler that starts the run
      document.getElementById('run').addEventListener('click', () => { t.click = performance.now(); }, { capture: true, once: true });
      // charts.js sets data-points right after uPlot's setData; uPlot draws in a microtask queued before
      // this observer's, so the first point is on the canvas when it fires (painted in that frame)
      const chart = document.getElementById('chart-throughput');
      new MutationObserver(() => { if (Number(chart.dataset.points) > 0) t.first ??= performance.now(); })
        .observe(chart, { attributes: true, attributeFilter: ['data-points'] });
      new MutationObserver(() => { if (document.body.dataset.state === 'done') t.done ??= performance.now(); })
        .observe(document.body, { attributes: true, attributeFilter: ['data-state'] });
    });
    await page.click('#run');
    await page.waitForSelector('body[data-state="done"], body[data-state="error"]', { timeout: RUN_TIMEOUT });
    const r = await page.evaluate(() => ({
      ...window.__bench,
      state: document.body.dataset.state,
      status: document.getElementById('status').textContent,
      cpus: parseInt(document.getElementById('machine-summary').textContent, 10),
      seconds: Number(document.getElementById('seconds').value),
    }));
    if (r.state !== 'done' || problems.length) throw new Error(`run failed (${r.state}: ${r.status}) ${problems.join('; ')}`);
    return { cpus: r.cpus, seconds: r.seconds, firstMs: r.first - r.click, doneMs: r.done - r.click };
  } finally {
    await page.context().close();
  }
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const results = SCENARIOS.map(() => []);
try {
  // Interleaved rather than one scenario after the other, so that load drifting on the machine
  // (another build, thermal) spreads over all scenarios.
  for (let i = 0; i < RUNS; i++) {
    for (const [k, [label, query]] of SCENARIOS.entries()) {
      const r = await once(query);
      results[k].push(r);
      console.error(`run ${i + 1}/${RUNS} ${label}: first point ${r.firstMs.toFixed(0)} ms, done ${r.doneMs.toFixed(0)} ms`);
    }
  }
} finally {
  await browser.close();
}

console.log(`page (headless Chromium, ${RUNS} fresh-page runs each; target: first point ≤ 1000 ms after Run)`);
console.log(`${'scenario'.padEnd(18)} ${'CPUs'.padStart(5)} ${'sim s'.padStart(6)}  ${'first point ms: median (min–max)'.padEnd(33)} ${'done ms'.padStart(8)} ${'sim s/wall s'.padStart(13)}`);
for (const [k, [label]] of SCENARIOS.entries()) {
  const rs = results[k];
  const first = rs.map((r) => r.firstMs);
  const range = `${median(first).toFixed(0)} (${Math.min(...first).toFixed(0)}–${Math.max(...first).toFixed(0)})`;
  // A and B both simulate `seconds`; wall time is Run to done, so it includes everything the page does
  const rate = median(rs.map((r) => (2 * r.seconds) / (r.doneMs / 1000)));
  console.log(`${label.padEnd(18)} ${String(rs[0].cpus).padStart(5)} ${String(rs[0].seconds).padStart(6)}  ${range.padEnd(33)} ${median(rs.map((r) => r.doneMs)).toFixed(0).padStart(8)} ${rate.toFixed(3).padStart(13)}`);
}

// Benchmark (not a test): whole-page time of a 10-repeat A/B (gnr-2s-snc3, oltp, 1 simulated s per
// run, 20 runs) in headless Chromium, from the Run click to the repeat table, with the engine's pool
// (poolSize(): one worker per core, 2..8). Experiments per minute = 60 / that time.
// Usage: BASE_URL=http://127.0.0.1:8765/ node scripts/bench-repeats.mjs   (e.g. via with-dist-server.sh)
// Env: REPEATS (default 10), SECONDS (default 1), CHROMIUM (default /usr/bin/chromium).
import { chromium } from 'playwright-core';

const BASE_URL = process.env.BASE_URL ?? 'http://127.0.0.1:8080/';
const REPEATS = Number(process.env.REPEATS ?? 10);
const SECONDS = Number(process.env.SECONDS ?? 1);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
const page = await browser.newPage();
await page.goto(new URL(`?v=1&machine=gnr-2s-snc3&workload=oltp&a=&b=skip-not-due&seconds=${SECONDS}&seed=1&repeats=${REPEATS}`, BASE_URL).href);
await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
const workers = await page.getAttribute('body', 'data-workers');
const t0 = await page.evaluate(() => performance.now());
await page.click('#run');
await page.waitForSelector('body[data-state="done"], body[data-state="error"]', { timeout: 900000 });
const t1 = await page.evaluate(() => performance.now());
const state = await page.getAttribute('body', 'data-state');
const s = (t1 - t0) / 1000;
console.log(`page: ${REPEATS}-repeat A/B gnr-2s-snc3 oltp ${SECONDS} s: ${state} in ${s.toFixed(1)} s with ${workers} workers (${(60 / s).toFixed(2)} experiments/min; hardwareConcurrency ${await page.evaluate(() => navigator.hardwareConcurrency)})`);
await browser.close();

// End-to-end tests of the Trunk-built page (dist/) served on loopback, driven by playwright-core with
// Debian's chromium. Usage: BASE_URL=http://127.0.0.1:8765/ node e2e/e2e.mjs [name-filter]
// Env: E2E_SECONDS (simulated seconds per run, default 0.2), E2E_OUT (screenshots, default e2e/out),
//      CHROMIUM (default /usr/bin/chromium), E2E_RUN_TIMEOUT_MS (per A/B run, default 90000).
// Prints one line per test and `N passed, N failed` last; exits non-zero on any failure.
import { chromium } from 'playwright-core';
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';

const BASE_URL = process.env.BASE_URL ?? 'http://127.0.0.1:8080/';
const OUT = process.env.E2E_OUT ?? 'e2e/out';
const SECONDS = process.env.E2E_SECONDS ?? '0.2';
const RUN_TIMEOUT = Number(process.env.E2E_RUN_TIMEOUT_MS ?? 90000);
const FILTER = process.argv[2] ?? '';
mkdirSync(OUT, { recursive: true });

const userDataDir = mkdtempSync(join(tmpdir(), 'schedplay-e2e-'));
const t0 = Date.now();
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 720 },
  acceptDownloads: true,
});
const origin = new URL(BASE_URL).origin;
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });

/** New page with console-error / page-error / dialog collection. */
async function openPage(query = '') {
  const page = await context.newPage();
  const problems = [];
  const dialogs = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console.error: ${m.text()}`); });
  page.on('dialog', (d) => { dialogs.push(`${d.type()}: ${d.message()}`); d.dismiss().catch(() => {}); });
  page.on('worker', (w) => w.on('console', (m) => { if (m.type() === 'error') problems.push(`worker console.error: ${m.text()}`); }));
  await page.goto(new URL(query, BASE_URL).href);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
  return { page, problems, dialogs };
}

async function runAB(page) {
  await page.click('#run');
  await page.waitForSelector('body[data-state="running"], body[data-state="done"]', { timeout: 10000 });
  await page.waitForSelector('body[data-state="done"], body[data-state="error"]', { timeout: RUN_TIMEOUT });
  const state = await page.getAttribute('body', 'data-state');
  if (state !== 'done') throw new Error(`run ended in state ${state}: ${await page.textContent('#status')} ${await page.textContent('#other-errors')}`);
}

const SUMMARY_IDS = ['a', 'b', 'delta'].flatMap((s) => ['throughput', 'contention', 'lat-avg', 'lat-p95', 'lat-max'].map((m) => `summary-${s}-${m}`));

async function summary(page) {
  return page.evaluate((ids) => {
    const out = {};
    for (const id of ids) { const el = document.getElementById(id); out[id] = { text: el.textContent, value: el.dataset.value ?? null }; }
    out.hashA = document.getElementById('card-a').dataset.reportHash ?? null;
    out.hashB = document.getElementById('card-b').dataset.reportHash ?? null;
    return out;
  }, SUMMARY_IDS);
}

const state = {};
const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test('story run: B beats A, live charts, no console errors', async () => {
  const { page, problems } = await openPage();
  state.page = page;
  const story = page.locator('#stories button.story').first();
  state.storyTitle = await story.textContent();
  await story.click();
  await page.fill('#seconds', SECONDS);
  await page.waitForFunction(() => /machine=/.test(location.search), null, { timeout: 5000 });
  await runAB(page);
  const s = await summary(page);
  state.summary = s;
  const a = Number(s['summary-a-throughput'].value), b = Number(s['summary-b-throughput'].value);
  assert.ok(Number.isFinite(a) && Number.isFinite(b), `throughputs are numbers: ${JSON.stringify(s)}`);
  assert.ok(b > a, `story "${state.storyTitle}": B throughput ${b} > A ${a}`);
  assert.notEqual(s['summary-delta-throughput'].text, '–');
  const pts = await page.evaluate(() => {
    const p = window.schedplay.charts.plots;
    const nn = (arr) => arr.filter((v) => v != null).length;
    return { x: p.throughput.data[0].length, ta: nn(p.throughput.data[1]), tb: nn(p.throughput.data[2]), ca: nn(p.contention.data[1]), cb: nn(p.contention.data[2]) };
  });
  assert.ok(pts.x > 0 && pts.ta > 0 && pts.tb > 0 && pts.ca > 0 && pts.cb > 0, `uPlot has points: ${JSON.stringify(pts)}`);
  assert.ok(await page.locator('#profile .prof-row').count() > 0, 'profile rows');
  assert.ok(Number(await page.getAttribute('#heatmap', 'data-cpus')) > 0, 'heatmap drew CPUs');
  // a CPU click shows its sched-domain tree
  await page.locator('#heatmap').click({ position: { x: 4, y: 18 } });
  await page.waitForSelector('#domains li.domain', { timeout: 10000 });
  // c2c offsets expand
  const expand = page.locator('#c2c button.expand').first();
  if (await expand.count()) {
    await expand.click();
    assert.ok(await page.locator('#c2c tr.off-row:not([hidden])').count() > 0, 'c2c offsets expand');
  }
  // JSON export is a download of the whole bundle
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
  const exported = JSON.parse(readFileSync(await dl.path(), 'utf8'));
  assert.equal(String(exported.b.report_hash), s.hashB);
  const [dl2] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
  assert.match(readFileSync(await dl2.path(), 'utf8'), /^side,section,name,field,value\n/);
  await page.screenshot({ path: join(OUT, 'story-run-1280x720.png') });
  await page.screenshot({ path: join(OUT, 'story-run-full.png'), fullPage: true });
  assert.deepEqual(problems, []);
});

test('share link reproduces identical numbers', async () => {
  const page = state.page;
  assert.ok(page, 'needs the first test');
  await page.click('#share');
  await page.waitForFunction(() => document.getElementById('share').dataset.link, null, { timeout: 5000 });
  const link = await page.getAttribute('#share', 'data-link');
  assert.equal(link, page.url(), 'share link == address bar');
  assert.equal(await page.inputValue('#share-url'), link);
  const clip = await page.evaluate(() => navigator.clipboard.readText().catch((e) => `clipboard error: ${e}`));
  assert.equal(clip, link, 'clipboard holds the link');
  const { page: p2, problems } = await openPage(link);
  for (const id of ['machine', 'workload', 'seconds', 'seed', 'sockets', 'cores_per_socket', 'smt', 'nodes_per_socket', 'cores_per_llc', 'hz']) {
    assert.equal(await p2.inputValue(`#${id}`), await page.inputValue(`#${id}`), `field ${id} restored`);
  }
  const checked = (p) => p.evaluate(() => [...document.querySelectorAll('#patches input:checked')].map((e) => `${e.className}:${e.dataset.patch}`).join(' '));
  assert.equal(await checked(p2), await checked(page), 'patch checkboxes restored');
  assert.equal(p2.url(), link, 'canonical link is stable');
  await runAB(p2);
  assert.deepEqual(await summary(p2), state.summary);
  assert.deepEqual(problems, []);
  await p2.close();
});

test('bad link values: field messages, rest loads', async () => {
  const { page, problems } = await openPage('?v=1&machine=nope&seconds=-1&seed=7&workload=hackbench&hz=250');
  const msg = async (f) => (await page.textContent(`[data-error-for="${f}"]`)).trim();
  assert.ok((await msg('machine')).length > 0, 'machine error shown');
  assert.ok((await msg('seconds')).length > 0, 'seconds error shown');
  assert.ok(await page.isVisible('[data-error-for="machine"]'));
  assert.equal(await page.inputValue('#seed'), '7');
  assert.equal(await page.inputValue('#workload'), 'hackbench');
  assert.equal(await page.inputValue('#hz'), '250');
  assert.ok((await page.inputValue('#machine')).length > 0, 'machine fell back to a preset');
  assert.ok(Number(await page.inputValue('#seconds')) > 0, 'seconds fell back to a default');
  assert.ok(await page.locator('#workload-knobs input, #workload-knobs select').count() > 0, 'hackbench knobs rendered');
  await page.screenshot({ path: join(OUT, 'bad-link.png') });
  assert.deepEqual(problems, []);
  await page.close();
});

test('hostile links execute nothing', async () => {
  const payloads = [
    '<script>window.__pwned=1</script>',
    '"><img src=x onerror="window.__pwned=2">',
    "'><svg onload=window.__pwned=3>",
    'javascript:window.__pwned=4;alert(1)',
    '<iframe src="javascript:parent.__pwned=5"></iframe>',
  ];
  const keys = ['machine', 'workload', 'seed', 'seconds', 'a', 'b', 'mode', 'clients'];
  const queries = [];
  for (const p of payloads) {
    queries.push(keys.map((k) => `${k}=${encodeURIComponent(p)}`).join('&'));
    queries.push(`v=1&${encodeURIComponent(p)}=1&machine=${encodeURIComponent(p)}`);
  }
  for (const q of queries) {
    const { page, problems, dialogs } = await openPage(`?${q}`);
    await page.click('#share');
    await page.waitForTimeout(150);
    const r = await page.evaluate(() => ({
      pwned: window.__pwned ?? null,
      imgs: document.querySelectorAll('img, svg, iframe').length,
      scripts: [...document.scripts].map((s) => s.getAttribute('src')),
      errorsShown: [...document.querySelectorAll('[data-error-for]')].filter((e) => e.textContent.trim()).length,
    }));
    assert.equal(r.pwned, null, `payload ran for ${q}`);
    assert.equal(r.imgs, 0, `markup injected for ${q}`);
    assert.deepEqual(r.scripts, ['./www/app.js']);
    assert.ok(r.errorsShown > 0, `errors shown for ${q}`);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(problems, []);
    await page.close();
  }
});

test('cancel (Esc) stops a run; Enter runs again', async () => {
  const { page, problems } = await openPage();
  await page.fill('#seconds', '5');
  await page.click('#run');
  await page.waitForSelector('body[data-state="running"]');
  await page.waitForFunction(() => document.getElementById('progress').value > 0, null, { timeout: 30000 });
  await page.keyboard.press('Escape');
  await page.waitForSelector('body[data-state="cancelled"]', { timeout: 5000 });
  const v = await page.evaluate(() => document.getElementById('progress').value);
  await page.waitForTimeout(500);
  assert.equal(await page.evaluate(() => document.getElementById('progress').value), v, 'no progress after cancel');
  await page.fill('#seconds', SECONDS);
  await page.focus('#seed');
  await page.keyboard.press('Enter');
  await page.waitForSelector('body[data-state="done"]', { timeout: RUN_TIMEOUT });
  assert.deepEqual(problems, []);
  await page.close();
});

test('worker crash: page says so, restarts the worker, keeps the form', async () => {
  const { page, problems } = await openPage();
  await page.fill('#seed', '42');
  await page.fill('#seconds', SECONDS);
  await page.waitForFunction(() => /seed=42/.test(location.search), null, { timeout: 5000 });
  const workers = page.workers();
  assert.equal(workers.length, 1, 'one engine worker');
  // an uncaught error inside the worker (stands in for a trap that escapes the run loop)
  await workers[0].evaluate(() => { setTimeout(() => { throw new Error('e2e: simulated worker crash'); }, 0); });
  await page.waitForSelector('#engine-error:not([hidden])', { timeout: 10000 });
  assert.match(await page.textContent('#engine-error'), /simulated worker crash/);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
  assert.equal(await page.inputValue('#seed'), '42', 'form kept');
  // the fresh worker runs
  await runAB(page);
  // and a 'fatal' report from the engine (what the worker posts when wasm traps) restarts it too
  await page.workers().at(-1).evaluate(() => self.postMessage({ type: 'fatal', message: 'e2e: RuntimeError: unreachable' }));
  await page.waitForFunction(() => /unreachable/.test(document.getElementById('engine-error').textContent), null, { timeout: 10000 });
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
  assert.equal(await page.inputValue('#seed'), '42', 'form kept');
  assert.deepEqual(problems, []);
  await page.close();
});

test('screenshots: dark mode and phone', async () => {
  const page = state.page;
  assert.ok(page, 'needs the first test');
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForTimeout(200);
  await page.screenshot({ path: join(OUT, 'dark-1280x720.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(200);
  await page.screenshot({ path: join(OUT, 'phone-390.png'), fullPage: true });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `no horizontal scroll on a phone (overflow ${overflow}px)`);
});

let passed = 0, failed = 0;
try {
  for (const t of tests) {
    if (FILTER && !t.name.includes(FILTER)) continue;
    const s = Date.now();
    try {
      await t.fn();
      passed++;
      console.log(`ok - ${t.name} (${((Date.now() - s) / 1000).toFixed(1)}s)`);
    } catch (e) {
      failed++;
      console.log(`not ok - ${t.name} (${((Date.now() - s) / 1000).toFixed(1)}s)\n  ${String(e?.stack || e).split('\n').slice(0, 6).join('\n  ')}`);
    }
  }
} finally {
  await context.close().catch(() => {});
  rmSync(userDataDir, { recursive: true, force: true });
}
console.log(`e2e time ${((Date.now() - t0) / 1000).toFixed(1)}s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || !passed ? 1 : 0);

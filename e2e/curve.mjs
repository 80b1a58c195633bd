// e2e checks of issue 43 item 4: the load curve. "Load curve" runs the form's A/B over a workload
// knob's values on the worker pool, point by point, with progress and Cancel; its lines are
// `schedplay curve --json`'s for the same scenario (when the release binary is built); bad input is
// refused by field; a story's curve comes with its knob, values and where its report sits. Registered
// by e2e.mjs, whose helpers it uses. A small machine at short seconds keeps it fast on 2 cores.
// Screenshots of the seed-000 story's curve (8 runs of 0.6 s on 384 CPUs: minutes) only with
// E2E_CURVE_SHOTS=1: OUT/i43-curve-story-*.png, 1280x800 and 390x844, light and dark.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { assertContrast } from './page-honesty.mjs';
import { shots } from './shots.mjs';

// Sets the run's seconds; a story's warm-up (steady state) that would not fit in them is set to 0
// first, so a short test run measures from boot instead of being refused.
async function fillSeconds(page, s) {
  const w = (await page.inputValue('#warmup')).trim();
  if (w !== '' && w !== 'auto' && !(Number(w) < Number(s))) await page.fill('#warmup', '0');
  await page.fill('#seconds', s);
}


const BIN = process.env.SCHEDPLAY_BIN ?? 'target/release/schedplay';
const SCENARIO = ['--machine', 'custom', '--sockets', '2', '--cores-per-socket', '4', '--workload', 'oltp', '--set', 'client=remote',
  '--set', 'clients=16', '--b', 'skip-not-due', '--seconds', '0.02'];
const QUERY = 'v=1&machine=custom&sockets=2&cores_per_socket=4&hz=1000&workload=oltp&client=remote&clients=16&a=&b=skip-not-due&seconds=0.02&seed=1';

const state = (page) => page.getAttribute('#curve', 'data-state');
const label = (page) => page.textContent('#curve-progress-label');

async function runCurve(page, timeout) {
  await page.click('#curve-run');
  await page.waitForSelector('#curve[data-state="done"], #curve[data-state="error"]', { timeout });
  assert.equal(await state(page), 'done', await page.textContent('#curve-error'));
}

export function registerCurve({ test, openPage, runAB, OUT, RUN_TIMEOUT }) {
  test('i43 load curve: points arrive on the pool, the CLI\'s lines to the bit, defaults ½× to 4×, bad knobs and values named; Cancel stops it', async () => {
    const haveBin = existsSync(BIN);
    const query = haveBin ? execFileSync(BIN, ['link', '--base', 'x/', ...SCENARIO], { encoding: 'utf8' }).trim().replace(/^x\/\?/, '') : QUERY;
    const { page, problems } = await openPage(`?${query}`);
    // the workload's integer knobs only (client is an enum knob)
    const knobs = await page.$$eval('#curve-knob option', (os) => os.map((o) => o.value));
    assert.deepEqual(knobs, ['clients', 'ws_kib', 'mem_bound_pct']);
    assert.equal(await page.inputValue('#curve-knob'), 'clients');
    assert.ok(await page.isHidden('#curve-where'), 'no story: no "where"');
    // defaults: half to four times the knob's value (16)
    await runCurve(page, RUN_TIMEOUT);
    assert.equal(await page.getAttribute('#curve', 'data-points'), '4');
    assert.equal(await page.getAttribute('#curve', 'data-runs'), '8');
    assert.deepEqual(await page.$$eval('#curve-table tbody tr', (rs) => rs.map((r) => r.dataset.value)), ['8', '16', '32', '64']);
    assert.equal(await label(page), 'done: 4 points, 8 runs');
    // typed values, every point on the chart and in the table
    await page.fill('#curve-values', '8, 16, 32');
    // the progress of a run that arrives point by point: record the points as they come
    await page.evaluate(() => {
      window.__curveSeen = [];
      const el = document.getElementById('curve-chart');
      new MutationObserver(() => window.__curveSeen.push(Number(el.dataset.pointsB))).observe(el, { attributes: true, attributeFilter: ['data-points-b'] });
    });
    await runCurve(page, RUN_TIMEOUT);
    const chart = await page.$eval('#curve-chart', (e) => ({ ...e.dataset }));
    assert.equal(chart.points, '3');
    assert.equal(chart.pointsA, '3');
    assert.equal(chart.pointsB, '3');
    const seen = await page.evaluate(() => window.__curveSeen);
    assert.ok(seen.includes(1) && seen.includes(2), `points drawn one by one: ${seen}`);
    assert.equal(await page.locator('#curve-table tbody tr[data-state="done"]').count(), 3);
    assert.match(await page.textContent('#curve-h-tp'), /^Throughput of A and B \(transactions\/s\) by clients$/);
    assert.match(await page.textContent('#curve-h-share'), /^sched_balance_domains: share/);
    const lines = await page.evaluate(() => window.schedplay.curve());
    assert.deepEqual(lines.map((l) => l.value), [8, 16, 32]);
    if (haveBin) {
      const cli = execFileSync(BIN, ['curve', ...SCENARIO, '--knob', 'clients', '--values', '8,16,32', '--json'], { encoding: 'utf8' })
        .trim().split('\n').map((l) => JSON.parse(l));
      // the figures, the point's link and the curve's fingerprint: the engine's on both sides
      assert.deepEqual(lines, cli, 'the page\'s curve is `schedplay curve --json`');
    } else {
      console.log(`  (no ${BIN}: the CLI comparison is left to experiment::curve's tests)`);
    }
    await assertContrast(page, ['#curve-table td.num', '#curve-table th', '#curve-note', '#curve-progress-label']);

    // bad input, by field: a value that is not a number, one out of range, one given twice
    await page.fill('#curve-values', '8, x');
    await page.click('#curve-run');
    await page.waitForSelector('#curve[data-state="error"]');
    assert.match(await page.textContent('#curve-error'), /^values: "x" is not a whole number$/);
    assert.equal(await page.getAttribute('#curve-values', 'aria-invalid'), 'true');
    await page.fill('#curve-values', '8, 0, 8');
    await page.click('#curve-run');
    await page.waitForSelector('#curve[data-state="error"]');
    const err = await page.textContent('#curve-error');
    assert.match(err, /values: 8 is given twice/, err);
    assert.match(err, /clients: point 1 \(clients=0\): "0" is out of range: an integer in 1\.\.=16384/, err);
    assert.equal(await page.locator('#curve-table tbody tr[data-state="done"]').count(), 3, 'a refused curve leaves the last one');

    // Cancel midway: longer runs, stop once a point is in; nothing reports after it
    await page.fill('#curve-values', '8, 16, 32, 64, 128, 256');
    await fillSeconds(page, '0.3');
    await page.waitForTimeout(400); // the form's link sync
    await page.click('#curve-run');
    await page.waitForFunction(() => /^[1-9]\d* of 6 points/.test(document.getElementById('curve-progress-label').textContent), null, { timeout: RUN_TIMEOUT });
    await page.click('#curve-cancel');
    assert.equal(await state(page), 'cancelled');
    const stopped = await label(page);
    assert.match(stopped, /^cancelled after [1-5] of 6 points$/, stopped);
    await page.waitForTimeout(800);
    assert.equal(await label(page), stopped, 'no point arrives after Cancel');
    assert.ok(await page.isDisabled('#curve-cancel'));
    assert.ok(await page.locator('#curve-table tbody tr[data-state="halted"]').count() >= 1);
    // an A/B run afterwards runs, and does not restart the curve
    await fillSeconds(page, '0.02');
    await runAB(page);
    assert.equal(await state(page), 'cancelled');
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i43 load curve of a story: its knob and values, where its report sits, and the point marked', async () => {
    const { page, problems } = await openPage('');
    // the landing page shows the first story (not run): its curve is set up
    assert.equal(await page.inputValue('#curve-knob'), 'clients');
    const story = (await page.evaluate(() => window.schedplay.presets().stories[0]));
    assert.equal(await page.getAttribute('#curve-values', 'placeholder'), story.curve.values.join(', '));
    const where = await page.textContent('#curve-where');
    assert.ok(await page.isVisible('#curve-where'));
    assert.ok(where.includes(`its report sits at clients = ${story.curve.reported.toLocaleString('en-US')} (marked)`), where);
    // the story's words, as a sentence of their own
    const words = story.curve.where.charAt(0).toUpperCase() + story.curve.where.slice(1);
    assert.ok(where.includes(`(marked). ${words}.`), where);
    assert.match(await page.textContent('#curve-note'), /the story's 4 values unless you type others/);
    if (process.env.E2E_CURVE_SHOTS === '1') {
      // the story's own curve at its own seconds and warm-up (minutes: 8 runs of 0.6 s on 384 CPUs)
      await runCurve(page, 60 * 60 * 1000);
      const marked = await page.$$eval('#curve-table tbody tr[data-reported]', (rs) => rs.map((r) => r.dataset.value));
      assert.deepEqual(marked, [String(story.curve.reported)]);
      await assertContrast(page, ['#curve-where', '#curve-table .curve-reported', '#curve-table td.num']);
      await shots(page, OUT, 'i43-curve-story', { el: '#curve' });
    }
    assert.deepEqual(problems, []);
    await page.close();
  });
}

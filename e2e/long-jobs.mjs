// e2e checks of issue 44 item 8 (long jobs): the time left is shown at once (a first guess from
// this browser's earlier jobs, named as such) and then measured from the job's first progress.
// The main thread's longest task during a run is a wall-time figure (a loaded machine lengthens
// it), so it is measured by scripts/bench-page.mjs, not asserted here. Registered by e2e.mjs.
import assert from 'node:assert/strict';

/** A run long enough to watch (several seconds of engine time on any machine). */
const LONG = '?v=1&machine=custom&sockets=2&cores_per_socket=16&workload=oltp&a=&b=skip-not-due&seconds=0.4&seed=1';
const STORE = 'schedplay-eta-ms-per-event';

export function registerLongJobs({ test, openPage, RUN_TIMEOUT }) {
  test('i44.8 long jobs: a first guess at once, then the time left measured from the job\'s own progress; the job\'s speed is the next guess', async () => {
    const { page, problems } = await openPage(LONG);
    // an earlier job's speed, as a finished job stores it: the next job's first guess
    await page.evaluate((k) => localStorage.setItem(k, '0.002'), STORE);
    await page.reload();
    await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
    await page.waitForFunction(() => !document.getElementById('run').disabled, null, { timeout: 30000 });
    // every text the label shows, from the click on
    await page.evaluate(() => {
      const el = document.getElementById('progress-label');
      window.__labels = [];
      new MutationObserver(() => window.__labels.push(el.textContent)).observe(el, { childList: true, characterData: true, subtree: true });
    });
    await page.click('#run');
    // then measured from the job's own progress, well before it ends (not after 2% or 2 s of it)
    await page.waitForFunction(() => window.__labels.some((t) => /left/.test(t) && !/first guess/.test(t)), null, { timeout: 8000 });
    const labels = await page.evaluate(() => window.__labels);
    assert.match(labels[0], /^A 0% · B 0% · about .* left \(first guess from earlier runs\)$/, 'a first guess at once');
    await page.waitForSelector('body[data-state="done"]', { timeout: RUN_TIMEOUT });
    const stored = await page.evaluate((k) => Number(localStorage.getItem(k)), STORE);
    assert.ok(stored > 0 && stored !== 0.002, `the job's speed becomes the next guess: ${stored}`);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i44.2 how sure: runs sized by this browser\'s measured speed, the experiment\'s own seconds when the screen fits, shortened and said so when not', async () => {
    const { page, problems } = await openPage('?v=1&machine=gnr-2s-96c-snc3&workload=oltp&client=remote&clients=1152&a=&b=skip-not-due&seconds=0.6&warmup=0.3&seed=1');
    const noteAfter = async (rate) => {
      await page.evaluate(([k, r]) => localStorage.setItem(k, String(r)), [STORE, rate]);
      await page.focus('#howsure-seeds'); // the note is recomputed when the panel gets focus
      await page.focus('#howsure-seconds');
      return page.textContent('#howsure-note');
    };
    // the form's estimate arrives with its first validation
    await page.waitForFunction(() => /^\d+ runs/.test(document.getElementById('howsure-note').textContent), null, { timeout: 10000 });
    const slow = await noteAfter(0.01);
    const m = /× 1 seed, ([\d.]+) s simulated each \(the experiment's 0\.6 s, shortened so that the screen takes about 2 min/.exec(slow);
    assert.ok(m, slow);
    assert.ok(Number(m[1]) < 0.6 && Number(m[1]) >= 0.01, slow);
    const fast = await noteAfter(1e-9);
    assert.match(fast, /× 1 seed, 0\.6 s simulated each \(the experiment's own: the screen fits/);
    assert.deepEqual(problems, []);
    await page.close();
  });
}

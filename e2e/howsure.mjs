// e2e checks of issue 32 item 4: "How sure?" screens the form's experiment one at a time over every
// assumption's range on the worker pool (progress n of N runs, Cancel), and its bands and tornado
// are `schedplay sensitivity --json`'s for the same scenario, seconds and seed (when the release
// binary is built). Registered by e2e.mjs, whose helpers it uses. Screenshots: OUT/i32-howsure-*.png,
// 1280x800 and 390x844, light and dark.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { assertContrast } from './page-honesty.mjs';
import { shots } from './shots.mjs';

const BIN = process.env.SCHEDPLAY_BIN ?? 'target/release/schedplay';
// a small machine at short seconds: 55 points × A and B = 110 short runs
const SCENARIO = ['--machine', 'custom', '--sockets', '2', '--cores-per-socket', '4', '--b', 'skip-not-due', '--seconds', '0.005', '--seed', '3'];
const QUERY = 'v=1&machine=custom&sockets=2&cores_per_socket=4&b=skip-not-due&seconds=0.005&seed=3';

const state = (page) => page.getAttribute('#howsure', 'data-state');

export function registerHowsure({ test, openPage, runAB, OUT, RUN_TIMEOUT }) {
  test('i32 how sure: the screen on the pool reaches N of N runs, one tornado row per assumption, the CLI\'s figures; Cancel midway leaves the page usable', async () => {
    // the link the CLI makes of the scenario, when it is built (else the same query by hand)
    const haveBin = existsSync(BIN);
    const query = haveBin ? execFileSync(BIN, ['link', '--base', 'x/', ...SCENARIO], { encoding: 'utf8' }).trim().replace(/^x\/\?/, '') : QUERY;
    const { page, problems } = await openPage(`?${query}`);
    const k = await page.evaluate(() => document.querySelectorAll('#howsure-note').length);
    assert.equal(k, 1);
    const note = await page.textContent('#howsure-note');
    assert.match(note, /^110 runs: 55 points .* 27 assumptions at each end\) × A and B × 1 seed, 0\.005 s simulated each \(the experiment's (0\.005 s, capped at 0\.05 s|own: the screen fits)/, note);
    await page.click('#howsure-run');
    await page.waitForSelector('#howsure[data-state="done"], #howsure[data-state="error"]', { timeout: RUN_TIMEOUT * 3 });
    assert.equal(await state(page), 'done', await page.textContent('#howsure-error'));
    assert.equal(await page.textContent('#howsure-progress-label'), '110 of 110 runs · done');
    assert.equal(await page.getAttribute('#howsure', 'data-runs'), '110');
    // one row per assumption screened, in the chart and in its table, ranked by swing
    const names = await page.$$eval('#howsure-tornado .tornado-row', (rs) => rs.map((r) => r.dataset.assumption));
    assert.equal(names.length, 27);
    assert.equal(new Set(names).size, 27);
    assert.equal(await page.locator('#howsure-table tbody tr').count(), 27);
    const swings = await page.$$eval('#howsure-table tbody td[data-value]', (tds) => tds.map((t) => Number(t.dataset.value)));
    assert.deepEqual(swings, [...swings].sort((a, b) => b - a), 'largest swing first');
    // it says what it is: one at a time, the seeds, the seconds
    const about = await page.textContent('#howsure-about');
    assert.match(about, /One at a time over 27 assumptions \(55 points\), 0\.005 s simulated per run, seed 3\./, about);
    assert.match(await page.textContent('#howsure-most'), /^(Measuring [A-Z_]+ would narrow this figure most|No assumption moves)/);
    // the contention tornado too
    await page.selectOption('#howsure-figure', 'b_contention_pct');
    assert.match(await page.textContent('#howsure-caption'), /^contention of B/);
    assert.equal(await page.locator('#howsure-tornado .tornado-row').count(), 27);
    // the engine's figures: the CLI's, byte for byte as JSON values
    if (haveBin) {
      const cli = JSON.parse(execFileSync(BIN, ['sensitivity', ...SCENARIO, '--json'], { encoding: 'utf8', maxBuffer: 1 << 24 }));
      const pageSummary = await page.evaluate(() => window.schedplay.howsure());
      assert.deepEqual(pageSummary, cli, 'the page\'s tornado is `schedplay sensitivity --json`');
    } else {
      console.log(`  (no ${BIN}: the CLI comparison is left to tests/sensitivity.rs)`);
    }
    await assertContrast(page, ['#howsure-about', '#howsure-most', '#howsure-table td.num', '.tornado-name', '.tornado-axis', '.tornado-scale .at-base', '#howsure-bands .band-label', '#howsure-progress-label'],
      ['.tornado-track .seg.low', '.tornado-track .seg.high', '.tornado-track .base']);
    await page.selectOption('#howsure-figure', 'throughput_pct');
    await shots(page, OUT, 'i32-howsure', { el: '#howsure' });

    // Cancel midway: longer runs, stop after some have finished; nothing runs on, the page works
    await page.fill('#howsure-seconds', '0.05');
    await page.click('#howsure-run');
    await page.waitForFunction(() => /^([1-9]\d*) of 110 runs/.test(document.getElementById('howsure-progress-label').textContent), null, { timeout: RUN_TIMEOUT });
    await page.click('#howsure-cancel');
    assert.equal(await state(page), 'cancelled');
    const stopped = await page.textContent('#howsure-progress-label');
    assert.match(stopped, /^cancelled after \d+ of 110 runs$/, stopped);
    await page.waitForTimeout(800);
    assert.equal(await page.textContent('#howsure-progress-label'), stopped, 'no run reports after Cancel');
    assert.ok(await page.isDisabled('#howsure-cancel'));
    await runAB(page);
    assert.equal(await state(page), 'cancelled', 'the A/B run does not restart the screen');
    // and a screen again, stopped by an A/B run (which says so)
    await page.click('#howsure-run');
    await page.waitForSelector('#howsure[data-state="running"]');
    await runAB(page);
    assert.match(await page.textContent('#howsure-progress-label'), /^stopped: another run started after \d+ of 110 runs$/);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i32 how sure: an experiment that cannot run is refused by field, nothing starts', async () => {
    const { page, problems } = await openPage(`?${QUERY}`);
    await page.fill('#howsure-seconds', '-1');
    await page.click('#howsure-run');
    await page.waitForSelector('#howsure[data-state="error"]');
    assert.match(await page.textContent('#howsure-error'), /^seconds per run: -1 is out of range: /);
    assert.equal(await page.evaluate(() => document.querySelector('#howsure-tornado').children.length), 0);
    assert.ok(await page.isDisabled('#howsure-cancel'));
    assert.deepEqual(problems, []);
    await page.close();
  });
}

export function registerHowsureLinks({ test, openPage, runAB }) {
  test('i32 assume in links: assume.NAME=VALUE runs and is shared, a bad value is a field error, a link without it is as before', async () => {
    const { page, problems } = await openPage(`?${QUERY}&assume.TICK_NS=700`);
    assert.equal(await page.textContent('#other-errors'), '');
    assert.match(await page.textContent('#howsure-note'), /This experiment sets assumptions \(TICK_NS = 700, from its link\)/);
    await page.click('#share');
    await page.waitForFunction(() => !!document.getElementById('share').dataset.link);
    const link = await page.getAttribute('#share', 'data-link');
    assert.match(link, /&assume\.TICK_NS=700$/, link);
    await runAB(page);
    // the screen refuses an experiment that sets assumptions, naming the field
    await page.click('#howsure-run');
    await page.waitForSelector('#howsure[data-state="error"]');
    assert.match(await page.textContent('#howsure-error'), /^assume \(the link's assume\.NAME keys\): a sensitivity screen varies the assumptions itself/);
    await page.close();
    const bad = await openPage(`?${QUERY}&assume.TICK_NS=fast&assume.SWITCH_NS=9`);
    await bad.page.waitForFunction(() => /SWITCH_NS = 9 is out of range/.test(document.getElementById('other-errors').textContent), null, { timeout: 10000 });
    const errs = await bad.page.textContent('#other-errors');
    assert.match(errs, /assume: TICK_NS = "fast" is not a number: an integer in /, errs);
    await bad.page.close();
    const plain = await openPage(`?${QUERY}`);
    await plain.page.click('#share');
    await plain.page.waitForFunction(() => !!document.getElementById('share').dataset.link);
    assert.doesNotMatch(await plain.page.getAttribute('#share', 'data-link'), /assume/);
    assert.deepEqual(problems, []);
    assert.deepEqual(plain.problems, []);
    await plain.page.close();
  });
}

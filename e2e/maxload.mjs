// e2e checks of issue 46 on the page: the sched features under the release picker (a link's lists
// shown per side, switched by ticking, kept in the link and through a reload, stated on each side's
// card from its report, changing what runs; a hand-edited unknown name refused by field, inserted as
// text only) and "Max load at a latency bound" for the serve workload (the searches of A and B on the
// worker pool, probe by probe, `schedplay maxload`'s search to the probe when the release binary is
// built, the bound and the rates at it drawn, Cancel). Registered by e2e.mjs, whose helpers it uses.
// Screenshots: OUT/i46-features-*.png, OUT/i46-maxload-*.png, 1280x800 and 390x844, light and dark.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { assertContrast } from './page-honesty.mjs';
import { shots } from './shots.mjs';

const BIN = process.env.SCHEDPLAY_BIN ?? 'target/release/schedplay';
const BASE = 'v=1&kernel=6.19&machine=genoa-vm-16&workload=serve&seconds=0.02&seed=1';
// hackbench, where NI_RANDOM moves the throughput at 0.02 s (serve at 100,000/s runs the same with it off)
const HB = 'v=1&kernel=6.19&machine=genoa-vm-16&workload=hackbench&seconds=0.02&seed=1';
const box = (side, name) => `[data-testid="feature-${side}-${name}"]`;
const errText = (page, f) => page.evaluate((f) => [...document.querySelectorAll(`[data-error-for="${f}"] .msg-text`)].map((e) => e.textContent).join(' | '), f);
const mlState = (page) => page.getAttribute('#maxload', 'data-state');
const mlLabel = (page) => page.textContent('#maxload-progress-label');

export function registerMaxload({ test, openPage, runAB, OUT, RUN_TIMEOUT }) {
  test('i46 sched features: the release\'s list per side, ticks into the link and back, the report states them and they change the run; an unknown name is refused by field, as text', async () => {
    const { page, problems } = await openPage(`?${HB}&features_a=NO_NI_RANDOM`);
    const summary = () => page.textContent('[data-testid="sched-features-summary"]');
    // 6.19 lists 27 features; the modelled ones are boxes, the rest greyed "not modelled"
    assert.match(await summary(), /^sched features \(\/sys\/kernel\/debug\/sched\/features of 6\.19\): \d+ of 27 switchable · A: NO_NI_RANDOM · B: the defaults$/);
    await page.click('[data-testid="sched-features-summary"]');
    assert.equal(await page.isChecked(box('a', 'NI_RANDOM')), false, 'A: NO_NI_RANDOM');
    assert.equal(await page.isChecked(box('b', 'NI_RANDOM')), true, 'B: 6.19\'s default');
    assert.ok(await page.isDisabled(box('a', 'DELAY_DEQUEUE')), 'an unmodelled feature cannot be switched');
    assert.match(await page.textContent('#sched-features tr[data-feature="DELAY_DEQUEUE"]'), /not modelled/);
    // 6.18 has no NI_RANDOM: the row goes; B's list follows B's release
    await page.selectOption('#kernel-b', '6.18');
    assert.equal(await page.locator(box('b', 'NI_RANDOM')).count(), 0);
    await page.selectOption('#kernel-b', '');
    // a tick is a debugfs write on that side, in the link
    await page.check(box('b', 'NEXT_BUDDY'));
    await page.waitForFunction(() => /features_b=NEXT_BUDDY/.test(location.search), null, { timeout: 5000 });
    assert.match(await summary(), /A: NO_NI_RANDOM · B: NEXT_BUDDY$/);
    // the link survives a reload
    await page.reload();
    await page.waitForSelector('body[data-ready="1"]');
    assert.match(await summary(), /A: NO_NI_RANDOM · B: NEXT_BUDDY$/);
    assert.equal(await page.isChecked(box('b', 'NEXT_BUDDY')), true);
    // each card states what its run wrote, from the report
    await runAB(page);
    assert.equal(await page.textContent('[data-testid="features-a"]'), 'sched features: NO_NI_RANDOM');
    assert.equal(await page.textContent('[data-testid="features-b"]'), 'sched features: NEXT_BUDDY');
    const tpA = await page.getAttribute('#summary-a-throughput', 'data-value');
    await page.click('[data-testid="sched-features-summary"]');
    await page.check(box('a', 'NI_RANDOM')); // back to 6.19's default
    await page.waitForFunction(() => !/features_a=/.test(location.search), null, { timeout: 5000 });
    await runAB(page);
    assert.equal(await page.textContent('[data-testid="features-a"]'), 'sched features: kernel 6.19\'s defaults');
    assert.notEqual(await page.getAttribute('#summary-a-throughput', 'data-value'), tpA, 'NI_RANDOM on and off are different runs');
    await page.evaluate(() => { document.getElementById('sched-features').open = true; });
    await assertContrast(page, ['#sched-features summary', '#sched-features .patch-name', '#sched-features .patch-status', '#sched-features .patch-desc', '[data-testid="features-a"]']);
    await shots(page, OUT, 'i46-features', { scrollTo: '#sched-features' });

    // a hand-edited link: an unknown name is the engine's error under the list, shown as text; a
    // name only another release lists says which release
    assert.deepEqual(problems, []);
    await page.close();
    const evil = '<img src=x onerror=alert(1)>';
    const bad = await openPage(`?${BASE}&features_a=${encodeURIComponent(`NO_NI_RANDOM,${evil}`)}&features_b=BOGUS`);
    const ea = await errText(bad.page, 'features_a');
    assert.ok(ea.includes(`"${evil}" is not a sched feature of kernel 6.19`), ea);
    assert.match(await errText(bad.page, 'features_b'), /"BOGUS" is not a sched feature of kernel 6\.19: \/sys\/kernel\/debug\/sched\/features lists PLACE_LAG, /);
    assert.equal(await bad.page.locator('#sched-features img, [data-error-for] img').count(), 0, 'nothing from the link is HTML');
    assert.deepEqual(bad.dialogs, []);
    // shown as a row of its own, ticked: unticking drops it from the link and its error goes
    await bad.page.click('[data-testid="sched-features-summary"]');
    assert.equal(await bad.page.isChecked(box('b', 'BOGUS')), true);
    // a real click at the box (Playwright's uncheck waits forever for this row's box to be "stable")
    await bad.page.locator(box('b', 'BOGUS')).evaluate((e) => e.scrollIntoView({ block: 'center' }));
    const at = await bad.page.locator(box('b', 'BOGUS')).evaluate((e) => { const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; });
    await bad.page.mouse.click(at[0], at[1]);
    assert.match(await bad.page.textContent('[data-testid="sched-features-summary"]'), /· B: the defaults$/);
    await bad.page.waitForFunction(() => !document.querySelector('[data-error-for="features_b"] .msg-text'), null, { timeout: 5000 });
    await assertContrast(bad.page, ['[data-error-for="features_a"] .msg-text', '#sched-features tr[data-extra] .patch-status']);
    await shots(bad.page, OUT, 'i46-features-refused', { scrollTo: '[data-error-for="features_a"]' });
    assert.deepEqual(bad.problems, []);
    await bad.page.close();
  });

  test('i46 max load: A and B searched probe by probe on the pool, the CLI\'s search, the bound and the rates drawn; Cancel stops it', async () => {
    // a closed-loop workload has no search
    const { page: oltp } = await openPage('?v=1&machine=genoa-vm-16&workload=oltp&seconds=0.02');
    assert.ok(await oltp.isHidden('#maxload'), 'no rate knob: no max-load panel');
    await oltp.close();

    // 32 worker threads on 16 vCPUs: newidle balancing runs, so NI_RANDOM moves the probes (docs/MODEL.md)
    const { page, problems } = await openPage(`?${BASE}&threads=32&features_b=NO_NI_RANDOM`);
    assert.ok(await page.isVisible('#maxload'));
    assert.equal(await page.inputValue('#maxload-percentile'), '99');
    assert.equal(await page.inputValue('#maxload-bound'), '1000');
    // bad input by field
    await page.fill('#maxload-bound', '0');
    await page.click('#maxload-run');
    await page.waitForSelector('#maxload[data-state="error"]');
    assert.match(await page.textContent('#maxload-error'), /^bound_us: 0: a bound above 0 µs/);
    await page.fill('#maxload-bound', 'abc');
    await page.click('#maxload-run');
    assert.match(await page.textContent('#maxload-error'), /^bound_us: "abc" is not a number of µs$/);
    assert.equal(await page.getAttribute('#maxload-bound', 'aria-invalid'), 'true');
    await page.fill('#maxload-bound', '1000');
    // probes drawn as they arrive
    await page.evaluate(() => {
      window.__mlSeen = [];
      const el = document.getElementById('maxload-chart');
      new MutationObserver(() => window.__mlSeen.push(Number(el.dataset.probesA))).observe(el, { attributes: true, attributeFilter: ['data-probes-a'] });
    });
    await page.click('#maxload-run');
    await page.waitForSelector('#maxload[data-state="done"], #maxload[data-state="error"]', { timeout: RUN_TIMEOUT });
    assert.equal(await mlState(page), 'done', await page.textContent('#maxload-error'));
    const chart = await page.$eval('#maxload-chart', (e) => ({ ...e.dataset }));
    assert.ok(Number(chart.probesA) >= 3 && Number(chart.probesB) >= 3, JSON.stringify(chart));
    assert.equal(chart.bound, '1000');
    const seen = await page.evaluate(() => window.__mlSeen);
    assert.ok(seen.includes(1) && seen.includes(2), `probes drawn one by one: ${seen}`);
    assert.match(await mlLabel(page), /^done: 2 searches, \d+ probes$/);
    const res = await page.evaluate(() => window.schedplay.maxload());
    const result = await page.textContent('#maxload-result');
    for (const side of ['a', 'b']) {
      const line = res.searches.find((s) => s.side === side).line;
      assert.ok(line.rate_at_bound > 0, JSON.stringify(line));
      assert.ok(result.includes(`${side.toUpperCase()}: rate at the bound (p99 ≤ 1000 µs): ${line.rate_at_bound}/s (one search: no interval`), result);
    }
    assert.match(await page.textContent('#maxload-h'), /^Latency against the offered rate: p99 and p50 of A and B, the bound p99 ≤ 1,000 µs$/);
    assert.equal(await page.locator('#maxload-table tbody tr[data-side="a"]').count(), Number(chart.probesA));
    if (existsSync(BIN)) {
      // the CLI searches side A; B is the same search with B's features on A
      const scenario = ['--machine', 'genoa-vm-16', '--kernel', '6.19', '--workload', 'serve', '--set', 'threads=32', '--seconds', '0.02', '--seed', '1'];
      for (const [side, extra] of [['a', []], ['b', ['--features', 'NO_NI_RANDOM']]]) {
        const cli = JSON.parse(execFileSync(BIN, ['maxload', ...scenario, ...extra, '--json'], { encoding: 'utf8' }).trim());
        const page_ = res.searches.find((s) => s.side === side).line;
        assert.deepEqual(page_.probes, cli.probes, `${side}: the page's probes are schedplay maxload's`);
        assert.equal(page_.rate_at_bound, cli.rate_at_bound);
      }
    } else {
      console.log(`  (no ${BIN}: the CLI comparison is left to tests/wasm.rs)`);
    }
    await assertContrast(page, ['#maxload-result', '#maxload-table td.num', '#maxload-table th', '#maxload-note', '#maxload-progress-label']);
    await shots(page, OUT, 'i46-maxload', { el: '#maxload' });

    // Cancel midway: longer probes, stop once one is in; nothing arrives after it
    await page.fill('#seconds', '0.3');
    await page.waitForTimeout(400); // the form's link sync
    await page.click('#maxload-run');
    await page.waitForFunction(() => Number(document.getElementById('maxload-chart').dataset.probesA) >= 1, null, { timeout: RUN_TIMEOUT });
    await page.click('#maxload-cancel');
    assert.equal(await mlState(page), 'cancelled');
    const stopped = await mlLabel(page);
    assert.match(stopped, /^cancelled after \d+ probes?$/, stopped);
    const probes = await page.getAttribute('#maxload-chart', 'data-probes-a');
    await page.waitForTimeout(800);
    assert.equal(await mlLabel(page), stopped, 'no probe arrives after Cancel');
    assert.equal(await page.getAttribute('#maxload-chart', 'data-probes-a'), probes);
    assert.ok(await page.isDisabled('#maxload-cancel'));
    assert.ok(await page.locator('#maxload-table tbody tr[data-state="halted"]').count() >= 1);
    // repeats: one search per seed and side, the rate with its 95% interval
    await page.fill('#seconds', '0.02');
    await page.fill('#repeats', '2');
    await page.waitForTimeout(400);
    await page.click('#maxload-run');
    await page.waitForSelector('#maxload[data-state="done"], #maxload[data-state="error"]', { timeout: RUN_TIMEOUT });
    assert.equal(await mlState(page), 'done', await page.textContent('#maxload-error'));
    assert.match(await mlLabel(page), /^done: 4 searches, \d+ probes$/);
    const twice = await page.textContent('#maxload-result [data-side="a"]');
    assert.match(twice, /^A: rate at the bound \(p99 ≤ 1000 µs\): \d+\/s, 95% interval \[\d+, \d+\] over 2 repeats; per repeat: \d+, \d+$/, twice);
    assert.deepEqual(problems, []);
    await page.close();
  });
}

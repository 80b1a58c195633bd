// e2e checks of 7.2's kernel knob fields (issue 31 item 2, www/kernel-knobs.js): one field per entry
// of the engine's knob table (presets().kernel_knobs), shown only on a release that takes them
// (presets().kernel_knob_releases); a bad value is refused under its field naming the key and the
// range; typed values round-trip through the link; on another release they are neither shown nor
// sent, and a link that gives them to one is refused by name. Registered by e2e.mjs.
// Screenshots: OUT/i31-llc-knobs-*.png, 1280x800 and 390x844, light and dark.
import assert from 'node:assert/strict';
import { shots } from './shots.mjs';

const Q = '?v=1&machine=milan-2s&workload=hackbench&seconds=0.01&seed=3';
const IMB = 'llc_balancing/imb_pct';
const OVER = 'llc_balancing/overaggr_pct';
const field = (key) => `[id="${key}"]`;
const errText = (page, key) => page.evaluate((k) => [...document.querySelectorAll('[data-error-for]')]
  .filter((e) => e.dataset.errorFor === k).map((e) => e.textContent).join(' | '), key);

export function registerLlcKnobs({ test, openPage, OUT }) {
  test('i31 llc knobs: 7.2 fields from the engine table, errors name field and range, links round-trip', async () => {
    const { page, problems } = await openPage(Q);
    // 6.18: no fields
    assert.ok(await page.isHidden('#kernel-knobs'), '6.18 has no llc_balancing/');
    await page.selectOption('#kernel', '7.2');
    assert.ok(await page.isVisible('#kernel-knobs'));
    // one field per knob of the engine's table (llc_balancing::KNOBS), in its order, the range and
    // default printed
    const keys = await page.$$eval('#kernel-knobs input', (els) => els.map((e) => e.id));
    assert.deepEqual(keys, ['CONFIG_SCHED_CACHE', 'llc_balancing/enabled', 'llc_balancing/aggr_tolerance',
      'llc_balancing/epoch_period', 'llc_balancing/epoch_affinity_timeout', IMB, OVER]);
    assert.equal(await page.getAttribute(field(IMB), 'placeholder'), 'default 20');
    assert.equal(await page.getAttribute('[id="llc_balancing/epoch_period"]', 'placeholder'), 'default HZ/100');
    assert.match(await page.textContent(`[id="${IMB}-desc"]`), /^llc_balancing\/imb_pct: 0\.\.1000, default 20\. /);
    // out of range: the engine's message under the field, naming the key and the range
    await page.fill(field(IMB), '3000');
    await page.waitForFunction((k) => document.getElementById(k).getAttribute('aria-invalid') === 'true', IMB, { timeout: 5000 });
    assert.match(await errText(page, IMB), /"3000" is out of range: allowed 0..=1000/);
    assert.ok(await page.isVisible(`#kernel-knobs [data-error-for="${IMB}"]`));
    await page.fill(field(IMB), 'x');
    await page.waitForFunction((k) => /not a number|integer|number/.test([...document.querySelectorAll('[data-error-for]')]
      .filter((e) => e.dataset.errorFor === k).map((e) => e.textContent).join(' ')), IMB, { timeout: 5000 });
    // good values: no message, and the address bar carries them
    await page.fill(field(IMB), '30');
    await page.fill(field(OVER), '70');
    await page.waitForFunction(() => /llc_balancing%2Fimb_pct=30/.test(location.search) && /llc_balancing%2Foveraggr_pct=70/.test(location.search), null, { timeout: 5000 });
    assert.equal(await errText(page, IMB), '');
    assert.equal(await page.getAttribute(field(IMB), 'aria-invalid'), null);
    const link = page.url();
    assert.match(link, /kernel=7\.2/);
    // the link restores the fields
    const { page: p2, problems: pr2 } = await openPage(link);
    assert.equal(await p2.inputValue('#kernel'), '7.2');
    assert.ok(await p2.isVisible('#kernel-knobs'));
    assert.equal(await p2.inputValue(field(IMB)), '30');
    assert.equal(await p2.inputValue(field(OVER)), '70');
    assert.equal(await p2.inputValue('[id="llc_balancing/epoch_period"]'), '');
    // screenshots of the kernel fieldset with the fields shown (one with an error)
    await page.fill(field(OVER), '5000');
    await page.waitForFunction((k) => document.getElementById(k).getAttribute('aria-invalid') === 'true', OVER, { timeout: 5000 });
    assert.match(await errText(page, OVER), /"5000" is out of range: allowed 0..=1000/);
    // what the user sees: the viewport with the fields scrolled into it (the scenario panel
    // scrolls on its own, so an element shot would be clipped)
    await shots(page, OUT, 'i31-llc-knobs', { into: field(OVER) });
    await page.fill(field(OVER), '70');
    // another release: hidden, not sent (the typed text is kept for a return to 7.2)
    await page.selectOption('#kernel', '7.0');
    assert.ok(await page.isHidden('#kernel-knobs'));
    await page.waitForFunction(() => /kernel=7\.0/.test(location.search) && !/llc_balancing/.test(location.search), null, { timeout: 5000 });
    await page.selectOption('#kernel', '7.2');
    assert.equal(await page.inputValue(field(IMB)), '30');
    await page.waitForFunction(() => /llc_balancing%2Fimb_pct=30/.test(location.search), null, { timeout: 5000 });
    // a link that gives a knob to 6.18: refused by name, shown (the field itself is hidden)
    const { page: p3, problems: pr3 } = await openPage(`${Q}&${encodeURIComponent(IMB)}=30`);
    assert.ok(await p3.isHidden('#kernel-knobs'));
    await p3.waitForFunction(() => /applies from kernel 7\.2/.test(document.getElementById('other-errors').textContent), null, { timeout: 5000 });
    assert.match(await p3.textContent('#other-errors'), /llc_balancing\/imb_pct: applies from kernel 7\.2/);
    assert.deepEqual([...problems, ...pr2, ...pr3], []);
    for (const p of [page, p2, p3]) await p.close();
  });
}

// e2e checks of the kernel picker's patch table (issue 31 item 3): a toggle a release cannot take
// (presets().kernel_refused, the engine's kernels::not_on) is greyed out with the engine's reason as
// text in its row; a toggle the release merged is ticked and fixed in A and B, said in its row too;
// a link that asks a release for a toggle it cannot take keeps the box ticked (nothing typed is
// dropped) and shows the engine's error under the field. Registered by e2e.mjs.
// Screenshots: OUT/i31-kernel-picker-*.png, 1280x800 and 390x844, light and dark.
import assert from 'node:assert/strict';
import { assertContrast } from './page-honesty.mjs';
import { shots } from './shots.mjs';

const Q = '?v=1&machine=milan-2s&workload=hackbench&seconds=0.01&seed=3';
const box = (side, name) => `[data-testid="patch-${side}-${name}"]`;
const row = (name) => `#patches tr[data-patch="${name}"]`;

export function registerKernelPicker({ test, openPage, OUT }) {
  test('i31 kernel picker: a toggle the release cannot take is greyed with the reason, merged ones are fixed, a link asking for one keeps it and shows the error', async () => {
    const { page, problems } = await openPage(Q);
    const { refused, merged } = await page.evaluate(() => {
      const p = window.schedplay.presets();
      return { refused: p.kernel_refused, merged: p.kernel_merged };
    });
    const grey = Object.keys(refused['6.18'] || {});
    assert.ok(grey.includes('next-buddy'), `6.18 refuses next-buddy: ${JSON.stringify(refused)}`);
    for (const side of ['a', 'b']) assert.ok(await page.isDisabled(box(side, 'next-buddy')), `${side} greyed on 6.18`);
    assert.match(await page.textContent(`${row('next-buddy')} .patch-status`), /^not on kernel 6\.18: needs kernel 6\.19 or later/);

    // 6.19 takes it; what 6.19 merged is ticked, fixed and said so
    await page.selectOption('#kernel', '6.19');
    for (const side of ['a', 'b']) assert.ok(!(await page.isDisabled(box(side, 'next-buddy'))), `${side} free on 6.19`);
    assert.equal(await page.locator(`${row('next-buddy')} .patch-status`).count(), 0);
    const fixed = merged['6.19'];
    assert.ok(fixed.length > 0);
    for (const name of fixed) {
      for (const side of ['a', 'b']) {
        assert.ok(await page.isChecked(box(side, name)) && await page.isDisabled(box(side, name)), `${name} fixed in ${side}`);
      }
      assert.match(await page.textContent(`${row(name)} .patch-status`), /^merged in 6\.19: included in A and B/);
    }
    await page.check(box('b', 'next-buddy'));
    await assertContrast(page, [`${row(fixed[0])} .patch-status`, `${row('next-buddy')} .patch-name`]);
    // back to 6.18 with it ticked: it stays ticked and can be unticked; merged ones are freed
    await page.selectOption('#kernel', '6.18');
    assert.ok(await page.isChecked(box('b', 'next-buddy')) && !(await page.isDisabled(box('b', 'next-buddy'))));
    assert.ok(await page.isDisabled(box('a', 'next-buddy')));
    for (const name of fixed) assert.ok(!(await page.isChecked(box('a', name))) && !(await page.isDisabled(box('a', name))), `${name} freed`);
    await assertContrast(page, [`${row('next-buddy')} .patch-status`, `${row('next-buddy')} .patch-name`]);
    await shots(page, OUT, 'i31-kernel-picker', { into: row('next-buddy') });

    // a link asking 6.18 for it: kept ticked, and the engine's refusal under B
    const p2 = (await openPage(`${Q}&kernel=6.18&b=next-buddy`)).page;
    assert.ok(await p2.isChecked(box('b', 'next-buddy')));
    await p2.waitForFunction(() => [...document.querySelectorAll('[data-error-for="b"]')]
      .some((e) => /next-buddy in B on kernel 6\.18 needs kernel 6\.19 or later/.test(e.textContent)), null, { timeout: 5000 });
    assert.deepEqual(problems, []);
  });
}

// e2e checks of the kernel picker's patch table (issue 31 item 3): a toggle the release merged is
// ticked and fixed in A and B, said in its row too; since issue 46 no toggle is release-bound
// (next-buddy became the NEXT_BUDDY sched feature, presets().sched_features), and an old link that
// asks 6.18 for next-buddy keeps the box ticked (nothing typed is dropped) and shows the engine's
// error under the field. Registered by e2e.mjs.
// Screenshots: OUT/i31-kernel-picker-*.png, 1280x800 and 390x844, light and dark.
import assert from 'node:assert/strict';
import { assertContrast } from './page-honesty.mjs';
import { shots } from './shots.mjs';

const Q = '?v=1&machine=milan-2s&workload=hackbench&seconds=0.01&seed=3';
const box = (side, name) => `[data-testid="patch-${side}-${name}"]`;
const row = (name) => `#patches tr[data-patch="${name}"]`;

export function registerKernelPicker({ test, openPage, runAB, OUT }) {
  test('i31 kernel picker: merged toggles are fixed, sched features per release come from the engine, an old next-buddy link on 6.18 keeps its box and shows the error', async () => {
    const { page, problems } = await openPage(Q);
    const { refused, merged, features } = await page.evaluate(() => {
      const p = window.schedplay.presets();
      return { refused: p.kernel_refused, merged: p.kernel_merged, features: p.sched_features };
    });
    // next-buddy, the one release-bound toggle, is now the NEXT_BUDDY sched feature (issue 46):
    // no toggle is greyed on any release, and the feature table says where NEXT_BUDDY switches
    // the one release-bound toggle left is RFC v4's 26/27, which 7.2 refuses (it merged the successor)
    for (const [k, t] of Object.entries(refused)) assert.deepEqual(Object.keys(t), k === '7.2' ? ['cas-exceed-llc-capacity'] : [], `${k}'s refused toggles`);
    const nb = (k) => features[k].features.find((f) => f.name === 'NEXT_BUDDY');
    assert.ok(nb('6.18').path === null && /e837456fdca8/.test(nb('6.18').refused), JSON.stringify(nb('6.18')));
    assert.ok(nb('6.19').path && nb('6.19').refused === null, JSON.stringify(nb('6.19')));
    assert.ok(!features['6.18'].features.some((f) => f.name === 'NI_RANDOM'));
    assert.ok(features['6.19'].features.some((f) => f.name === 'NI_RANDOM' && f.default && f.path));

    // what 6.19 merged is ticked, fixed and said so
    await page.selectOption('#kernel', '6.19');
    const fixed = merged['6.19'];
    assert.ok(fixed.length > 0);
    for (const name of fixed) {
      for (const side of ['a', 'b']) {
        assert.ok(await page.isChecked(box(side, name)) && await page.isDisabled(box(side, name)), `${name} fixed in ${side}`);
      }
      assert.match(await page.textContent(`${row(name)} .patch-status`), /^merged in 6\.19: included in A and B/);
    }
    await assertContrast(page, [`${row(fixed[0])} .patch-status`, `${row(fixed[0])} .patch-name`]);
    // back to 6.18: merged ones are freed
    await page.selectOption('#kernel', '6.18');
    for (const name of fixed) assert.ok(!(await page.isChecked(box('a', name))) && !(await page.isDisabled(box('a', name))), `${name} freed`);
    await shots(page, OUT, 'i31-kernel-picker', { into: row(fixed[0]) });

    // an old link asking 6.18 for next-buddy: kept ticked, and the engine's refusal under B
    const p2 = (await openPage(`${Q}&kernel=6.18&b=next-buddy`)).page;
    assert.ok(await p2.isChecked(box('b', 'next-buddy')));
    await p2.waitForFunction(() => [...document.querySelectorAll('[data-error-for="b"]')]
      .some((e) => /NEXT_BUDDY cannot be switched on kernel 6\.18/.test(e.textContent)), null, { timeout: 5000 });
    assert.deepEqual(problems, []);
  });

  test('i44.4 B runs another release: its merged toggles are fixed in B only, the link carries kernel_b, and the run is 6.18 against 6.19', async () => {
    const { page, problems } = await openPage(Q);
    const merged = await page.evaluate(() => window.schedplay.presets().kernel_merged['6.19']);
    await page.selectOption('#kernel-b', '6.19');
    for (const name of merged) {
      assert.ok(await page.isChecked(box('b', name)) && await page.isDisabled(box('b', name)), `${name} fixed in B`);
      assert.ok(!(await page.isChecked(box('a', name))) && !(await page.isDisabled(box('a', name))), `${name} free in A`);
      assert.match(await page.textContent(`${row(name)} .patch-status`), /^merged in 6\.19: included in B,/);
    }
    assert.match(await page.textContent('#kernel-summary'), /B runs 6\.19/);
    await page.waitForFunction(() => /[?&]kernel_b=6\.19(&|$)/.test(location.search), null, { timeout: 5000 });
    await runAB(page);
    const kernels = await page.evaluate(() => ['a', 'b'].map((s) => window.schedplay.lastReport(s)?.kernel ?? '6.18'));
    assert.deepEqual(kernels, ['6.18', '6.19']);
    assert.deepEqual(await page.evaluate(() => ['a', 'b'].map((s) => document.getElementById(`summary-${s}-patches`).textContent)), ['(6.18: as released)', '(6.19: as released)']);
    // the story of the seed-000 box on both releases loads both
    const p2 = (await openPage('')).page;
    await p2.click('[data-testid="story-sched-balance-running-6.19"]');
    assert.equal(await p2.inputValue('#kernel'), '6.18');
    assert.equal(await p2.inputValue('#kernel-b'), '6.19');
    await shots(page, OUT, 'i44-kernel-b', { into: '#kernel-b' });
    // an unknown B release in a link is named and blocks Run
    const p3 = (await openPage(`${Q}&kernel_b=9.9`)).page;
    await p3.waitForFunction(() => /not a modelled release/.test(document.querySelector('[data-error-for="kernel_b"]')?.textContent || ''), null, { timeout: 5000 });
    assert.deepEqual(problems, []);
    for (const p of [page, p2, p3]) await p.close();
  });
}

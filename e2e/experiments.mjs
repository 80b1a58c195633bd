// e2e checks of the page's experiments of many runs: the scaling sweep, repeats with their interval
// table, "How close is the model?", then the dark/phone screenshots and the locality tables of the
// story run. Registered by e2e.mjs after its own tests, whose page (`state.page`) and second story
// (`state.story002`) these read; the order of registration is the order of running.
import assert from 'node:assert/strict';
import { join } from 'node:path';

// Sets the run's seconds; a story's warm-up (steady state) that would not fit in them is set to 0
// first, so a short test run measures from boot instead of being refused.
async function fillSeconds(page, s) {
  const w = (await page.inputValue('#warmup')).trim();
  if (w !== '' && w !== 'auto' && !(Number(w) < Number(s))) await page.fill('#warmup', '0');
  await page.fill('#seconds', s);
}


export function registerExperiments({ test, openPage, runAB, summary, state, OUT, RUN_TIMEOUT }) {
  test('scaling sweep: 64,128 CPUs, chart and table, light and dark', async () => {
    assert.ok(state.story002, 'needs the second-story test');
    const { page, problems } = state.story002;
    // the story's 0.3 s is capped at 0.1 s per point, and the panel says so
    await fillSeconds(page, '0.3');
    assert.match(await page.textContent('#sweep-note'), /0\.1 s simulated: the experiment's 0\.3 s capped at 0\.1 s per point/);
    // a bad list is refused by the engine's rule (sweep::parse_cpu_list), before anything runs
    await page.fill('#sweep-cpus', '64,130,8192');
    await page.click('#sweep-run');
    await page.waitForSelector('#sweep[data-state="error"]', { timeout: 5000 });
    assert.match(await page.textContent('#sweep-error'), /cpus: 130 is not allowed: a multiple of 4 in 4\.\.=4096/);
    assert.match(await page.textContent('#sweep-error'), /cpus: 8192 is not allowed/);
    assert.equal(await page.getAttribute('#sweep-cpus', 'aria-invalid'), 'true');
    // 18 CPUs cannot be 2 sockets × cores × SMT2: refused, not run as 16
    await page.fill('#sweep-cpus', '16,18');
    await page.click('#sweep-run');
    await page.waitForFunction(() => document.getElementById('sweep-error').textContent !== '', null, { timeout: 5000 });
    assert.equal(await page.getAttribute('#sweep', 'data-state'), 'error');
    assert.match(await page.textContent('#sweep-error'), /cpus: 18 is not allowed/);

    await page.fill('#sweep-cpus', '64,128');
    await page.click('#sweep-run');
    await page.waitForSelector('#sweep[data-state="running"]', { timeout: 10000 });
    await page.waitForSelector('#sweep[data-state="done"], #sweep[data-state="error"]', { timeout: RUN_TIMEOUT });
    const st = await page.getAttribute('#sweep', 'data-state');
    assert.equal(st, 'done', `sweep ended ${st}: ${await page.textContent('#sweep-error')}`);
    const pts = await page.evaluate(() => {
      const { plot, plotC } = window.schedplay.sweep; // throughput above, contention below
      const d = [...plot.data, ...plotC.data.slice(1)];
      const nn = (arr) => arr.filter((v) => v != null).length;
      return { x: d[0], tpA: nn(d[1]), tpB: nn(d[2]), contA: nn(d[3]), contB: nn(d[4]) };
    });
    assert.deepEqual(pts, { x: [64, 128], tpA: 2, tpB: 2, contA: 2, contB: 2 }, 'uPlot: 2 x-points with A and B values');
    assert.equal(await page.getAttribute('#sweep-chart', 'data-points-a'), '2');
    assert.equal(await page.getAttribute('#sweep-chart', 'data-points-b'), '2');
    const rows = await page.evaluate(() => [...document.querySelectorAll('#sweep-table tbody tr')].map((r) => {
      const td = r.querySelectorAll('td');
      return { cpus: r.dataset.cpus, state: r.dataset.state, a: Number(td[1]?.dataset.value), b: Number(td[2]?.dataset.value), ca: Number(td[4]?.dataset.value), cb: Number(td[5]?.dataset.value) };
    }));
    assert.equal(rows.length, 2, `table rows: ${JSON.stringify(rows)}`);
    assert.deepEqual(rows.map((r) => [r.cpus, r.state]), [['64', 'done'], ['128', 'done']]);
    for (const r of rows) assert.ok([r.a, r.b, r.ca, r.cb].every((v) => Number.isFinite(v) && v >= 0) && r.a > 0 && r.b > 0, `numbers in ${JSON.stringify(r)}`);
    assert.ok(rows[1].a > rows[0].a, `A throughput grows with CPUs: ${rows[0].a} -> ${rows[1].a}`);
    assert.match(await page.textContent('#sweep-th-a'), /transactions\/s|\/s/);
    // the A/B results above are untouched by the sweep
    assert.equal(await page.getAttribute('body', 'data-state'), 'done');

    await page.locator('#sweep').scrollIntoViewIfNeeded();
    await page.locator('#sweep').screenshot({ path: join(OUT, 'sweep-light.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForTimeout(300);
    await page.locator('#sweep').screenshot({ path: join(OUT, 'sweep-dark.png') });
    await page.emulateMedia({ colorScheme: 'light' });

    // Esc cancels a sweep; no progress after that; the A/B Run button still works afterwards
    await page.fill('#sweep-cpus', '4096'); // a point long enough (~1 s a side) to cancel mid-run
    await page.fill('#sweep-seconds', '5');
    await page.click('#sweep-run');
    await page.waitForSelector('#sweep[data-state="running"]', { timeout: 10000 });
    await page.waitForFunction(() => document.getElementById('sweep-progress').value > 0, null, { timeout: 30000 });
    await page.keyboard.press('Escape');
    await page.waitForSelector('#sweep[data-state="cancelled"]', { timeout: 5000 });
    const v = await page.evaluate(() => document.getElementById('sweep-progress').value);
    await page.waitForTimeout(400);
    assert.equal(await page.evaluate(() => document.getElementById('sweep-progress').value), v, 'no sweep progress after cancel');
    assert.equal(await page.getAttribute('#sweep-table tbody tr', 'data-state'), 'halted');
    assert.equal((await page.textContent('#sweep-table tbody tr')).trim(), '4096cancelled');
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('repeats: the interval table (insignificant changes greyed, none coloured), warm-up shaded, not-settled flag', async () => {
    const { page, problems } = await openPage('?v=1&machine=gnr-2s-96c-snc3&workload=oltp&a=&b=skip-not-due&seconds=0.2&seed=1&repeats=3&warmup=0.02');
    assert.equal(await page.inputValue('#repeats'), '3');
    assert.equal(await page.inputValue('#warmup'), '0.02');
    await runAB(page);
    await page.waitForSelector('#repeat-box:not([hidden])', { timeout: 10000 });
    assert.match(await page.textContent('#repeat-title'), /Over 3 runs per side \(seeds 1, \d+, \d+\)/);
    const rows = await page.evaluate(() => [...document.querySelectorAll('#repeat-table tbody tr')].map((r) => ({
      key: r.dataset.key, significant: r.dataset.significant, cls: r.className,
      cells: [...r.querySelectorAll('td')].map((td) => td.textContent),
      colour: [...r.querySelectorAll('td')].map((td) => getComputedStyle(td).color),
    })));
    assert.ok(rows.length >= 7, `rows: ${JSON.stringify(rows)}`);
    assert.equal(rows[0].key, 'throughput');
    for (const r of rows) {
      const m = /^\[([-+]?[\d.,]+), ([-+]?[\d.,]+)\]/.exec(r.cells[2]);
      assert.ok(m, `an interval in ${JSON.stringify(r)}`);
      const n = (x) => Number(x.replace(/,/g, ''));
      const containsZero = n(m[1]) <= 0 && n(m[2]) >= 0;
      // a bound printed as 0 may be a small non-zero one rounded: the text cannot tell which side of 0
      const roundedToZero = n(m[1]) === 0 || n(m[2]) === 0;
      if (!roundedToZero) assert.equal(r.significant, String(!containsZero), `significant iff the interval excludes 0: ${JSON.stringify(r)}`);
      assert.equal(r.cls.includes('insignificant'), r.significant !== 'true', `greyed iff not significant: ${JSON.stringify(r)}`);
    }
    // (which rows are greyed is the model's result; the rule above, greyed iff the interval holds 0,
    // is what the page must get right). skip-not-due removes the flag's storm from B, so at least one
    // row (sched_balance_domains' share, contention) differs beyond its interval: the rule's other side
    // is exercised too.
    assert.ok(rows.some((r) => r.significant === 'true'), `a significant row: ${JSON.stringify(rows)}`);
    // no win/loss colour anywhere: every cell has the table's one text colour
    assert.equal(new Set(rows.flatMap((r) => r.colour)).size, 1, JSON.stringify(rows.map((r) => r.colour)));
    assert.equal(await page.locator('#card-delta .good, #card-delta .bad').count(), 0);
    // the warm-up is shaded on the charts, and A's series still trend: flagged
    assert.equal(await page.getAttribute('#chart-throughput', 'data-warmup'), '0.02');
    assert.match(await page.getAttribute('#summary-a-flag', 'data-not-settled'), /contention_pct/);
    assert.match(await page.textContent('#summary-a-flag'), /first 0\.020 s left out \(warm-up\) · not settled: /);
    await page.locator('#repeat-box').screenshot({ path: join(OUT, 'repeats.png') });
    // gnr-2s-96c-snc3: ~1,000 cache lines (2 run-queue lines per CPU), the c2c table shows shared + 8 + 1
    const lines = await page.evaluate(() => window.schedplay.lastReport('b').cachelines.map((l) => l.name));
    const shared = lines.filter((n) => !/\(cpu\d+\)/.test(n)).length;
    assert.ok(lines.length - shared >= 2 * 384, `per-CPU lines on 384 CPUs: ${lines.length - shared}`);
    const c2cRows = await page.locator('#c2c tbody tr:not(.off-row)').count();
    assert.ok(c2cRows <= shared + 8 + 1, `c2c rows ${c2cRows} <= ${shared} + 8 + 1 of ${lines.length} lines`);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('how close is the model: the validation table, as `schedplay validate` makes it', async () => {
    const { page, problems } = await openPage();
    await page.fill('#validation-seconds', '0.01');
    await page.fill('#validation-repeats', '2');
    await page.click('#validation-run');
    await page.waitForSelector('#validation[data-state="done"], #validation[data-state="error"]', { timeout: RUN_TIMEOUT });
    assert.equal(await page.getAttribute('#validation', 'data-state'), 'done', await page.textContent('#validation-error'));
    const rows = await page.evaluate(() => [...document.querySelectorAll('#validation-table tbody tr[data-id]')].map((r) => ({
      id: r.dataset.id, status: r.dataset.status, cells: [...r.querySelectorAll('td')].map((td) => td.textContent),
      // issue 44 item 6: the line under a miss that says why
      why: r.nextElementSibling?.dataset.why === r.dataset.id ? r.nextElementSibling.textContent : null,
    })));
    assert.equal(rows.length, 21, JSON.stringify(rows)); // validation::ROWS: 7 behaviour checks, 14 inputs
    assert.ok(rows.every((r) => r.status === 'holds' || r.status === 'misses'), JSON.stringify(rows));
    const far = rows.find((r) => r.id === 'lat-gnr-snc3-far');
    assert.deepEqual([far.cells[1], far.cells[6], far.cells[7], far.cells[8], far.status], ['input', '132', '125 .. 140', '✓ holds', 'holds']);
    assert.match(rows.find((r) => r.id === '000-gain').cells[6], /^-?[\d.]+ \[-?[\d.]+, -?[\d.]+\]$/);
    // behaviour checks and inputs counted apart (issue 30, item 4)
    const label = await page.textContent('#validation-progress-label');
    const m = /^(\d+) of 7 behaviour checks hold, (\d+) of 14 inputs hold$/.exec(label);
    assert.ok(m, label);
    assert.equal(Number(m[1]), rows.filter((r) => r.cells[1] === 'behaviour' && r.status === 'holds').length);
    assert.equal(Number(m[2]), rows.filter((r) => r.cells[1] === 'input' && r.status === 'holds').length);
    for (const r of rows) assert.equal(r.cells[8], `${r.status === 'holds' ? '✓' : '✗'} ${r.status}`, 'status in a word and a mark');
    // every miss says why (validation::why, from docs/MODEL.md) and links the doc; a row that holds says nothing
    for (const r of rows) {
      if (r.status === 'misses') assert.match(r.why ?? '', new RegExp(`^why ${r.id} misses: .{40,} \\(docs/MODEL\\.md, How close is the model\\?\\)$`), r.id);
      else assert.equal(r.why, null, r.id);
    }
    assert.ok(rows.some((r) => r.status === 'misses'), 'the model misses rows at 0.01 s');
    // the doc it cites is served with the page (Trunk copies docs/), not a 404
    const doc = await page.evaluate(async () => { const r = await fetch('docs/MODEL.md'); return { status: r.status, text: await r.text() }; });
    assert.equal(doc.status, 200);
    assert.match(doc.text, /## How close is the model\?/);
    await page.locator('#validation').screenshot({ path: join(OUT, 'validation.png') });
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

  test('locality: where user time went, for A and B, and starts, wakeups and handoffs by distance', async () => {
    const { page, problems } = await openPage('?v=1&machine=custom&workload=hackbench&mode=thread&b=cache-aware');
    await fillSeconds(page, '0.05');
    await runAB(page);
    await page.locator('#locality').evaluate((t) => { t.closest('details').open = true; });
    const rows = await page.locator('#locality tbody tr').allTextContents();
    assert.ok(rows.some((r) => r.startsWith('cache refill')) && rows.some((r) => r.startsWith('SMT co-run')), rows.join('\n'));
    // costs in ms to the µs (one format per column), moves by distance as counts in a table of their own
    const ms = await page.locator('#locality tbody tr td:nth-child(2)').allTextContents();
    assert.ok(ms.every((x) => /^[\d,]+\.\d{3}$/.test(x)), `A's ms to the µs: ${ms.join(' ')}`);
    const moves = await page.evaluate(() => [...document.querySelectorAll('#locality-moves tbody tr')].map((r) => [...r.cells].map((c) => c.textContent)));
    assert.deepEqual(moves.map((r) => r[0]), ['same cpu', 'smt', 'llc', 'node near', 'node far', 'socket', 'no waker (timer)']);
    const rep = await page.evaluate(() => [window.schedplay.lastReport('a').locality, window.schedplay.lastReport('b').locality]);
    const n = (x) => Number(x.replace(/,/g, ''));
    for (const [i, c] of ['same_cpu', 'smt', 'llc', 'node_near', 'node_far', 'socket'].entries()) {
      assert.deepEqual(moves[i].slice(1).map(n), [rep[0].starts_by_class[c], rep[1].starts_by_class[c], rep[0].wakeups_by_class[c],
        rep[1].wakeups_by_class[c], rep[0].handoffs_by_class[c], rep[1].handoffs_by_class[c]], `${c}: ${moves[i]}`);
    }
    // the task wakeups and the ones without a waking task add up to the wakeups counter (item 10)
    const ctr = await page.evaluate(() => [window.schedplay.lastReport('a').counters.wakeups, window.schedplay.lastReport('b').counters.wakeups]);
    for (const [j, side] of [[3, 0], [4, 1]]) {
      const sum = moves.reduce((acc, r) => acc + n(r[j]), 0);
      assert.equal(sum, ctr[side], `wakeups column ${j} adds up to the counter`);
    }
    await page.screenshot({ path: join(OUT, 'locality.png'), fullPage: true });
    assert.deepEqual(problems, []);
  });
}

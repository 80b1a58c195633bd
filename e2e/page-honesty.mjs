// e2e checks of issue 30: the page says what it ran and how close it is (story links that carry
// the story, exports of what is on screen, no silent change of input). Registered by e2e.mjs,
// whose helpers they use. Screenshots: OUT/i30-*.png, 1280x800 and 390x844, light and dark.
import assert from 'node:assert/strict';
import { shots } from './shots.mjs';
import { readFileSync } from 'node:fs';

/** WCAG AA contrast of the given text selectors (4.5:1) and graphics (3:1) in light and dark; every
 * selector must match. */
export async function assertContrast(page, texts, graphics = []) {
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.waitForTimeout(100);
    const out = await page.evaluate(([texts, graphics]) => {
      const rgb = (s) => (s.match(/[\d.]+/g) || []).slice(0, 3).map(Number);
      const lum = (c) => {
        const [r, g, b] = c.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
      };
      const ratio = (x, y) => { const [a, b] = [lum(rgb(x)), lum(rgb(y))].sort((p, q) => q - p); return (a + 0.05) / (b + 0.05); };
      const bgOf = (el) => {
        for (let e = el; e; e = e.parentElement) {
          const c = getComputedStyle(e).backgroundColor;
          if (!/rgba\(.*, 0\)$/.test(c) && c !== 'transparent') return c;
        }
        return 'rgb(255, 255, 255)';
      };
      const one = (q, min, prop) => {
        const el = document.querySelector(q);
        if (!el) return { what: q, ratio: 0, min, missing: true };
        return { what: q, ratio: ratio(getComputedStyle(el)[prop], bgOf(prop === 'color' ? el : el.parentElement)), min };
      };
      return [...texts.map((q) => one(q, 4.5, 'color')), ...graphics.map((q) => one(q, 3, 'backgroundColor'))];
    }, [texts, graphics]);
    for (const p of out) assert.ok(!p.missing && p.ratio >= p.min, `${scheme}: ${p.what} ${p.missing ? 'missing' : `${p.ratio.toFixed(2)}:1 < ${p.min}:1`}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

export function registerPageHonesty({ test, openPage, runAB, summary, OUT, SECONDS, RUN_TIMEOUT }) {
  const waitDone = (page) => page.waitForSelector('body[data-state="done"], body[data-state="error"]', { timeout: RUN_TIMEOUT });

  test('i30.1 story link: carries the story, runs it, shows model against reported with a verdict and the validation row; details on the story\'s side', async () => {
    const { page, problems } = await openPage();
    // the story button: its link carries story=NAME (address bar and Share)
    await page.locator('#stories button.story').first().click();
    assert.equal(await page.isChecked('#side-a'), true, 'the first story looks at A: details on side A (item 11)');
    await page.waitForFunction(() => /story=sched-balance-running/.test(location.search), null, { timeout: 5000 });
    // the story opens with its shipped results (issue 47: www/precomputed.js), or runs without them
    await page.waitForSelector('body[data-state="done"], body[data-state="running"]', { timeout: 10000 });
    if (await page.getAttribute('body', 'data-state') === 'running') await page.click('#cancel');
    await page.click('#share');
    const link = await page.inputValue('#share-url');
    assert.match(link, /&story=sched-balance-running$/);
    assert.match(await page.textContent('#story-claim'), /non-idle cycles/, 'the model\'s figure is of non-idle cycles (item 4)');
    await page.close();
    // opened fresh: the claim, its results (shipped with the page, else an automatic run), and the
    // verdict against the reported figures
    const { page: p2, problems: pr2 } = await openPage(link.replace(/^https?:\/\/[^/]+\//, ''));
    assert.ok(await p2.isVisible('#story-claim'), 'the claim is shown');
    assert.match(await p2.textContent('#story-claim'), /sched_balance_running/);
    await p2.waitForFunction(() => document.body.dataset.state !== 'idle', null, { timeout: 10000 });
    await waitDone(p2);
    assert.equal(await p2.getAttribute('body', 'data-state'), 'done', await p2.textContent('#status'));
    await p2.waitForSelector('#story-figure:not([hidden]) li.verdict', { timeout: 10000 });
    // the verdict's text without the line that says why a miss misses (issue 44 item 6)
    const v = await p2.evaluate(() => [...document.querySelectorAll('#story-figure li.verdict')].map((li) => ({
      row: li.dataset.row, status: li.dataset.status, text: li.textContent.replace(li.querySelector('.why')?.textContent ?? '', ''),
      why: li.querySelector('.why')?.textContent ?? null,
    })));
    assert.deepEqual(v.map((x) => x.row), ['000-share-a', '000-share-b', '000-gain']);
    const gain = v.find((x) => x.row === '000-gain');
    assert.match(gain.text, /^[✓✗] throughput, patched vs unpatched \(%\): model [+-][\d.]+% against reported \+8% \(band \+4\.0% \.\. \+12\.0%\)/);
    assert.match(gain.text, new RegExp(`row 000-gain ${gain.status}\\.$`));
    if (gain.status === 'misses') assert.match(gain.text, /× (larger|smaller) than reported|opposite sign/);
    for (const x of v) assert.equal(x.why !== null, x.status === 'misses', `${x.row}: a miss says why, a hold does not`);
    // the verdict agrees with the band and the figure on the Δ card
    const model = Number(/model ([+-][\d.]+)%/.exec(gain.text)[1]);
    assert.equal(gain.status, model >= 4 && model <= 12 ? 'holds' : 'misses');
    const delta = Number(await p2.getAttribute('#summary-delta-throughput', 'data-value'));
    assert.ok(Math.abs(delta - model) < 0.06, `verdict ${model} = Δ card ${delta}`);
    assert.equal(await p2.isChecked('#side-a'), true);
    assert.equal(await p2.textContent('#c2c-side'), 'A');
    await shots(p2, OUT, 'i30-story-link');
    await shots(p2, OUT, 'i30-story-link-results', { scrollTo: '#results-of' });
    await assertContrast(p2, ['#story-figure li.verdict', '#story-figure li.verdict .mark',
      '#story-figure a.row-link', '#story-figure strong', '#story-claim .story-note', '#story-claim strong', '#results-of-label', '.card .hash']);
    // the row link goes to the validation panel (the table is not run yet: it says how)
    await p2.click('#story-figure a.row-link[data-row="000-gain"]');
    assert.match(await p2.textContent('#validation-wanted'), /000-gain.*Check the model/);
    assert.deepEqual(problems.concat(pr2), []);
    await p2.close();
  });

  test('i30.11 story tap on a phone scrolls to the results', async () => {
    const { page, problems } = await openPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator('#stories button.story').nth(1).click();
    await page.waitForTimeout(300);
    const top = await page.evaluate(() => document.getElementById('results-of').getBoundingClientRect().top);
    assert.ok(top >= -1 && top < 844, `results in view after a story tap (top ${top})`);
    assert.equal(await page.isChecked('#side-b'), true, 'the second story looks at B');
    // the story's results shipped with the page (issue 47) are shown at once; without them it runs
    await page.waitForSelector('body[data-state="done"], body[data-state="running"]', { timeout: 10000 });
    if (await page.getAttribute('body', 'data-state') === 'running') {
      await page.click('#results-cancel');
      assert.match(await page.textContent('#results-of-label'), /^Cancelled/);
    } else {
      assert.ok(await page.isVisible('#shipped-note'), 'the shipped results, labelled');
    }
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i30.2 export of a repeated run: every seed, the repeat table, labelled cards, file names with the patches', async () => {
    const { page, problems } = await openPage('?v=1&machine=milan-2s&workload=hackbench&a=&b=cache-aware&seconds=0.01&seed=3&repeats=3');
    await runAB(page);
    assert.match(await page.textContent('[data-testid="seed-a"]'), /^seed 1 of 3 \(3\); the means are in the table below$/);
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
    assert.equal(dl.suggestedFilename(), 'schedplay-milan-2s-hackbench-k6.18-A_baseline-B_cache-aware-seed3-x3.json');
    const j = JSON.parse(readFileSync(await dl.path(), 'utf8'));
    assert.equal(j.seeds.length, 3);
    assert.equal(j.runs.a.length, 3);
    assert.equal(j.runs.b.length, 3);
    assert.deepEqual(j.runs.a.map((r) => r.seed), j.seeds);
    assert.equal(String(j.runs.b[0].report_hash), String(j.b.report_hash));
    const tp = j.repeat_table.figures.find((f) => f.key === 'throughput');
    // the table on screen is the exported one
    const shown = await page.textContent('#repeat-table tr[data-key="throughput"] td.ci');
    assert.ok(shown.startsWith(`[${tp.delta.ci95[0] > 0 ? '+' : ''}${tp.delta.ci95[0].toFixed(2)}`), `${shown} vs ${tp.delta.ci95}`);
    const [dl2] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
    const csv = readFileSync(await dl2.path(), 'utf8');
    for (const seed of j.seeds) assert.ok(csv.includes(`a,seed,${seed},throughput_per_sec,`), `seed ${seed} in the CSV`);
    assert.ok(csv.includes(`delta,repeat,throughput,ci95_lo,${tp.delta.ci95[0]}`), 'the interval in the CSV');
    assert.ok(csv.includes(`delta,repeat,throughput,p,${tp.delta.p}`), 'the p-value in the CSV');
    // an interval wider than 100 points carries the "too noisy" note, and no other
    const rows = await page.evaluate(() => [...document.querySelectorAll('#repeat-table tbody tr')].map((r) => ({ ci: r.querySelector('td.ci').firstChild.textContent, noisy: !!r.querySelector('.noisy') })));
    for (const r of rows) {
      const m = /^\[([+-]?[\d,.]+), ([+-]?[\d,.]+)\]/.exec(r.ci);
      if (!m) continue;
      const w = Number(m[2].replace(/,/g, '')) - Number(m[1].replace(/,/g, ''));
      assert.equal(r.noisy, w > 100, `${r.ci}: noisy note iff wider than 100`);
    }
    await assertContrast(page, ['[data-testid="seed-a"]', '#repeat-table td.ci', '#repeat-box .desc']);
    await shots(page, OUT, 'i30-export', { el: '#repeat-box' });
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i30.3 a refused machine: every field that falls back is named with the value used', async () => {
    const { page, problems } = await openPage('?v=1&machine=custom&sockets=8&cores_per_socket=2048&seed=4');
    const msg = (f) => page.textContent(`[data-error-for="${f}"]`);
    assert.match(await msg('cores_per_socket'), /— using 32/);
    assert.match(await msg('sockets'), /^8 not used: the machine it is part of was refused \(.*\); the preset's value applies — using 2/);
    assert.match(await page.textContent('#machine-summary'), /128 CPUs/);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i30.6 a misspelled patch is named with its side above the list and stops the run; duplicate keys are named', async () => {
    const { page, problems } = await openPage('?v=1&machine=milan-2s&workload=hackbench&seconds=0.01&b=skip-not-du&seed=3&seed=4');
    const err = page.locator('[data-error-for="b"]');
    assert.match(await err.textContent(), /unknown patch "skip-not-du" in B: allowed /);
    const [eTop, tTop] = await Promise.all([err.evaluate((e) => e.getBoundingClientRect().top), page.locator('#patches').evaluate((e) => e.getBoundingClientRect().top)]);
    assert.ok(eTop < tTop, 'the message is above the patch list');
    assert.equal(await page.isChecked('[data-testid="patch-b-skip-not-du"]'), true, 'the name is kept, not dropped');
    assert.match(await page.textContent('[data-error-for="seed"]'), /seed given 2 times \("3", "4"\): the last is used/);
    assert.equal(await page.inputValue('#seed'), '4');
    await page.click('#run');
    await page.waitForSelector('body[data-state="error"]', { timeout: 5000 });
    // the link's problems are still open (issue 44 item 5): Run names them and waits
    assert.match(await page.textContent('#status'), /the link had 2 problems still open \(seed, b\)/);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i30.5 import without a vendor: the figures\' preset is said where it is seen; the form shows the machine\'s layout', async () => {
    const { page, problems } = await openPage('?v=1&machine=gnr-2s-snc3&workload=hackbench&seconds=0.01');
    // 1 socket, 16 cores, SMT2, 1 node, 1 LLC: a small Intel desktop as lscpu -p prints it (no vendor)
    let text = '# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n';
    for (let c = 0; c < 32; c++) text += `${c},${c % 16},0,0,,${c % 16},${c % 16},${c % 16},0\n`;
    text += 'node distances:\nnode   0\n  0:  10\n';
    await page.click('#import-box summary');
    await page.fill('#import-text', text);
    await page.click('#import-apply');
    await page.waitForFunction(() => /imported machine: 32 CPUs, 1 socket, 1 node, 1 LLC, SMT on/.test(document.getElementById('import-status').textContent), null, { timeout: 10000 });
    await page.waitForSelector('[data-testid="import-note"]', { timeout: 5000 });
    const preset = await page.inputValue('#machine');
    assert.match(await page.textContent('[data-testid="import-note"]'), new RegExp(`names no CPU vendor, so its hardware figures \\(cache-line latencies\\) are those of ${preset} \\((AMD|Intel)\\)`));
    await page.waitForFunction(() => document.getElementById('cores_per_socket').value === '16', null, { timeout: 5000 });
    assert.deepEqual(await Promise.all(['sockets', 'cores_per_socket', 'nodes_per_socket', 'cores_per_llc'].map((k) => page.inputValue(`#${k}`))), ['1', '16', '1', '16']);
    assert.match(await page.textContent('#machine-desc'), /^Imported machine/);
    await assertContrast(page, ['[data-testid="import-note"]', '[data-testid="import-note"] strong', '#machine-desc', '#import-status']);
    await shots(page, OUT, 'i30-import', { scrollTo: '#machine-keys' });
    // back to the preset: its layout again
    await page.click('#import-clear');
    // (the closest preset may itself have 16 cores a socket: genoa-vm-16)
    await page.waitForFunction(() => !/^Imported machine/.test(document.getElementById('machine-desc').textContent), null, { timeout: 5000 });
    await page.waitForSelector('[data-testid="import-note"]', { state: 'detached', timeout: 5000 });
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i30.7 long runs: time left, a visible Cancel, the header after Cancel; the model check names what it stopped', async () => {
    const { page, problems } = await openPage('?v=1&machine=custom&sockets=2&cores_per_socket=1024&workload=hackbench&seconds=2&seed=1');
    await page.click('#run');
    await page.waitForSelector('body[data-state="running"]', { timeout: 10000 });
    assert.ok(await page.isVisible('#results-cancel'), 'a Cancel beside the results');
    // measured from the run's own progress (a first guess from earlier jobs may come before it)
    await page.waitForFunction(() => /left$/.test(document.getElementById('progress-label').textContent), null, { timeout: 60000 });
    assert.match(await page.textContent('#progress-label'), /^A \d+% · B \d+% · about (\d+ (s|min)|\d+\.\d h) left$/);
    assert.match(await page.textContent('#results-progress'), /^\(A \d+% · B \d+% · about (\d+ (s|min)|\d+\.\d h) left\)$/);
    await shots(page, OUT, 'i30-long-run', { scrollTo: '#results-of' });
    await assertContrast(page, ['#results-cancel', '#results-progress', '.used-hint', '#progress-label']);
    await page.click('#results-cancel');
    await page.waitForSelector('body[data-state="cancelled"]', { timeout: 5000 });
    assert.match(await page.textContent('#results-of-label'), /^Cancelled/);
    assert.ok(await page.isHidden('#results-cancel'));
    // "Check the model" during a run says what stopped the run, and can be cancelled itself
    await page.click('#run');
    await page.waitForSelector('body[data-state="running"]', { timeout: 10000 });
    await page.fill('#validation-seconds', '0.01');
    await page.fill('#validation-repeats', '1');
    await page.click('#validation-run');
    await page.waitForSelector('body[data-state="cancelled"]', { timeout: 10000 });
    assert.equal(await page.textContent('#status'), 'A/B run cancelled: the model check ("How close is the model?") runs');
    assert.ok(!(await page.isDisabled('#validation-cancel')));
    await page.click('#validation-cancel');
    await page.waitForSelector('#validation[data-state="cancelled"]', { timeout: 5000 });
    assert.equal(await page.textContent('#validation-progress-label'), 'cancelled');
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i30.8 "Results of" loads the results\' experiment without a reload; Share after an edit offers both links', async () => {
    const { page, problems } = await openPage('?v=1&machine=milan-2s&workload=hackbench&seconds=0.01&seed=3');
    await runAB(page);
    const before = await summary(page);
    await page.evaluate(() => { window.__noReload = 1; });
    await page.fill('#seed', '9');
    await page.waitForSelector('#stale:not([hidden])', { timeout: 5000 });
    await page.click('#share');
    await page.waitForFunction(() => /seed=9/.test(document.getElementById('share-url').value), null, { timeout: 5000 });
    assert.ok(await page.isVisible('#share-results-url'));
    assert.match(await page.inputValue('#share-results-url'), /seed=3/);
    await page.click('#results-link');
    await page.waitForSelector('#stale[hidden]', { state: 'attached', timeout: 5000 });
    assert.equal(await page.evaluate(() => window.__noReload), 1, 'no reload');
    assert.equal(await page.inputValue('#seed'), '3');
    assert.equal((await summary(page)).hashA, before.hashA, 'the results stay');
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i30.9 percentiles are shown as their histogram bucket; A and B in the same bucket read "same bucket"', async () => {
    const { page, problems } = await openPage('?v=1&machine=milan-2s&workload=schbench&seconds=0.05&seed=3&b=skip-not-due');
    await runAB(page);
    const cells = await page.evaluate(() => Object.fromEntries(['a', 'b', 'delta'].flatMap((s) => ['lat-p95', 'wake-p50', 'wake-p95', 'wake-p99'].map((m) => [`${s}-${m}`, document.getElementById(`summary-${s}-${m}`).textContent]))));
    for (const m of ['lat-p95', 'wake-p50', 'wake-p95', 'wake-p99']) {
      for (const s of ['a', 'b']) assert.match(cells[`${s}-${m}`], /^[\d,.]+(–[\d,.]+)?$/, `${s} ${m}: ${cells[`${s}-${m}`]}`);
      const same = cells[`a-${m}`] === cells[`b-${m}`];
      assert.equal(cells[`delta-${m}`] === 'same bucket', same, `${m}: ${JSON.stringify(cells)}`);
    }
    assert.ok(Object.values(cells).some((c) => /–/.test(c)), `some percentile is a range: ${JSON.stringify(cells)}`);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i30.10 locality on oltp (remote client): the timer wakeups in their own row, every wakeup in one row', async () => {
    const { page, problems } = await openPage('?v=1&machine=milan-2s&workload=oltp&client=remote&seconds=0.02&seed=3');
    await runAB(page);
    const rows = await page.evaluate(() => [...document.querySelectorAll('#locality-moves tbody tr')].map((r) => [...r.cells].map((c) => c.textContent)));
    const last = rows[rows.length - 1];
    assert.equal(last[0], 'no waker (timer)');
    const wakeups = await page.evaluate(() => window.schedplay.lastReport('a').counters.wakeups);
    assert.ok(wakeups > 0);
    // the clients' wakeups are timers; InnoDB's log threads are woken by tasks (futex): every
    // wakeup is in one row
    const count = (r) => Number(r[3].replace(/,/g, ''));
    assert.ok(count(last) > 0, 'A: the remote clients wake by timer');
    assert.equal(rows.reduce((s, r) => s + count(r), 0), wakeups, `A: rows add up to the wakeups: ${JSON.stringify(rows)}`);
    assert.match(await page.textContent('#locality-moves thead'), /task wakeups A/);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i30 contrast and marks: the validation status cells (word, mark, colour) and a marked row', async () => {
    const { page, problems } = await openPage();
    await page.fill('#validation-seconds', '0.005');
    await page.fill('#validation-repeats', '1');
    await page.click('#validation-run');
    await page.waitForSelector('#validation[data-state="done"]', { timeout: RUN_TIMEOUT });
    // a story's row link marks its row once the table is there
    await page.evaluate(() => document.getElementById('vrow-000-gain').dataset.marked = '1');
    await assertContrast(page, ['#validation-table td.status.holds', '#validation-table td.status.misses', '#validation-table tr[data-marked="1"] td',
      '#validation-progress-label', '#validation-cancel']);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i30 polish: legend ticks in one format, domain-N with debugfs level, header on one row after a run, status in words', async () => {
    const { page, problems } = await openPage(`?v=1&machine=gnr-2s-snc3&workload=oltp&seconds=${SECONDS}&seed=3`);
    await page.setViewportSize({ width: 1280, height: 800 });
    const h0 = await page.evaluate(() => document.querySelector('.topbar').offsetHeight);
    await runAB(page);
    assert.equal(await page.evaluate(() => document.querySelector('.topbar').offsetHeight), h0, 'the header keeps its height after a run');
    for (const metric of ['busy', 'stall', 'idle']) {
      await page.selectOption('#heat-metric', metric);
      const ticks = await page.locator('#heat-legend-ticks span').allTextContents();
      const dec = ticks.map((t) => (/\.(\d+)%$/.exec(t)?.[1].length ?? 0));
      assert.ok(dec.every((d) => d === dec[0]), `one format: ${ticks}`);
      const v = ticks.map((t) => Number(t.replace('%', '')));
      const step = v[1] - v[0];
      assert.ok(v.every((x, i) => Math.abs(x - i * step) < 1e-9), `equal steps: ${ticks}`);
    }
    await page.locator('#heatmap').focus();
    await page.keyboard.press('Enter');
    await page.waitForSelector('#domains li.domain', { timeout: 10000 });
    const labels = await page.locator('#domains li.domain > details > summary').allTextContents();
    assert.ok(labels.every((l) => /domain-\d/.test(l)), labels.join(' | '));
    assert.ok(!labels.some((l) => / level \d/.test(l)), 'no bare "level N" that debugfs numbers differently');
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('warm-up: a run clicked the moment the page is ready and one clicked after the workers\' warm-up give the same numbers', async () => {
    // www/engine-warmup.js runs a small scenario in each worker once the engine is up; it must
    // yield to a run at once and share nothing with it
    const query = '?v=1&machine=milan-2s&workload=oltp&seconds=0.02&seed=5&b=skip-not-due';
    const at = async (waitMs) => {
      const { page, problems } = await openPage(query);
      if (waitMs) await page.waitForTimeout(waitMs);
      await runAB(page);
      const s = await summary(page);
      assert.deepEqual(problems, []);
      await page.close();
      return s;
    };
    const first = await at(0);
    const later = await at(1500);
    assert.ok(first.hashA && first.hashB, 'both sides carry a report hash');
    assert.deepEqual(later, first);
  });
}

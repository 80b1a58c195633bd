// e2e checks of issue 44 ("the page tells one truth"), items 3, 4, 5 and 7 (item 6 is in
// experiments.mjs' validation test): repeats that mean something, a kernel switch that never erases
// the A/B, links whose problems block Run, the c2c table and exports on a phone. Registered by e2e.mjs.
// Screenshots: OUT/i44-*.png, 1280x800 and 390x844, light and dark.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { assertContrast } from './page-honesty.mjs';
import { shots } from './shots.mjs';

// Sets the run's seconds; a story's warm-up (steady state) that would not fit in them is set to 0
// first, so a short test run measures from boot instead of being refused.
async function fillSeconds(page, s) {
  const w = (await page.inputValue('#warmup')).trim();
  if (w !== '' && w !== 'auto' && !(Number(w) < Number(s))) await page.fill('#warmup', '0');
  await page.fill('#seconds', s);
}


const box = (side, name) => `[data-testid="patch-${side}-${name}"]`;
const errText = (page, f) => page.evaluate((f) => [...document.querySelectorAll(`[data-error-for="${f}"] .msg-text`)].map((e) => e.textContent).join(' | '), f);

export function registerOneTruth({ test, openPage, runAB, OUT }) {
  test('i44.3 repeats: hackbench seeds give different runs (an interval, p > 0); seeds that give identical runs say so, no interval', async () => {
    const { page, problems } = await openPage('?v=1&machine=custom&sockets=1&cores_per_socket=4&workload=hackbench&groups=2&fds=4&a=&b=skew-tick&seconds=0.02&seed=3&repeats=3');
    await runAB(page);
    const rows = () => page.evaluate(() => [...document.querySelectorAll('#repeat-table tbody tr')].map((r) => ({
      key: r.dataset.key, cells: [...r.querySelectorAll('td')].map((td) => td.textContent),
    })));
    const hb = await rows();
    const tp = hb.find((r) => r.key === 'throughput');
    assert.ok(tp, JSON.stringify(hb));
    assert.doesNotMatch(tp.cells[0], /\(0\.00%\)$/, `hackbench's seeds must differ: ${tp.cells[0]}`);
    const [lo, hi] = (tp.cells[2].match(/[-+][\d.]+/g) || []).map(Number);
    assert.ok(hi > lo, `an interval, not a point: ${tp.cells[2]}`);
    assert.notEqual(tp.cells[3], '0.0000');
    await shots(page, OUT, 'i44-repeats-hackbench', { el: '#repeat-box' });

    // spin draws nothing from the seed: every row says so, with neither an interval nor a p-value
    const spin = (await openPage('?v=1&machine=custom&sockets=1&cores_per_socket=4&workload=spin&threads=8&a=&b=skew-tick&seconds=0.02&seed=3&repeats=3')).page;
    await runAB(spin);
    const sp = await spin.evaluate(() => [...document.querySelectorAll('#repeat-table tbody tr')].map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
    assert.ok(sp.length > 0);
    for (const cells of sp) {
      assert.equal(cells[2], 'the seeds gave identical runs: no interval', JSON.stringify(cells));
      assert.equal(cells[3], '–', 'no p-value from runs that measured nothing');
    }
    await assertContrast(spin, ['[data-testid="identical-throughput"]']);
    await shots(spin, OUT, 'i44-repeats-identical', { el: '#repeat-box' });
    assert.deepEqual(problems, []);
    await page.close();
    await spin.close();
  });

  test('i44.4 kernel switch: merged toggles are shown fixed and the ticks come back; an A/B the release made identical is refused with why; 7.2 compares cache-aware on against off per side', async () => {
    const { page, problems } = await openPage('?v=1&machine=milan-2s&workload=hackbench&seconds=0.01&seed=3&a=cache-aware&b=cache-aware,cas-skip-many-threads');
    await page.selectOption('#kernel', '7.2');
    for (const side of ['a', 'b']) {
      assert.ok(await page.isChecked(box(side, 'cas-skip-many-threads')) && await page.isDisabled(box(side, 'cas-skip-many-threads')), `${side} fixed on 7.2`);
    }
    assert.match(await page.textContent('#patches tr[data-patch="cas-skip-many-threads"] .patch-status'), /merged in 7\.2: .*your B tick is kept/);
    await page.waitForFunction(() => /B is the same kernel as A/.test(document.getElementById('other-errors').textContent
      + [...document.querySelectorAll('[data-error-for="b"]')].map((e) => e.textContent).join('')), null, { timeout: 5000 });
    const why = await page.evaluate(() => [...document.querySelectorAll('[data-error-for="b"] .msg-text')].map((e) => e.textContent).join(' '));
    assert.match(why, /cas-skip-many-threads\) is merged in kernel 7\.2.*CONFIG_SCHED_CACHE=n or llc_balancing\/enabled=0/);
    // Run is refused before anything runs
    await page.click('#run');
    await page.waitForSelector('body[data-state="error"]', { timeout: 5000 });
    assert.match(await page.textContent('#status'), /fix the marked fields first \(b\)/);
    await shots(page, OUT, 'i44-kernel-refused', { into: '[data-error-for="b"] .msg' });

    // back to 6.18: the experiment is as it was
    await page.selectOption('#kernel', '6.18');
    assert.ok(await page.isChecked(box('a', 'cache-aware')) && !(await page.isDisabled(box('a', 'cache-aware'))));
    assert.ok(!(await page.isChecked(box('a', 'cas-skip-many-threads'))));
    assert.ok(await page.isChecked(box('b', 'cas-skip-many-threads')) && !(await page.isDisabled(box('b', 'cas-skip-many-threads'))));
    await page.waitForFunction(() => !/B is the same kernel/.test(document.getElementById('scenario').textContent), null, { timeout: 5000 });

    // 7.2, cache-aware on (A) against CONFIG_SCHED_CACHE=n (B): an A/B that runs
    await page.selectOption('#kernel', '7.2');
    assert.ok(await page.isVisible(box('b', 'CONFIG_SCHED_CACHE=n')));
    await page.check(box('b', 'CONFIG_SCHED_CACHE=n'));
    await page.waitForFunction(() => !/B is the same kernel/.test(document.getElementById('scenario').textContent), null, { timeout: 5000 });
    await page.waitForFunction(() => /kernel=7\.2/.test(location.search) && /b=[^&]*CONFIG_SCHED_CACHE%3Dn/.test(location.search), null, { timeout: 5000 });
    await runAB(page);
    const b = await page.evaluate(() => window.schedplay.lastReport('b'));
    const a = await page.evaluate(() => window.schedplay.lastReport('a'));
    assert.ok(b.patches.includes('CONFIG_SCHED_CACHE=n'), JSON.stringify(b.patches));
    assert.notEqual(a.report_hash, b.report_hash, 'cache-aware on and off are two kernels');
    // a kernel without knobs hides the per-side rows and sends nothing of them
    await page.selectOption('#kernel', '7.0');
    assert.ok(!(await page.isVisible(box('b', 'CONFIG_SCHED_CACHE=n'))));
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i44.5 links: a bad value blocks Run, a banner counts the problems, Run focuses the first', async () => {
    const { page, problems } = await openPage('?v=1&machine=milan-2s&workload=hackbench&kernel=9.9&seconds=-1&seed=3&b=skew-tick');
    await page.waitForSelector('[data-testid="link-banner"]:not([hidden])', { timeout: 5000 });
    assert.match(await page.textContent('#link-banner-text'), /^This link had 2 problems: (kernel, seconds|seconds, kernel)\. Run waits/);
    await assertContrast(page, ['#link-banner-text']);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.click('#run');
    await page.waitForSelector('body[data-state="error"]', { timeout: 5000 });
    assert.match(await page.textContent('#status'), /the link had 2 problems still open/);
    const focused = await page.evaluate(() => document.activeElement?.id);
    assert.ok(['kernel', 'seconds'].includes(focused), `Run focuses the first problem: ${focused}`);
    assert.ok(await page.evaluate(() => { const r = document.activeElement.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }), 'scrolled into view');
    await shots(page, OUT, 'i44-link-banner', { scrollTo: '#link-banner' });
    // fixing one leaves one open; fixing both frees Run
    await fillSeconds(page, '0.01');
    await page.waitForFunction(() => /\(1 still open\)/.test(document.getElementById('link-banner-text').textContent), null, { timeout: 5000 });
    await page.selectOption('#kernel', '6.18');
    await page.waitForSelector('[data-testid="link-banner"]', { state: 'hidden', timeout: 5000 });
    await runAB(page);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i44.7 phone: the c2c line names stay and a cue points at the HITM columns; exports carry the whole scenario and name the kernel', async () => {
    const q = '?v=1&machine=milan-2s&workload=hackbench&groups=4&kernel=7.2&seconds=0.01&seed=3&warmup=0.002&a=&b=CONFIG_SCHED_CACHE%3Dn&llc_balancing%2Fimb_pct=30';
    const { page, problems } = await openPage(q);
    await runAB(page);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator('#c2c').scrollIntoViewIfNeeded();
    await page.waitForSelector('[data-testid="c2c-cue"]:not([hidden])', { timeout: 5000 });
    const stick = await page.evaluate(() => {
      const wrap = document.getElementById('c2c-wrap');
      const name = document.querySelector('#c2c tbody tr.cl-row td:nth-child(2)');
      wrap.scrollLeft = 40;
      const before = name.getBoundingClientRect().left;
      wrap.scrollLeft = wrap.scrollWidth;
      const after = name.getBoundingClientRect().left;
      const wrapLeft = wrap.getBoundingClientRect().left;
      const hitm = document.querySelector('#c2c thead th:nth-child(7)').getBoundingClientRect();
      return { before, after, wrapLeft, hitmRight: hitm.right, wrapRight: wrap.getBoundingClientRect().right, pos: getComputedStyle(name).position };
    });
    assert.equal(stick.pos, 'sticky');
    assert.ok(Math.abs(stick.after - stick.before) < 1 && stick.after >= stick.wrapLeft, `the line name stays put: ${JSON.stringify(stick)}`);
    assert.ok(stick.hitmRight <= stick.wrapRight + 1, `HITM remote reachable: ${JSON.stringify(stick)}`);
    await page.waitForSelector('[data-testid="c2c-cue"]', { state: 'hidden', timeout: 5000 });
    await page.evaluate(() => { document.getElementById('c2c-wrap').scrollLeft = 0; });
    await page.waitForSelector('[data-testid="c2c-cue"]:not([hidden])', { timeout: 5000 });
    await assertContrast(page, ['#c2c-cue', '#c2c tbody tr.cl-row td:nth-child(2) code']);
    await shots(page, OUT, 'i44-c2c', { scrollTo: '#c2c-cue' });

    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
    assert.equal(dl.suggestedFilename(), 'schedplay-milan-2s-hackbench-k7.2-A_baseline-B_CONFIG_SCHED_CACHE_n-seed3-w0.002.csv');
    const csv = readFileSync(await dl.path(), 'utf8');
    for (const want of ['experiment,experiment,kernel,,7.2', 'experiment,experiment,warmup_s,,0.002',
      'experiment,kernel_knob,llc_balancing/imb_pct,,30', 'experiment,experiment,patches_b,,CONFIG_SCHED_CACHE=n',
      'experiment,workload_knob,groups,,4']) {
      assert.ok(csv.includes(want), `${want} in the CSV`);
    }
    const [dj] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
    assert.match(dj.suggestedFilename(), /-k7\.2-/);
    const j = JSON.parse(readFileSync(await dj.path(), 'utf8'));
    assert.equal(j.experiment.kernel, '7.2');
    assert.equal(j.experiment.sched['llc_balancing/imb_pct'], 30);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i44.7 exports: an rt-app file and machine overrides ride in the CSV', async () => {
    const { page, problems } = await openPage('?v=1&machine=custom&sockets=1&cores_per_socket=4&a=&b=skew-tick&seconds=0.01&seed=3');
    await page.click('#rtapp-box summary');
    const file = '{ /* 10% load */\n  "tasks": { "thread0": { "instance": 2, "loop": -1, "run": 10000,\n    "timer": { "ref": "unique", "period": 100000 } } },\n  "global": { "duration": 6, "default_policy": "SCHED_OTHER" }\n}\n';
    await page.fill('#rtapp-text', file);
    await page.click('#rtapp-apply');
    await page.waitForFunction(() => /the workload is this file/.test(document.getElementById('rtapp-status').textContent), null, { timeout: 10000 });
    await runAB(page);
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
    assert.match(dl.suggestedFilename(), /^schedplay-custom-rtapp-k6\.18-A_baseline-B_skew-tick-seed3\.csv$/);
    const csv = readFileSync(await dl.path(), 'utf8');
    for (const want of ['experiment,machine,sockets,,1', 'experiment,machine,cores_per_socket,,4',
      `experiment,workload,rtapp_file,,"${file.replace(/"/g, '""')}"`]) {
      assert.ok(csv.includes(want), `${want} in the CSV`);
    }
    assert.deepEqual(problems, []);
    await page.close();
  });
}

export function registerOneTruthWarmup({ test, openPage }) {
  test('i44.1 warm-up auto: accepted in a link and in the form, resolved by the engine for the machine and shown', async () => {
    const { page, problems } = await openPage('?v=1&machine=milan-2s&workload=hackbench&seconds=1&seed=3&b=skew-tick&warmup=auto');
    assert.equal(await page.inputValue('#warmup'), 'auto');
    await page.waitForSelector('[data-testid="warmup-auto"]:not([hidden])', { timeout: 5000 });
    assert.match(await page.textContent('[data-testid="warmup-auto"]'), /^auto = 0\.256 s: the steady state/);
    assert.equal(await errText(page, 'warmup'), '');
    // the machine changes, auto follows it
    await fillSeconds(page, '0.2');
    await page.waitForFunction(() => /^auto = 0\.1 s/.test(document.querySelector('[data-testid="warmup-auto"]').textContent), null, { timeout: 5000 });
    await page.fill('#warmup', '0.05');
    await page.waitForSelector('[data-testid="warmup-auto"]', { state: 'hidden', timeout: 5000 });
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i44.1 one figure: a story\'s verdict shows what the model check gave for its rows, the same run when it ran the story\'s seconds, one repeat and seed 1, else why they differ', async () => {
    const { page, problems } = await openPage('');
    // the page's own renderer with the shapes the engine gives (story_check, validation_table)
    const out = await page.evaluate(async () => {
      const { renderVerdict } = await import('./www/story.js');
      const story = window.schedplay.presets().stories[0];
      const check = { outcome: null, id: '000-gain', what: 'throughput B vs A', model: 6.93, model_ci95: null, published: '+8%', published_value: 8, tolerance: [4, 12], status: 'holds' };
      const row = (model, ci) => ({ id: '000-gain', model, model_ci95: ci });
      const run = { exp: { seconds: 0.6, seed: 1 } };
      renderVerdict(story, [check], null, run, { rows: [row(6.93, null)], seconds: 0.6, repeats: 1 });
      const same = document.querySelector('[data-row-figure="000-gain"]');
      const a = { same: same.dataset.same, text: same.textContent };
      renderVerdict(story, [check], null, run, { rows: [row(5.1, [3.2, 7.0])], seconds: 0.3, repeats: 2 });
      const other = document.querySelector('[data-row-figure="000-gain"]');
      const b = { same: other.dataset.same, text: other.textContent };
      renderVerdict(story, [check], null, run, null);
      return { a, b, none: document.querySelectorAll('[data-row-figure]').length };
    });
    assert.equal(out.a.same, '1');
    assert.match(out.a.text, /ran this same run \(0\.6 s, seed 1\): model \+6\.9%/);
    assert.equal(out.b.same, '0');
    assert.match(out.b.text, /gives \+5\.1% \[\+3\.2%, \+7\.0%\] for this row from 2 seeds of 0\.3 s each; this story's figure is one run of 0\.6 s at seed 1\. They differ by the measured window and the seeds/);
    assert.equal(out.none, 0, 'no model check yet: nothing beside the verdict');
    assert.deepEqual(problems, []);
    await page.close();
  });
}

export function registerOneTruthHowsure({ test, openPage, runAB, OUT, RUN_TIMEOUT }) {
  test('i44.2 how sure of shorter runs than the cards: says the band is of another figure and sets the cards\' figure beside it', async () => {
    const { page, problems } = await openPage('?v=1&machine=custom&sockets=2&cores_per_socket=4&b=skip-not-due&seconds=0.1&warmup=0.05&seed=3');
    await runAB(page);
    await page.fill('#howsure-seconds', '0.01');
    await page.click('#howsure-run');
    await page.waitForSelector('#howsure[data-state="done"], #howsure[data-state="error"]', { timeout: RUN_TIMEOUT * 3 });
    assert.equal(await page.getAttribute('#howsure', 'data-state'), 'done', await page.textContent('#howsure-error'));
    assert.match(await page.textContent('[data-testid="howsure-differs"]'),
      /^This band is of a different figure than the cards': runs of 0\.01 s with no warm-up \(the start-up is in it\), against the experiment's 0\.1 s with a 0\.05 s warm-up\. Each figure below is this screen's, with the cards' beside it\./);
    const card = await page.textContent('[data-testid="howsure-card-throughput_pct"]');
    const delta = await page.evaluate(() => document.getElementById('summary-delta-throughput').textContent);
    assert.match(card, /^ · the cards \(0\.1 s\): [+-]?[\d.]+%$/);
    assert.equal(Number(/([+-]?[\d.]+)%$/.exec(card)[1]).toFixed(1), Number(/[+-]?[\d.]+/.exec(delta)[0]).toFixed(1), `${card} vs the Δ card ${delta}`);
    await assertContrast(page, ['[data-testid="howsure-differs"]', '[data-testid="howsure-card-throughput_pct"]']);
    await shots(page, OUT, 'i44-howsure', { el: '#howsure' });
    assert.deepEqual(problems, []);
    await page.close();
  });
}

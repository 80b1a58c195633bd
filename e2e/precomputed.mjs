// e2e checks of issue 47 item 4 (a story's results within seconds): a story opens with the results
// shipped with the page (www/precomputed/stories.json, `schedplay precompute`) at once, labelled
// "computed by this build; Run to recompute"; the cards' report hashes are the file's; its curve is
// drawn from the shipped points; an edit of the form takes them off the screen (they never stand in
// for a changed scenario); Run then computes the form's experiment live. A live 0.6 s story side
// takes minutes in wasm, so the live run here is a short one and the hashes' equality with this
// engine is tests/precomputed.rs's (native, same engine). Screenshots of a story with its shipped
// results at 1280x800 and 390x844, light and dark. Registered by e2e.mjs.
import assert from 'node:assert/strict';
import { shots } from './shots.mjs';

const LABEL = 'computed by this build; Run to recompute';

export function registerPrecomputed({ test, openPage, runAB, OUT, RUN_TIMEOUT }) {
  test('i47.4 a story opens with its shipped results within 4 s, labelled; the hashes are the file\'s; an edit takes them off; Run recomputes', async () => {
    const { page, problems } = await openPage();
    const file = await page.evaluate(() => fetch('./www/precomputed/stories.json').then((r) => r.json()));
    const names = await page.locator('#stories button.story').evaluateAll((bs) => bs.map((b) => b.dataset.story));
    assert.deepEqual(names, file.stories.map((s) => s.name), 'one shipped entry per story, in the buttons\' order');
    const times = {};
    for (const s of file.stories) {
      // click -> label shown, timed inside the page
      await page.evaluate(() => {
        window.__shownAt = null;
        const el = document.getElementById('shipped-note');
        new MutationObserver((_, o) => { if (!el.hidden && !el.dataset.gone) { window.__shownAt = performance.now(); o.disconnect(); } })
          .observe(el, { attributes: true, childList: true, subtree: true });
        window.__clickAt = performance.now();
      });
      await page.click(`[data-testid="story-${s.name}"]`);
      await page.waitForFunction(() => window.__shownAt !== null, null, { timeout: 4000 });
      await page.waitForSelector('body[data-state="done"]', { timeout: 4000 });
      times[s.name] = await page.evaluate(() => Math.round(window.__shownAt - window.__clickAt));
      assert.ok(times[s.name] < 4000, `${s.name}: shown ${times[s.name]} ms after the click`);
      assert.match(await page.textContent('#shipped-note'), new RegExp(LABEL.replace(/[;]/g, '\\$&')));
      // the cards are the shipped reports, by their hashes; the results' link is the story's
      assert.equal(await page.getAttribute('#card-a', 'data-report-hash'), s.a.report_hash, `${s.name} A`);
      assert.equal(await page.getAttribute('#card-b', 'data-report-hash'), s.b.report_hash, `${s.name} B`);
      // every story's A runs 6.18 as released, whose reports leave the release out
      assert.equal(await page.textContent('[data-testid="features-a"]'), 'sched features: kernel 6.18\'s defaults');
      assert.equal(await page.textContent('#results-link'), s.link);
      assert.equal(Number(await page.getAttribute('#summary-delta-throughput', 'data-value')), s.compare.throughput_pct);
      // the verdict of the story's rows, one per shipped check; the charts have the series
      assert.equal(await page.locator('#story-figure li.verdict').count(), s.checks.length);
      const pts = await page.evaluate(() => window.schedplay.charts.plots.throughput.data[1].filter((v) => v != null).length);
      assert.ok(pts > 0, `${s.name}: the throughput chart has A's points`);
      // the curve, drawn from its shipped points
      if (s.curve) {
        await page.waitForSelector('#curve[data-shipped="1"]');
        assert.equal(await page.getAttribute('#curve-chart', 'data-points-a'), String(s.curve.points.length));
        assert.equal(await page.getAttribute('#curve-chart', 'data-points-b'), String(s.curve.points.length));
        assert.match(await page.textContent('#curve-progress-label'), new RegExp(LABEL.replace(/[;]/g, '\\$&')));
      } else {
        assert.equal(await page.getAttribute('#curve', 'data-shipped'), null, `${s.name} has no curve`);
      }
      // nothing ran: the results are the file's
      assert.equal(await page.evaluate(() => document.getElementById('cancel').disabled), true);
    }
    console.log(`  click -> shipped results shown (ms): ${JSON.stringify(times)}`);
    // screenshots of the first story with its shipped results
    await page.click(`[data-testid="story-${file.stories[0].name}"]`);
    await page.waitForSelector('#shipped-note:not([hidden]):not([data-gone])');
    await shots(page, OUT, 'i47-shipped-story', { scrollTo: '#results-of' });
    await shots(page, OUT, 'i47-shipped-curve', { el: '#curve' });
    // an edit: the shipped results leave the screen, and a note says why
    await page.fill('#seconds', '0.05');
    await page.fill('#warmup', '0');
    await page.waitForSelector('#shipped-note[data-gone="1"]', { timeout: 5000 });
    assert.match(await page.textContent('#shipped-note'), /Not shown: .*the form has changed/);
    assert.equal(await page.getAttribute('#card-a', 'data-report-hash'), null, 'no shipped report on the cards');
    assert.equal(await page.textContent('#summary-a-throughput'), '–');
    assert.ok(await page.isHidden('#curve-results'), 'no shipped curve');
    assert.equal(await page.getAttribute('#curve', 'data-shipped'), null);
    // Run computes the form's experiment live; the note goes
    await page.fill('#seconds', '0.02');
    await runAB(page);
    assert.ok(await page.isHidden('#shipped-note'));
    const hash = await page.getAttribute('#card-a', 'data-report-hash');
    assert.ok(hash && hash !== file.stories[0].a.report_hash, 'a live run\'s report');
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i47.4 a story link shows the shipped results at once; the story\'s Run recomputes them live', async () => {
    const { page: p0 } = await openPage();
    const file = await p0.evaluate(() => fetch('./www/precomputed/stories.json').then((r) => r.json()));
    await p0.close();
    const s = file.stories[1];
    const { page, problems } = await openPage(`?${s.link}&story=${encodeURIComponent(s.name)}`);
    await page.waitForSelector('#shipped-note:not([hidden]):not([data-gone])', { timeout: 4000 });
    assert.equal(await page.getAttribute('#card-b', 'data-report-hash'), s.b.report_hash);
    // Run starts the live run of the same experiment: the label goes at once, the run is the story's
    await page.click('#run');
    await page.waitForSelector('body[data-state="running"]', { timeout: 5000 });
    assert.ok(await page.isHidden('#shipped-note'), 'a live run is not labelled as shipped');
    assert.equal(await page.textContent('#results-link'), s.link);
    await page.click('#cancel');
    await page.waitForSelector('body[data-state="cancelled"]', { timeout: RUN_TIMEOUT });
    assert.deepEqual(problems, []);
    await page.close();
  });
}

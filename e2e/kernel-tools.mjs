// e2e checks of issue 29's page parts: the trace panel (Perfetto protobuf or Chrome JSON, the
// default window said before the file is saved, "Open in Perfetto UI" through Perfetto's PING/PONG
// postMessage handshake against a stand-in for ui.perfetto.dev), the /proc/schedstat domain table
// of A and B, and rt-app files as the workload (refusals by name and JSON path, as text; the link
// carries the file). Registered by e2e.mjs, whose helpers they use. Screenshots: OUT/i29-*.png,
// 1280x800 and 390x844, light and dark.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { assertContrast } from './page-honesty.mjs';
import { shots } from './shots.mjs';

/** A stand-in for ui.perfetto.dev: answers PONG only after a while (the page must keep pinging) and
 * keeps what it was posted. */
const FAKE_PERFETTO = `<!doctype html><title>fake perfetto</title><script>
window.pings = 0; window.got = null; const t0 = Date.now();
window.addEventListener('message', (e) => {
  if (e.data === 'PING') { window.pings++; if (Date.now() - t0 > 300) e.source.postMessage('PONG', '*'); return; }
  const p = e.data && e.data.perfetto;
  if (p) window.got = { title: p.title, fileName: p.fileName, n: p.buffer.byteLength, first: new Uint8Array(p.buffer)[0],
    isBuffer: p.buffer instanceof ArrayBuffer, from: e.origin };
});
</script>`;

export function registerKernelTools({ test, openPage, runAB, OUT, context }) {
  test('i29 trace: Perfetto protobuf by default with its window and size said, Chrome JSON too, and Open in Perfetto UI by its PING/PONG handshake', async () => {
    const { page, problems } = await openPage('?v=1&machine=milan-2s&workload=hackbench&seconds=0.03&seed=3');
    const origin = new URL(page.url()).origin;
    const elsewhere = [];
    page.on('request', (r) => { if (new URL(r.url()).origin !== origin) elsewhere.push(r.url()); });
    await runAB(page);
    // the default: no window given on a run of more events than the cap (hackbench's messages are
    // ~20 kernel steps each, so the cap is reached within a millisecond here): never fails, says the
    // window it cut and the size; protobuf bytes
    const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 120000 }), page.click('#download-trace')]);
    assert.match(dl.suggestedFilename(), /-b\.pftrace$/);
    const bytes = readFileSync(await dl.path());
    assert.equal(bytes[0], 0x0a, 'a Trace starts with a TracePacket (field 1, length-delimited)');
    const status = await page.textContent('#trace-status');
    assert.match(status, /^side B: trace \[0 s, 0\.\d+ s\) of the run, cut at the 1,000,000-event cap: [\d,]+ events, [\d.]+ (MB|KB) — trace saved as /, status);
    const kb = Number(/, ([\d.]+) (MB|KB) —/.exec(status)[1]) * (/MB —/.test(status) ? 1000 : 1);
    assert.ok(Math.abs(kb * 1000 - bytes.length) <= Math.max(1000, bytes.length * 0.06), `size said ${kb} KB, file ${bytes.length} B`);
    // Chrome JSON of an explicit window; an end past the cap is refused naming trace_to
    await page.selectOption('#trace-format', 'json');
    await page.fill('#trace-from', '0');
    await page.fill('#trace-to', '0.0001');
    const [dj] = await Promise.all([page.waitForEvent('download', { timeout: 120000 }), page.click('#download-trace')]);
    assert.match(dj.suggestedFilename(), /-b\.trace\.json$/);
    const t = JSON.parse(readFileSync(await dj.path(), 'utf8'));
    assert.ok(t.traceEvents.some((e) => e.ph === 'X' && e.name === 'kernel'), 'kernel slices');
    assert.match(await page.textContent('#trace-status'), /trace \[0 s, 0\.0001 s\) of the run: /);
    await page.fill('#trace-to', '99');
    await page.click('#download-trace');
    await page.waitForFunction(() => /no trace: trace_to/.test(document.getElementById('trace-status').textContent), null, { timeout: 120000 });
    await page.selectOption('#trace-format', 'pftrace');
    await page.fill('#trace-from', '');
    await page.fill('#trace-to', '');
    // nothing has left the page so far
    assert.deepEqual(elsewhere, [], 'no request outside the page\'s origin before Open in Perfetto UI');
    await context.route('https://ui.perfetto.dev/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: FAKE_PERFETTO }));
    try {
      const [popup] = await Promise.all([context.waitForEvent('page', { timeout: 10000 }), page.click('#open-perfetto')]);
      await popup.waitForFunction(() => window.got !== null, null, { timeout: 60000 });
      const got = await popup.evaluate(() => ({ ...window.got, pings: window.pings }));
      assert.equal(got.isBuffer, true);
      assert.equal(got.n, bytes.length, 'the same trace as the download (the last one made is reused)');
      assert.equal(got.first, 0x0a);
      assert.match(got.fileName, /-b\.pftrace$/);
      assert.match(got.title, /^schedplay /);
      assert.ok(got.pings >= 1, `pinged ${got.pings} times`);
      assert.equal(new URL(popup.url()).origin, 'https://ui.perfetto.dev');
      await page.waitForFunction(() => /opened in the Perfetto UI tab/.test(document.getElementById('trace-status').textContent), null, { timeout: 10000 });
      await popup.close();
    } finally {
      await context.unroute('https://ui.perfetto.dev/**');
    }
    await shots(page, OUT, 'i29-trace', { el: '#trace-box' });
    await assertContrast(page, ['#trace-status', '#trace-box .desc', '#open-perfetto']);
    assert.deepEqual(problems, []);
    state29.tracePage = page;
  });

  const state29 = {};

  test('i29 schedstat: per domain the lb_* fields by idle type, alb_*, sbe/sbf, ttwu_* for A and B, with the change as perf sched stats diff gives it', async () => {
    const { page, problems } = await openPage('?v=1&machine=milan-2s&workload=hackbench&b=skip-not-due&seconds=0.03&seed=5');
    await runAB(page);
    await page.click('#schedstat-box summary');
    const doms = await page.locator('#schedstat details.schedstat-domain').evaluateAll((ds) => ds.map((d) => d.dataset.domain));
    assert.ok(doms.length >= 2 && doms.includes('MC'), `domains ${doms}`);
    // every one of the 45 fields of each domain is a row or named in a "0 on both sides" row
    const per = await page.evaluate(() => [...document.querySelectorAll('#schedstat details.schedstat-domain')].map((d) => ({
      name: d.dataset.domain,
      rows: [...d.querySelectorAll('tr[data-field]')].map((r) => [r.dataset.field, ...[...r.cells].slice(1).map((c) => c.textContent)]),
      zero: [...d.querySelectorAll('tr[data-zero]')].flatMap((r) => r.dataset.zero.split(' ')),
      groups: [...d.querySelectorAll('th.ss-group')].map((x) => x.textContent),
    })));
    const n = (x) => Number(x.replace(/,/g, ''));
    for (const d of per) {
      assert.equal(d.rows.length + d.zero.length, 45, `${d.name}: ${d.rows.length} rows + ${d.zero.length} zero`);
      for (const idle of ['idle', 'busy', 'newidle']) assert.ok(d.groups.some((g) => g.includes(`[${idle}]`)), `${d.name}: ${idle} group`);
      assert.ok(d.groups.some((g) => g.startsWith('wakeups')) && d.groups.some((g) => g.startsWith('active')) && d.groups.some((g) => g.includes('sbe_')), d.groups.join('|'));
      for (const [f, a, b, c] of d.rows) {
        const want = n(a) === 0 ? 'new' : `${((n(b) - n(a)) * 100 / n(a) >= 0 ? '+' : '')}${((n(b) - n(a)) * 100 / n(a)).toFixed(2)}%`;
        assert.equal(c, want, `${d.name} ${f}: ${a} -> ${b}`);
      }
    }
    // the CPU totals are the report's counters: ttwu_count = wakeups, nr_switches = context switches
    const cpu = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#schedstat > .table-wrap tr[data-field]')]
      .map((r) => [r.dataset.field, [...r.cells].slice(1, 3).map((c) => Number(c.textContent.replace(/,/g, '')))])));
    const rep = await page.evaluate(() => ['a', 'b'].map((s) => window.schedplay.lastReport(s).counters));
    assert.deepEqual(cpu.ttwu_count, [rep[0].wakeups, rep[1].wakeups]);
    assert.deepEqual(cpu.nr_switches, [rep[0].context_switches, rep[1].context_switches]);
    // lb_count[busy] + lb_count[idle] over the domains = sched_balance_rq calls
    const lb = (i) => per.flatMap((d) => d.rows).filter((r) => r[0] === 'lb_count[busy]' || r[0] === 'lb_count[idle]').reduce((s, r) => s + n(r[i]), 0);
    assert.deepEqual([lb(1), lb(2)], [rep[0].sched_balance_rq_calls, rep[1].sched_balance_rq_calls]);
    await shots(page, OUT, 'i29-schedstat', { el: '#schedstat-box' });
    await assertContrast(page, ['#schedstat td.zero', '#schedstat th.ss-group', '#schedstat td.moved']);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('i29 rt-app: a pasted file is the workload; every refusal named with its JSON path, as text; the text is kept; the link carries the file', async () => {
    const { page, problems } = await openPage('?v=1&machine=custom&sockets=1&cores_per_socket=4&seconds=0.35&seed=2');
    await page.click('#rtapp-box summary');
    const bad = '{ "global": { "bogus": 1 },\n  "tasks": { "t": { "run": 1000, "fork": "x", "policy": "SCHED_FIFO", "<img src=x onerror=alert(1)>": 1 } } }';
    await page.fill('#rtapp-text', bad);
    await page.click('#rtapp-apply');
    await page.waitForFunction(() => /refused: 4 problems/.test(document.getElementById('rtapp-status').textContent), null, { timeout: 10000 });
    // the same refusals under the box, from the form's own check
    await page.waitForFunction(() => document.querySelectorAll('[data-error-for="workload_file"] .msg-text').length === 4, null, { timeout: 10000 });
    const msgs = await page.locator('[data-error-for="workload_file"] .msg-text').allTextContents();
    for (const path of ['global.bogus: ', 'tasks.t.fork: ', 'tasks.t.policy: SCHED_FIFO', 'tasks.t.<img src=x onerror=alert(1)>: ']) {
      assert.ok(msgs.some((m) => m.startsWith(path)), `${path} in ${msgs.join(' | ')}`);
    }
    assert.equal(await page.locator('[data-error-for="workload_file"] img').count(), 0, 'never parsed as HTML');
    assert.equal(await page.inputValue('#rtapp-text'), bad, 'the text is kept');
    await page.click('#run');
    await page.waitForSelector('body[data-state="error"]');
    assert.equal(await page.inputValue('#rtapp-text'), bad, 'still kept after a refused run');
    await shots(page, OUT, 'i29-rtapp-refused', { el: '#rtapp-box' });
    await shots(page, OUT, 'i29-rtapp-refusals', { el: '[data-error-for="workload_file"]' });
    await assertContrast(page, ['[data-error-for="workload_file"] .msg-text', '#rtapp-status']);
    // rt-app's tutorial load: 2 threads, 10 ms every 100 ms, with a comment
    const good = '{ /* 10% load */\n  "tasks": { "thread0": { "instance": 2, "loop": -1, "run": 10000,\n    "timer": { "ref": "unique", "period": 100000 } } },\n  "global": { "duration": 6, "default_policy": "SCHED_OTHER" }\n}\n';
    await page.fill('#rtapp-text', good);
    await page.click('#rtapp-apply');
    await page.waitForFunction(() => /the workload is this file/.test(document.getElementById('rtapp-status').textContent), null, { timeout: 10000 });
    assert.equal(await page.inputValue('#workload'), 'rtapp');
    await runAB(page);
    const ra = await page.evaluate(() => window.schedplay.lastReport('a'));
    assert.equal(ra.throughput_unit, 'task loops');
    assert.ok(ra.throughput_per_sec > 0, `${ra.throughput_per_sec}`);
    await page.click('#share');
    const link = await page.inputValue('#share-url');
    assert.match(link, /&workload=rtapp&workload_file=[A-Za-z0-9_-]+&/);
    assert.equal(await page.isHidden('#share-note'), true, 'a short link has no note');
    // opened fresh: the same file, the same workload, the same run
    const { page: p2, problems: pr2 } = await openPage(link.slice(link.indexOf('?')));
    assert.equal(await p2.inputValue('#rtapp-text'), good, 'the link carries the file exactly');
    assert.equal(await p2.inputValue('#workload'), 'rtapp');
    await runAB(p2);
    const rb = await p2.evaluate(() => window.schedplay.lastReport('a'));
    assert.equal(rb.report_hash, ra.report_hash);
    // another workload and back: the file is still the one used
    await p2.selectOption('#workload', 'hackbench');
    await p2.selectOption('#workload', 'rtapp');
    assert.equal(await p2.inputValue('#rtapp-text'), good);
    // a file too long for a sane link: the link still carries it and the page says why it is long
    const tasks = Array.from({ length: 200 }, (_, i) => `"t${i}": { "run": 1000, "sleep": 1000 }`).join(',\n    ');
    await p2.fill('#rtapp-text', `{ "tasks": {\n    ${tasks} } }`);
    await p2.click('#rtapp-apply');
    await p2.waitForFunction(() => /the workload is this file/.test(document.getElementById('rtapp-status').textContent), null, { timeout: 10000 });
    await p2.click('#share');
    await p2.waitForFunction(() => !document.getElementById('share-note').hidden, null, { timeout: 5000 });
    assert.match(await p2.textContent('#share-note'), /characters long: it carries the whole rt-app file .* send the rt-app file along with it/);
    await shots(p2, OUT, 'i29-rtapp-long-link', { el: '#share-box' });
    await shots(page, OUT, 'i29-rtapp-ok', { el: '#rtapp-box' });
    assert.deepEqual(problems, []);
    assert.deepEqual(pr2, []);
    await page.close();
    await p2.close();
  });
}

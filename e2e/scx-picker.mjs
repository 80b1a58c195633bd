// e2e checks of the page's sched_ext picker (www/scx.js, issue 45): a committed fixture object
// (tests/bpf/kit.bpf.o, the project's own) picked for side B runs B's tasks in the wasm worker,
// and B's summary names the BPF scheduler and file while A stays on the fair class; an object the
// loader refuses (tests/bpf/refuse_ringbuf.bpf.o) is refused under its side's picker with the
// loader's reason, and nothing runs. Share links: the picked object rides in the link's fragment,
// and the link opened in a fresh page restores the side and gives the same report; a link naming
// an object it does not carry (as one above the link's budget is) shows "needs FILE; pick it
// again", Run is refused, a different file is refused by its SHA-256 and the same file runs.
// Registered by e2e.mjs.
import assert from 'node:assert/strict';
import { shots } from './shots.mjs';

const Q = '?v=1&machine=custom&sockets=1&cores_per_socket=4&workload=hackbench&seconds=0.01&seed=3';

export function registerScxPicker({ test, openPage, runAB, RUN_TIMEOUT, OUT }) {
  test('i45 sched_ext picker: a committed fixture runs side B in wasm and B names it; a refused object is refused under its picker', async () => {
    const { page, problems } = await openPage(Q);
    await page.click('#scx-box summary');
    await page.setInputFiles('#scx-b', 'tests/bpf/kit.bpf.o');
    await page.waitForFunction(() => /kit\.bpf\.o \(\d+ bytes\)/.test(document.getElementById('scx-b-name').textContent), null, { timeout: 5000 });
    await runAB(page);
    const [a, b] = await Promise.all(['a', 'b'].map((s) => page.textContent(`#summary-${s}-hash`)));
    assert.match(b, /sched_ext kit \(kit\.bpf\.o\)/, b);
    assert.doesNotMatch(b, /disabled at/, 'kit ran to the end');
    assert.doesNotMatch(a, /sched_ext/, 'A stays on the fair class');

    // a ringbuf map is still refused, by the loader, under A's picker
    await page.setInputFiles('#scx-a', 'tests/bpf/refuse_ringbuf.bpf.o');
    await page.click('#run');
    await page.waitForFunction(() => [...document.querySelectorAll('[data-error-for="scx_a"]')]
      .some((e) => /refused by the loader: map events: type 27 \(ringbuf\) is not supported/.test(e.textContent)), null, { timeout: RUN_TIMEOUT });
    assert.deepEqual(problems, []);
  });

  test('i45 sched_ext links: the object rides in the link and reruns identically; a link naming a file it does not carry asks for it again', async () => {
    const { page, problems } = await openPage(Q);
    await page.click('#scx-box summary');
    await page.setInputFiles('#scx-b', 'tests/bpf/kit.bpf.o');
    await page.waitForFunction(() => /kit\.bpf\.o \(31984 bytes\)/.test(document.getElementById('scx-b-name').textContent), null, { timeout: 5000 });
    await runAB(page);
    const hash = await page.getAttribute('#card-b', 'data-report-hash');
    assert.ok(hash, 'B has a report hash');
    await page.click('#share');
    await page.waitForFunction(() => /scx_b_object=/.test(document.getElementById('share-url').value), null, { timeout: 5000 });
    const url = await page.inputValue('#share-url');
    // the page says what such a link cannot promise (chat tools cut it)
    await page.waitForFunction(() => /carries the BPF scheduler's object/.test(document.getElementById('share-note').textContent), null, { timeout: 5000 });
    const [query, frag] = url.split('#');
    assert.match(query, /&scx_b=kit\.bpf\.o&scx_b_sha256=[0-9a-f]{64}$/, 'the query names the object and its digest');
    assert.match(frag, /^scx_b_object=[A-Za-z0-9_-]{42000,}$/, 'the fragment carries the object');

    // the link in a fresh page: the side is back and the run is the same run
    const fresh = await openPage(url);
    await fresh.page.waitForFunction(() => /kit\.bpf\.o \(31984 bytes\)/.test(document.getElementById('scx-b-name').textContent), null, { timeout: 5000 });
    await runAB(fresh.page);
    assert.equal(await fresh.page.getAttribute('#card-b', 'data-report-hash'), hash, 'same report as the page the link came from');
    assert.deepEqual(fresh.problems, []);
    await fresh.page.close();

    // a link that names the object without carrying it (as encode_link writes one above its
    // budget): the side asks for the file, and Run is refused until the same file is picked
    const asks = await openPage(query);
    const p = asks.page;
    const needs = /needs kit\.bpf\.o \(SHA-256 [0-9a-f]{64}\)/;
    await p.waitForFunction((re) => new RegExp(re).test(document.getElementById('scx-b-name').textContent), needs.source, { timeout: 5000 });
    const errorFor = (side) => p.evaluate((s) => [...document.querySelectorAll(`[data-error-for="scx_${s}"]`)].map((e) => e.textContent).join(' '), side);
    await p.waitForFunction(() => /pick the file again/.test(document.querySelector('[data-error-for="scx_b"]').textContent), null, { timeout: 5000 });
    assert.match(await errorFor('b'), needs);
    await p.click('#run');
    await p.waitForSelector('body[data-state="error"]', { timeout: 5000 });
    assert.match(await p.textContent('#status'), /fix the marked fields first \(scx_b\)/);
    assert.equal(await p.getAttribute('#card-b', 'data-report-hash'), null, 'nothing ran');
    await shots(p, OUT, 'scx-ask-again', { into: '#scx-box' });
    // another file: refused by its digest, naming what the link asked for
    await p.setInputFiles('#scx-b', 'tests/bpf/fifo.bpf.o');
    await p.waitForFunction(() => /fifo\.bpf\.o has SHA-256 [0-9a-f]{64}, not the [0-9a-f]{64} the link asked for/.test(document.querySelector('[data-error-for="scx_b"]').textContent), null, { timeout: 5000 });
    // the same file: it runs, the same run again
    await p.setInputFiles('#scx-b', 'tests/bpf/kit.bpf.o');
    await p.waitForFunction(() => !document.querySelector('[data-error-for="scx_b"]').textContent.trim(), null, { timeout: 5000 });
    await runAB(p);
    assert.equal(await p.getAttribute('#card-b', 'data-report-hash'), hash);
    assert.deepEqual(asks.problems, []);
    await p.close();
    assert.deepEqual(problems, []);
  });
}

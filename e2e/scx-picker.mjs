// e2e checks of the page's sched_ext picker (www/scx.js, issue 45): a committed fixture object
// (tests/bpf/kit.bpf.o, the project's own) picked for side B runs B's tasks in the wasm worker,
// and B's summary names the BPF scheduler and file while A stays on the fair class; an object the
// loader refuses (tests/bpf/refuse_ringbuf.bpf.o) is refused under its side's picker with the
// loader's reason, and nothing runs. Registered by e2e.mjs.
import assert from 'node:assert/strict';

const Q = '?v=1&machine=custom&sockets=1&cores_per_socket=4&workload=hackbench&seconds=0.01&seed=3';

export function registerScxPicker({ test, openPage, runAB, RUN_TIMEOUT }) {
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
}

// sched_ext per side: a file input for a `.bpf.o` (a BPF scheduler built with clang -target bpf)
// for side A and for side B. The object rides in the experiment as `scx_a` / `scx_b`
// (docs/SCHEMA.md: file name, base64url bytes) to the wasm worker, which loads and runs it in
// place of the fair class for that side; a refused object comes back as an `scx_a` / `scx_b`
// field error naming what the loader refused. Not carried in share links yet.

import { $, h, setText } from './dom.js';

/** base64url without padding of `bytes` (a Uint8Array). */
function b64urlBytes(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Adds the two pickers under the patch list and keeps `form.scx` = { a, b } (each a choice or null). */
export function setupScx(form) {
  form.scx = { a: null, b: null };
  const table = $('patches');
  if (!table) return;
  const box = h('details', { id: 'scx-box', class: 'import-box scx-box', dataset: { testid: 'scx-box' } },
    h('summary', {}, 'sched_ext: a BPF scheduler per side'),
    h('p', { class: 'desc' }, 'A .bpf.o built with clang -target bpf runs every task of that side instead of the fair class (sched_ext, v6.18).'));
  for (const side of ['a', 'b']) {
    const input = h('input', { id: `scx-${side}`, name: `scx_${side}`, type: 'file', accept: '.o,.bpf.o,application/octet-stream', 'aria-label': `BPF scheduler for side ${side.toUpperCase()}` });
    const name = h('span', { id: `scx-${side}-name`, class: 'desc' }, '');
    const clear = h('button', { type: 'button', id: `scx-${side}-clear`, hidden: true }, 'clear');
    input.addEventListener('change', async () => {
      const f = input.files?.[0];
      if (!f) return;
      const bytes = new Uint8Array(await f.arrayBuffer());
      form.scx[side] = { file: f.name, object: b64urlBytes(bytes) };
      setText(name, `${f.name} (${bytes.length} bytes)`);
      clear.hidden = false;
      form.changed('scx');
    });
    clear.addEventListener('click', () => {
      form.scx[side] = null;
      input.value = '';
      setText(name, '');
      clear.hidden = true;
      form.changed('scx');
    });
    box.append(h('label', { class: 'row' }, `${side.toUpperCase()} `, input), name, clear,
      h('div', { class: 'field-error', dataset: { errorFor: `scx_${side}` } }));
  }
  table.after(box);
}

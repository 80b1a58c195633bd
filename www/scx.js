// sched_ext per side: a file input for a `.bpf.o` (a BPF scheduler built with clang -target bpf)
// for side A and for side B. The object rides in the experiment as `scx_a` / `scx_b`
// (docs/SCHEMA.md: file name, base64url bytes, options) to the wasm worker, which loads and runs it
// in place of the fair class for that side; a refused object comes back as an `scx_a` / `scx_b`
// field error naming what the loader refused. A share link carries the object (in its fragment,
// `linkHref`) while it is small; a larger one is named with its SHA-256, and opening the link shows
// the side as "needs FILE; pick it again" (validation refuses the side until the same file is
// picked: the digest the link gave stays with the side).

import { $, h, setText } from './dom.js';

/** base64url without padding of `bytes` (a Uint8Array). */
function b64urlBytes(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Bytes of an unpadded base64url text (its length, not decoded). */
const b64urlLen = (s) => Math.floor((String(s).length * 3) / 4);

/** The link keys that carry objects: the page puts them in the URL's fragment (never sent to the
 * server, so no web server's request-line limit cuts the link). */
const FRAGMENT_KEYS = new Set(['scx_a_object', 'scx_b_object']);

/** A canonical link (encode_link's query) as an href: `?query` with any object after `#`. */
export function linkHref(link) {
  const parts = String(link).split('&');
  const frag = parts.filter((p) => FRAGMENT_KEYS.has(decodeURIComponent(p.split('=')[0])));
  const query = parts.filter((p) => !frag.includes(p));
  return `?${query.join('&')}${frag.length ? `#${frag.join('&')}` : ''}`;
}

/** The page's link from its URL: the query and the fragment's object keys (`linkHref` reversed). */
export function linkOfLocation(loc = location) {
  const q = loc.search.replace(/^\?/, '');
  const f = loc.hash.replace(/^#/, '');
  return [q, f].filter((s) => s).join('&');
}

/** What a side shows: the file and its size, its options, or the ask-again state. */
function describe(c) {
  if (!c) return '';
  const opts = Object.entries(c.options || {}).map(([k, v]) => `${k}=${v}`).join(', ');
  const what = c.object
    ? `${c.file} (${b64urlLen(c.object)} bytes)`
    : `needs ${c.file}${c.sha256 ? ` (SHA-256 ${c.sha256})` : ''}: the link does not carry it; pick it again`;
  return opts ? `${what} · options ${opts}` : what;
}

/** Adds the two pickers under the patch list and keeps `form.scx` = { a, b } (each a choice or null). */
export function setupScx(form) {
  form.scx = { a: null, b: null };
  const table = $('patches');
  if (!table) return;
  const box = h('details', { id: 'scx-box', class: 'import-box scx-box', dataset: { testid: 'scx-box' } },
    h('summary', {}, 'sched_ext: a BPF scheduler per side'),
    h('p', { class: 'desc' }, 'A .bpf.o built with clang -target bpf runs every task of that side instead of the fair class (sched_ext, v6.18).'));
  const shown = {};
  for (const side of ['a', 'b']) {
    const input = h('input', { id: `scx-${side}`, name: `scx_${side}`, type: 'file', accept: '.o,.bpf.o,application/octet-stream', 'aria-label': `BPF scheduler for side ${side.toUpperCase()}` });
    const name = h('span', { id: `scx-${side}-name`, class: 'desc scx-name', dataset: { testid: `scx-${side}-name` } }, '');
    const clear = h('button', { type: 'button', id: `scx-${side}-clear`, hidden: true }, 'clear');
    const show = () => {
      const c = form.scx[side];
      setText(name, describe(c));
      name.dataset.asks = c && !c.object ? '1' : '';
      clear.hidden = !c;
    };
    shown[side] = show;
    input.addEventListener('change', async () => {
      const f = input.files?.[0];
      if (!f) return;
      const bytes = new Uint8Array(await f.arrayBuffer());
      // the options and the digest a link gave stay: the engine refuses a file of another digest
      const old = form.scx[side];
      form.scx[side] = { file: f.name, object: b64urlBytes(bytes), ...(old?.options ? { options: old.options } : {}), ...(old?.sha256 ? { sha256: old.sha256 } : {}) };
      show();
      form.changed(`scx_${side}`);
    });
    clear.addEventListener('click', () => {
      form.scx[side] = null;
      input.value = '';
      show();
      form.changed(`scx_${side}`);
    });
    box.append(h('label', { class: 'row' }, `${side.toUpperCase()} `, input), name, clear,
      h('div', { class: 'field-error', dataset: { errorFor: `scx_${side}` } }));
  }
  table.after(box);
  // an experiment set in the form (a link, a story, an import) brings its sides' schedulers
  form.onScx = (exp) => {
    for (const side of ['a', 'b']) {
      form.scx[side] = exp?.[`scx_${side}`] ? structuredClone(exp[`scx_${side}`]) : null;
      $(`scx-${side}`).value = '';
      shown[side]();
    }
    if (form.scx.a || form.scx.b) box.open = true;
  };
}

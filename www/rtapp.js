// "rt-app workload": a pasted (or opened) rt-app JSON file as the experiment's workload
// (`workload: {name: "rtapp", file}`, src/workload/rtapp/). The engine reads it; every key or event
// it does not model is refused by name with its JSON path, shown under the box (as text, never
// parsed as HTML). The text stays in the box whatever happens, and the share link carries it
// (`workload_file`: the exact text as base64url, src/experiment/link.rs).

import { $, h, setText } from './dom.js';

/** Unpadded base64url of the UTF-8 bytes of `text` (the link's `workload_file`). */
export function b64url(text) {
  const bytes = new TextEncoder().encode(String(text ?? ''));
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Adds the rt-app box under the workload's knobs and wires it to `form` (ScenarioForm). */
export function setupRtapp(engine, form) {
  const text = h('textarea', { id: 'rtapp-text', rows: '10', cols: '40', spellcheck: 'false', 'aria-label': 'rt-app JSON file', placeholder: '{ "tasks": { "thread0": { "instance": 2, "loop": -1, "run": 10000, "timer": { "ref": "t", "period": 100000 } } } }' });
  const file = h('input', { id: 'rtapp-file', type: 'file', accept: '.json,application/json,text/plain', 'aria-label': 'open an rt-app JSON file' });
  const box = h('details', { id: 'rtapp-box', class: 'import-box rtapp-box', dataset: { testid: 'rtapp-box' } },
    h('summary', {}, 'rt-app workload'),
    h('p', { class: 'desc' }, 'Paste an rt-app JSON file (rt-app\'s own dialect: comments and trailing commas are fine). The engine reads its ',
      h('code', {}, 'global'), ' and ', h('code', {}, 'tasks'), ' sections: SCHED_OTHER tasks with ', h('code', {}, 'run'), ', ',
      h('code', {}, 'runtime'), ', ', h('code', {}, 'sleep'), ', ', h('code', {}, 'timer'), ', ', h('code', {}, 'lock'), '/', h('code', {}, 'unlock'), ', ',
      h('code', {}, 'signal'), '/', h('code', {}, 'wait'), '/', h('code', {}, 'broad'), ', ', h('code', {}, 'barrier'), ', ',
      h('code', {}, 'mem'), '/', h('code', {}, 'iorun'), '. Anything else is refused by name with its JSON path. One unit of throughput is one loop of a task. The share link carries the file.'),
    text,
    h('label', { class: 'row' }, 'or open a file ', file),
    h('div', { class: 'run-row' },
      h('button', { type: 'button', id: 'rtapp-apply' }, 'Use as the workload')),
    h('div', { id: 'rtapp-status', role: 'status', 'aria-live': 'polite', dataset: { testid: 'rtapp-status' } }));
  // typing here is not a scenario change until "Use as the workload"
  for (const t of ['input', 'change']) box.addEventListener(t, (ev) => ev.stopPropagation());
  // the engine's refusals of the file: under the box, seen with the box closed too
  const errors = h('div', { class: 'field-error rtapp-error', 'data-error-for': 'workload_file', dataset: { testid: 'rtapp-errors' } });
  $('workload-knobs').after(box, errors);

  // a link or story with an rt-app file fills the box (never empties what the user typed)
  form.onRtapp = (t) => {
    if (t && text.value !== t) text.value = t;
    if (t) box.open = true;
  };

  file.addEventListener('change', async () => {
    const f = file.files?.[0];
    if (!f) return;
    text.value = await f.text();
    setText('rtapp-status', `${f.name} read (${f.size.toLocaleString('en-US')} bytes): Use as the workload to run it`);
  });

  $('rtapp-apply').addEventListener('click', async () => {
    const t = text.value;
    if (!t.trim()) { setText('rtapp-status', 'paste an rt-app file first'); return; }
    form.setRtapp(t);
    form.changed('workload_file');
    setText('rtapp-status', 'reading…');
    try {
      const { errors: all } = await engine.call('validate', { experiment: form.get() });
      const mine = (all || []).filter((e) => e.field === 'workload_file');
      const bytes = new TextEncoder().encode(t).length.toLocaleString('en-US');
      setText('rtapp-status', mine.length
        ? `refused: ${mine.length} ${mine.length === 1 ? 'problem' : 'problems'}, each below with its JSON path (your text is kept: edit it and use it again)`
        : `the workload is this file (${bytes} bytes): Run A/B runs it`);
    } catch (e) {
      setText('rtapp-status', `not checked: ${e.message}`);
    }
  });
}

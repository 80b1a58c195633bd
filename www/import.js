// "Import machine": a real machine's `lscpu -p` / `lscpu -e` + `numactl -H` text, parsed by the
// engine (src/machine_file.rs) into the experiment's `cpu_map`: the exact CPU numbering, SMT
// siblings, LLCs, nodes and SLIT. The preset select then names the preset whose hardware figures
// (latencies) the machine uses. Every rule is the engine's; errors name the line and column.

import { $, h, clear, setText } from './dom.js';

/** Adds the Import machine box under the machine summary and wires it to `form` (ScenarioForm). */
export function setupImport(engine, form, presets) {
  const hardware = h('select', { id: 'import-hardware', 'aria-label': 'hardware figures of' },
    h('option', { value: '' }, 'the closest preset'),
    (presets.machines || []).map((m) => h('option', { value: m.name, title: m.description || '' }, m.name)));
  const box = h('details', { id: 'import-box', class: 'import-box', dataset: { testid: 'import-box' } },
    h('summary', {}, 'Import machine'),
    h('p', { class: 'desc' }, 'Paste the output of ', h('code', { class: 'cmd' }, 'lscpu -p=CPU,CORE,SOCKET,NODE,CACHE'),
      ' (or ', h('code', { class: 'cmd' }, 'lscpu -e'), ') and ', h('code', { class: 'cmd' }, 'numactl -H'),
      ' (or ', h('code', {}, 'grep . /sys/devices/system/node/node*/distance'), ').'),
    h('textarea', { id: 'import-text', rows: '6', cols: '40', spellcheck: 'false', 'aria-label': 'lscpu and numactl output' }),
    h('label', { class: 'row' }, 'hardware figures of ', hardware),
    h('div', { class: 'run-row' },
      h('button', { type: 'button', id: 'import-apply' }, 'Import'),
      h('button', { type: 'button', id: 'import-clear', disabled: true }, 'Back to the preset\'s layout')),
    h('div', { id: 'import-status', class: 'desc', role: 'status', 'aria-live': 'polite', dataset: { testid: 'import-status' } }),
    h('ul', { id: 'import-errors', class: 'field-error shown', dataset: { testid: 'import-errors' } }));
  // typing here is not a scenario change (the form re-validates on input)
  for (const t of ['input', 'change']) box.addEventListener(t, (ev) => ev.stopPropagation());
  // a link's bad cpu_map is reported here, outside the (closed) box
  $('machine-summary').after(box, h('div', { class: 'field-error', 'data-error-for': 'cpu_map' }));

  const sync = () => { $('import-clear').disabled = !form.cpuMap; };
  new MutationObserver(sync).observe($('machine-summary'), { childList: true, characterData: true, subtree: true });

  $('import-apply').addEventListener('click', async () => {
    clear($('import-errors'));
    setText('import-status', 'reading…');
    try {
      const { machine: m } = await engine.call('import_machine', { text: $('import-text').value, hardware: hardware.value });
      const s = m.summary || {};
      const n = (x, word) => `${Number(x).toLocaleString('en-US')} ${word}${Number(x) === 1 ? '' : 's'}`;
      const note = `imported machine: ${n(s.cpus, 'CPU')}, ${n(s.sockets, 'socket')}, ${n(s.nodes, 'node')}, ${n(s.llcs, 'LLC')}, ${s.smt > 1 ? 'SMT on' : 'SMT off'}`;
      $('machine').value = m.preset;
      form.applyMachinePreset(m.preset);
      form.setCpuMap(m.cpu_map);
      const vendor = { amd: 'AMD', intel: 'Intel', ibm: 'IBM', arm: 'Arm', hisilicon: 'HiSilicon' }[m.preset_vendor] ?? String(m.preset_vendor ?? '');
      setText('import-status', `${note}; hardware figures of ${m.preset} (${vendor})${m.closest ? ` (the closest preset; the preset list chooses another). Why: ${m.why}` : ''}`
        + (m.notes?.length ? `. Assumed: ${m.notes.join('; ')}` : ''));
      // Chosen by shape alone when the text names no vendor: an Intel box can get AMD figures.
      // Said where it is seen, not only in the (closed) box.
      form.importNote = m.arch
        ? `No preset is a ${m.arch} machine: its hardware figures (cache-line latencies) are those of ${m.preset} (${vendor}); its sched domains follow the ${m.arch} kernel's own table.`
        : m.closest && !m.vendor
        ? `The pasted text names no CPU vendor, so its hardware figures (cache-line latencies) are those of ${m.preset} (${vendor}), the preset closest in shape. If the machine is not ${vendor}, choose its figures under Import machine → "hardware figures of", or paste plain lscpu output too (its "Vendor ID" line).`
        : '';
      form.changed('machine');
    } catch (e) {
      setText('import-status', 'not imported:');
      const list = e?.errors?.length ? e.errors : [{ message: String(e?.message ?? e) }];
      for (const f of list) $('import-errors').append(h('li', {}, String(f.message)));
    }
    sync();
  });
  $('import-clear').addEventListener('click', () => {
    form.importNote = '';
    form.setCpuMap(null);
    form.applyMachinePreset($('machine').value);
    setText('import-status', '');
    clear($('import-errors'));
    form.changed('machine');
    sync();
  });
}

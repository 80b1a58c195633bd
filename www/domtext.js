// The domain tree's text forms, as kernel developers read them: the boot dmesg of sched_verbose
// (`CPU0 attaching sched-domain(s):` ...) and the /sys/kernel/debug/sched/domains files, both made
// by the engine (SchedDomains::dmesg / debugfs; `schedplay topology --format sched-verbose|debugfs`).

import { h } from './dom.js';

/** A <details> with the two texts of `topo` (the engine's topology reply) and a copy button each. */
export function domainTextBox(topo) {
  if (!topo || !topo.sched_verbose) return null;
  const block = (label, text, id) => {
    const pre = h('pre', { class: 'domain-text', id, dataset: { testid: id } }, text);
    const status = h('span', { class: 'desc', role: 'status' });
    const copy = h('button', {
      type: 'button', class: 'copy', dataset: { testid: `copy-${id}` },
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(text);
          status.textContent = ' copied';
        } catch {
          // no clipboard permission: select the text for Ctrl+C
          getSelection()?.selectAllChildren(pre);
          status.textContent = ' selected: press Ctrl+C';
        }
      },
    }, `Copy ${label}`);
    return h('div', {}, copy, status, pre);
  };
  return h('details', { class: 'domain-texts' },
    h('summary', {}, 'as text: sched_verbose dmesg, debugfs'),
    block('sched_verbose', topo.sched_verbose, 'sched-verbose-text'),
    block('debugfs', topo.debugfs || '', 'debugfs-text'));
}

// Kernel knob fields (7.2's `llc_balancing/` debugfs files and CONFIG_SCHED_CACHE): generated from
// presets().kernel_knobs (the engine's llc_balancing::KNOBS: key, range, default, description) and
// shown only for a release in presets().kernel_knob_releases. The engine checks every value
// (decode_link: an error names the key and its range); nothing here decides what is allowed.
import { $, h, clear } from './dom.js';

export class KernelKnobs {
  /** `box`: the container element; `presets`: the engine's presets(). */
  constructor(box, presets) {
    this.box = box;
    this.knobs = presets.kernel_knobs || [];
    this.releases = new Set(presets.kernel_knob_releases || []);
    this.render();
  }

  render() {
    const grid = clear(this.box);
    grid.append(h('p', { class: 'desc' },
      'Kernel knobs of this release: /sys/kernel/debug/sched/llc_balancing/ and the build option. Empty = the kernel default.'));
    for (const k of this.knobs) {
      const input = h('input', {
        // the id is the key, so an engine error for the key marks this input (form.js fieldInput)
        id: k.key, name: k.key, type: 'text', inputmode: 'numeric', autocomplete: 'off',
        placeholder: `default ${k.default}`,
        'aria-describedby': `${k.key}-desc`,
        dataset: { testid: `sched-${k.key}`, sched: '1' },
      });
      grid.append(h('div', { class: 'field kernel-knob' },
        h('label', {}, h('span', { class: 'knob-key' }, k.key.replace(/^llc_balancing\//, '')), ' ', input),
        // the description and range in full (no tooltip-only text: touch screens have no hover)
        h('div', { class: 'hint', id: `${k.key}-desc` }, `${k.key}: ${k.min}..${k.max}, default ${k.default}. ${k.description}`),
        h('div', { class: 'field-error', 'data-error-for': k.key })));
    }
  }

  /** Whether release `name` has these knobs (the fields are shown and sent only then). */
  applies(name) { return this.releases.has(name); }

  /** Show the fields for release `name`, hide them otherwise (their text is kept). */
  show(name) { this.box.hidden = !this.applies(name); }

  /** Fill from an experiment's `sched` object (key -> value); keys with no field are returned. */
  set(sched) {
    const rest = {};
    for (const k of this.knobs) $(k.key).value = '';
    for (const [key, v] of Object.entries(sched || {})) {
      const el = this.knobs.some((k) => k.key === key) ? $(key) : null;
      if (el) el.value = String(v);
      else rest[key] = v;
    }
    return rest;
  }

  /** The typed values as link pairs [key, text] (empty fields: the kernel default, not sent). */
  pairs() {
    return this.knobs.map((k) => [k.key, $(k.key).value.trim()]).filter(([, t]) => t !== '');
  }

  /** The typed values as the experiment's `sched` object (text a number parses to is a number). */
  sched() {
    const out = {};
    for (const [key, t] of this.pairs()) out[key] = /^\d+$/.test(t) ? Number(t) : t;
    return out;
  }
}

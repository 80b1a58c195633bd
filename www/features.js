// The sched features under the release picker (issue 46 item 3): what the chosen release's
// /sys/kernel/debug/sched/features lists (presets().sched_features: name, default, the code path the
// engine switches, or why it cannot), each modelled one an A and a B checkbox, the rest greyed and
// marked "not modelled". A side's choice is a list of debugfs writes on top of its release's
// defaults (`NO_NI_RANDOM`, `NEXT_BUDDY`), the experiment's `features_a` / `features_b` and the
// link's keys of the same names: the engine decides what a write means and refuses what it cannot
// switch (its error under the list). A write the list cannot show (a name the release does not
// list, from a link) is kept and shown as a row of its own, ticked: unticking drops it.
import { $, h, clear } from './dom.js';

const SIDES = ['a', 'b'];
/** `NO_NAME` -> ['NAME', false]; `NAME` -> ['NAME', true] (as debugfs reads a write). */
const parse = (w) => (w.startsWith('NO_') ? [w.slice(3), false] : [w, true]);

export class SchedFeatures {
  /** `box`: the `<details>` the list goes in (inside the scenario form); `presets`: the engine's. */
  constructor(box, presets) {
    this.box = box;
    this.lists = presets.sched_features || {};
    this.writes = { a: [], b: [] }; // each side's debugfs writes, in order
    this.release = { a: '', b: '' };
    box.addEventListener('change', (ev) => this.toggled(ev.target));
  }

  /** The list of `release` (null for a release without one). */
  rowsOf(release) { return this.lists[release]?.features || null; }

  /** The writes of an experiment (a link, a story). */
  set(exp) {
    this.writes = { a: [...(exp.features_a || []).map(String)], b: [...(exp.features_b || []).map(String)] };
  }

  /** `{features_a, features_b}` as the experiment carries them (absent when empty). */
  get() {
    const out = {};
    for (const side of SIDES) if (this.writes[side].length) out[`features_${side}`] = [...this.writes[side]];
    return out;
  }

  /** Whether `name` is on for `side`: its release's default, then the side's writes in order. */
  state(side, row) {
    let on = row.default;
    for (const w of this.writes[side]) { const [n, v] = parse(w); if (n === row.name) on = v; }
    return on;
  }

  /** A box was (un)ticked: that side's writes for the feature are replaced by the one that gives
   * the new state (none when it is the release's default). */
  toggled(el) {
    const side = el?.dataset?.featureSide;
    if (!side) return;
    const name = el.dataset.feature;
    if (el.dataset.extra) {
      // a write from a link the list cannot show: unticking drops it
      if (!el.checked) this.writes[side] = this.writes[side].filter((w) => w !== name);
    } else {
      const row = (this.rowsOf(this.release[side]) || []).find((r) => r.name === name);
      this.writes[side] = this.writes[side].filter((w) => parse(w)[0] !== name);
      if (row && el.checked !== row.default) this.writes[side].push(el.checked ? name : `NO_${name}`);
    }
    // the form's own change handler (on #scenario, after this one) then syncs the field by its name
    this.render(this.release.a, this.release.b);
  }

  /** The list for A's release (B's column follows B's release when it differs). */
  render(releaseA, releaseB) {
    this.release = { a: releaseA, b: releaseB || releaseA };
    const rows = { a: this.rowsOf(this.release.a) || [], b: this.rowsOf(this.release.b) || [] };
    const tbody = clear(this.box.querySelector('tbody'));
    // a write whose name the side's release does not list: its own row, ticked
    for (const side of SIDES) {
      for (const w of this.writes[side]) {
        if (rows[side].some((r) => r.name === parse(w)[0])) continue;
        const box = h('input', { type: 'checkbox', checked: true, name: `features_${side}`, 'aria-label': `${side.toUpperCase()}: ${w} (untick to drop it)`, dataset: { featureSide: side, feature: w, extra: '1', testid: `feature-${side}-${w}` } });
        tbody.append(h('tr', { class: 'not-on', dataset: { feature: w, extra: '1' } },
          h('td', {}, side === 'a' ? box : null), h('td', {}, side === 'b' ? box : null),
          h('td', {}, h('span', { class: 'patch-name' }, w), h('div', { class: 'patch-status' }, `from the link: not a feature kernel ${this.release[side]} lists; untick to drop it`))));
      }
    }
    const names = [...rows.a.map((r) => r.name), ...rows.b.map((r) => r.name).filter((n) => !rows.a.some((r) => r.name === n))];
    let switchable = 0;
    for (const name of names) {
      const of = { a: rows.a.find((r) => r.name === name), b: rows.b.find((r) => r.name === name) };
      const modelled = SIDES.some((s) => of[s]?.path);
      if (modelled) switchable++;
      const cell = (side) => {
        const r = of[side];
        if (!r) return h('td', { title: `not listed on kernel ${this.release[side]}` }, '–');
        const on = r.path ? this.state(side, r) : r.default;
        return h('td', {}, h('input', {
          type: 'checkbox', checked: on, disabled: !r.path, name: `features_${side}`,
          title: r.path ? '' : `not modelled: ${r.refused || 'its code path is not in the model'}`,
          'aria-label': `${side.toUpperCase()}: ${name}${r.path ? '' : ' (not modelled)'}`,
          dataset: { featureSide: side, feature: name, testid: `feature-${side}-${name}` },
        }));
      };
      const r = of.a || of.b;
      const what = modelled
        ? h('div', { class: 'patch-desc' }, `default ${r.default ? 'on' : 'off'} · `, h('code', {}, (of.a?.path || of.b?.path)))
        : h('div', { class: 'patch-status' }, `not modelled: ${r.refused || 'its code path is not in the model'} (default ${r.default ? 'on' : 'off'})`);
      tbody.append(h('tr', { class: modelled ? '' : 'not-on', dataset: { feature: name, modelled: modelled ? '1' : '' } },
        cell('a'), cell('b'), h('td', {}, h('span', { class: 'patch-name' }, name), what)));
    }
    const two = this.release.b !== this.release.a;
    const said = (side) => (this.writes[side].length ? this.writes[side].join(',') : 'the defaults');
    this.box.querySelector('summary').textContent = names.length
      ? `sched features (/sys/kernel/debug/sched/features of ${this.release.a}${two ? `, B ${this.release.b}` : ''}): ${switchable} of ${names.length} switchable · A: ${said('a')} · B: ${said('b')}`
      : `sched features: none listed for kernel ${this.release.a}`;
    this.box.dataset.switchable = String(switchable);
  }
}

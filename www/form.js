// Scenario form: rendered from presets(), reads/writes the engine's Experiment object. The machine
// fields (presets().machine_keys: key, link key, range, description) and the HZ list (presets().hz)
// are the engine's; nothing here decides what is allowed.
import { $, h, clear } from './dom.js';
import { b64url } from './rtapp.js';
import { KernelKnobs } from './kernel-knobs.js';
import { SchedFeatures } from './features.js';

/** The workload name of an rt-app file (src/workload/rtapp): not in presets().workloads. */
export const RTAPP = 'rtapp';

export class ScenarioForm {
  constructor(presets, onChange) {
    this.presets = presets;
    this.onChange = onChange;
    this.template = null; // last experiment set: keeps its unknown keys
    this.knobs = []; // knob descriptors of the current workload
    this.touched = new Set(); // machine keys typed by the user or given by the link: always sent
    /** @type {{key: string, link: string, min: number, max: number, words: [string, number][], description: string}[]} */
    this.machineKeys = presets.machine_keys;
    /** An imported machine (www/import.js): the engine's cpu_map (its summary is the engine's). */
    this.cpuMap = null;
    this.importNote = ''; // why the imported machine has the hardware figures it has (import.js)
    /** The rt-app file in use (www/rtapp.js) while the workload is RTAPP; kept when another is chosen. */
    this.rtappFile = null;
    this.onRtapp = null; // rtapp.js: shows a file that came from a link or story
    this.renderStatic();
  }

  machinePreset(name) { return this.presets.machines.find((m) => m.name === name); }
  workloadPreset(name) { return this.presets.workloads.find((w) => w.name === name); }

  renderStatic() {
    const p = this.presets;
    const msel = clear($('machine'));
    for (const m of p.machines) msel.append(h('option', { value: m.name, title: m.description || '' }, m.name));
    const keys = clear($('machine-keys'));
    for (const k of this.machineKeys) {
      // A key with words (SMT: on/off) is a choice; its option values are the engine's counts.
      const field = (k.words || []).length
        ? h('select', { id: k.key, name: k.key, title: k.description },
          k.words.map(([word, value]) => h('option', { value: String(value) }, word)))
        : h('input', { id: k.key, name: k.key, type: 'text', inputmode: 'numeric', min: k.min, max: k.max, title: `${k.description} (${k.min}..${k.max})` });
      keys.append(h('div', { class: 'machine-key' },
        h('label', { title: k.description }, k.key.replace(/_/g, ' '), ' ', field),
        h('div', { class: 'field-error', 'data-error-for': k.key })));
    }
    const hz = clear($('hz'));
    for (const v of p.hz) hz.append(h('option', { value: String(v) }, String(v)));
    const wsel = clear($('workload'));
    for (const w of p.workloads) wsel.append(h('option', { value: w.name, title: w.description || '' }, w.name));

    const ksel = clear($('kernel'));
    for (const k of p.kernels || []) ksel.append(h('option', { value: k.name, title: k.source || '' }, k.name));
    ksel.value = p.default_kernel;
    const kb = $('kernel-b');
    for (const k of p.kernels || []) kb.append(h('option', { value: k.name, title: k.source || '' }, k.name));
    this.kernelKnobs = new KernelKnobs($('kernel-knobs'), p);
    this.features = new SchedFeatures($('sched-features'), p);
    this.schedRest = {}; // kernel knob keys of the loaded experiment that have no field
    const tbody = clear($('patches').tBodies[0]);
    for (const pt of p.patches) tbody.append(patchRow(pt));
    // a side's own kernel knob (7.2: CONFIG_SCHED_CACHE=n, llc_balancing/enabled=0): an A/B row
    // like a toggle, offered only on the releases that take knobs
    for (const st of p.kernel_side_settings || []) tbody.append(patchRow({ ...st, commit: '' }, false, true));
    // what the user ticked, kept across releases: a release that merges a toggle shows it ticked and
    // fixed, and the release before gives the user's own choice back (dataset.asked)
    $('patches').addEventListener('change', (ev) => {
      const el = ev.target;
      if (el.classList?.contains('patch-a') || el.classList?.contains('patch-b')) el.dataset.asked = el.checked ? '1' : '';
    });
    this.applyKernel();

    const stories = clear($('stories'));
    (p.stories || []).forEach((s, i) => {
      stories.append(h('button', {
        type: 'button', class: 'story', id: `story-${i}`,
        dataset: { story: s.name, testid: `story-${s.name}` },
        title: s.name,
      }, s.title || s.name));
    });

    // before the form's own change handler (bubbling): the merged toggles are fixed first
    $('kernel').addEventListener('change', () => this.applyKernel());
    $('kernel-b').addEventListener('change', () => this.applyKernel());
    $('machine').addEventListener('change', () => { this.applyMachinePreset($('machine').value); this.changed('machine'); });
    $('workload').addEventListener('change', () => { this.renderKnobs($('workload').value, null); this.changed('workload'); });
    $('scenario').addEventListener('input', (ev) => this.changed(fieldOf(ev.target)));
    $('scenario').addEventListener('change', (ev) => {
      if (ev.target.id === 'machine' || ev.target.id === 'workload') return;
      this.changed(fieldOf(ev.target));
    });
    for (const { key } of this.machineKeys) {
      $(key).addEventListener('input', () => this.touched.add(key));
      $(key).addEventListener('change', () => this.touched.add(key));
    }
  }

  changed(field) { this.onChange?.(field); }

  applyMachinePreset(name) {
    const m = this.machinePreset(name);
    $('machine-desc').textContent = m ? (m.description || '') : '';
    this.touched.clear();
    if (!m || name === 'custom') return;
    for (const { key } of this.machineKeys) if (m[key] !== undefined) $(key).value = String(m[key]);
  }

  /** Imported machine on (map) or off (null): the layout fields do not apply to it. */
  setCpuMap(map) {
    const was = this.cpuMap;
    this.cpuMap = map || null;
    for (const key of this.presets.layout_keys || []) if ($(key)) $(key).disabled = !!this.cpuMap;
    // back to the preset: its layout again in the fields the imported machine had filled
    if (was && !this.cpuMap) this.applyMachinePreset($('machine').value);
  }

  /**
   * An imported machine's own layout in the (disabled) layout fields and its description, from the
   * engine's summary of the machine it built (never the preset's layout: the preset gives only the
   * hardware figures). A size that differs between nodes or LLCs reads "mixed".
   */
  showImportedLayout(s) {
    if (!this.cpuMap || !s) return;
    const one = (sizes) => (sizes?.length === 1 ? String(sizes[0].cores) : 'mixed');
    const smtOpt = [...($('smt')?.options || [])].find((o) => Number(o.value) === s.smt);
    const values = {
      sockets: String(s.sockets),
      cores_per_socket: String(s.cpus / s.smt / s.sockets),
      nodes_per_socket: String(s.nodes / s.sockets),
      cores_per_llc: one(s.llc_sizes),
      cores_per_cluster: s.cluster_sizes?.length ? one(s.cluster_sizes) : '1',
    };
    for (const [k, v] of Object.entries(values)) {
      const el = $(k);
      if (!el || el.tagName !== 'INPUT') continue;
      el.value = Number.isInteger(Number(v)) || v === 'mixed' ? v : 'mixed';
    }
    if (smtOpt) $('smt').value = smtOpt.value;
    const mp = this.machinePreset($('machine').value);
    $('machine-desc').textContent = `Imported machine (its layout below, from the pasted text); hardware figures of ${$('machine').value}${mp?.description ? `: ${mp.description}` : ''}`;
  }

  /** Machine keys the experiment carries: not the layout ones with an imported machine. */
  activeMachineKeys() {
    const layout = new Set(this.cpuMap ? this.presets.layout_keys || [] : []);
    return this.machineKeys.filter((k) => !layout.has(k.key));
  }

  /** The rt-app file `text` as the workload: an `rtapp` choice in the workload list, selected. */
  setRtapp(text) {
    this.rtappFile = String(text ?? '');
    const sel = $('workload');
    if (![...sel.options].some((o) => o.value === RTAPP)) sel.append(h('option', { value: RTAPP }, 'rtapp (the rt-app file)'));
    sel.value = RTAPP;
    this.renderKnobs(RTAPP, null);
    this.onRtapp?.(this.rtappFile);
  }

  renderKnobs(workloadName, values) {
    if (workloadName === RTAPP) {
      clear($('workload-knobs'));
      this.knobs = [];
      const n = new TextEncoder().encode(this.rtappFile ?? '').length;
      $('workload-desc').textContent = `the rt-app file under "rt-app workload" (${n.toLocaleString('en-US')} bytes) — throughput in task loops`;
      return;
    }
    const w = this.workloadPreset(workloadName);
    $('workload-desc').textContent = w ? `${w.description || ''}${w.unit ? ` — throughput in ${w.unit}` : ''}` : '';
    const box = clear($('workload-knobs'));
    this.knobs = w ? w.knobs || [] : [];
    for (const k of this.knobs) {
      // A knob left empty is omitted from the experiment: the engine then uses its default, which
      // may depend on the machine ("default: number of CPUs"), so `default` may be absent here.
      const given = values && values[k.name] !== undefined && values[k.name] !== null;
      const v = given ? values[k.name] : k.default;
      let input;
      if (k.kind === 'enum') {
        const opts = (k.values || []).map((x) => h('option', { value: String(x) }, String(x)));
        if (k.default === undefined || k.default === null) opts.unshift(h('option', { value: '' }, 'default'));
        input = h('select', { id: `knob-${k.name}`, name: k.name, dataset: { knob: k.name } }, opts);
        input.value = v === undefined || v === null ? '' : String(v);
      } else {
        input = h('input', {
          id: `knob-${k.name}`, name: k.name, type: 'text', inputmode: 'numeric',
          min: k.min ?? undefined, max: k.max ?? undefined,
          // a machine-dependent default is spelled out under the field (a narrow input cuts it)
          placeholder: k.default === undefined || k.default === null ? 'auto' : undefined,
          dataset: k.default === undefined || k.default === null ? { knob: k.name, hint: defaultHint(k.description) } : { knob: k.name },
        });
        input.value = v === undefined || v === null ? '' : String(v);
      }
      const hint = input.dataset?.hint;
      // label and its message in one grid cell: a message never moves the other fields
      box.append(h('div', { class: 'field' },
        h('label', { title: k.description || '' }, k.name.replace(/_/g, ' '), ' ', input),
        hint ? h('div', { class: 'hint' }, hint) : null,
        h('div', { class: 'field-error', 'data-error-for': k.name })));
    }
  }

  /** Fill every field from an Experiment (as returned by decode_link or a story). */
  set(exp) {
    this.template = structuredClone(exp);
    const m = exp.machine || {};
    $('machine').value = m.preset ?? '';
    const mp = this.machinePreset(m.preset) || {};
    $('machine-desc').textContent = mp.description || '';
    // machine keys are overrides of the preset: absent/null means "the preset's value"
    const val = (k) => (m[k] === undefined || m[k] === null ? mp[k] : m[k]);
    for (const { key } of this.machineKeys) $(key).value = val(key) === undefined || val(key) === null ? '' : String(val(key));
    this.touched = new Set(this.machineKeys.map((k) => k.key).filter((k) => m[k] !== undefined && m[k] !== null));
    $('hz').value = String(exp.hz ?? this.presets.default_hz);
    const wl = exp.workload || {};
    if (wl.name === RTAPP) this.setRtapp(wl.file ?? '');
    $('workload').value = wl.name ?? '';
    this.renderKnobs(wl.name, wl);
    const a = new Set(exp.a || []), b = new Set(exp.b || []);
    this.ensurePatchRows([...a, ...b]);
    // what the experiment names is what it asks for, whatever the previous release had fixed
    const ask = (el, set) => { el.checked = set.has(el.dataset.patch); el.dataset.asked = el.checked ? '1' : ''; el.dataset.fixed = ''; };
    for (const el of document.querySelectorAll('input.patch-a')) ask(el, a);
    for (const el of document.querySelectorAll('input.patch-b')) ask(el, b);
    $('kernel').value = exp.kernel ?? this.presets.default_kernel;
    // a release the page does not list is kept as an option, so the engine names it (kernel_b)
    const kb = exp.kernel_b ?? '';
    if (kb && ![...$('kernel-b').options].some((o) => o.value === kb)) $('kernel-b').append(h('option', { value: kb }, kb));
    $('kernel-b').value = kb;
    // knobs on a release without them stay out of the fields: they are sent as given, and the
    // engine's "applies from kernel 7.2" is shown (under #other-errors, the fields being hidden)
    const takes = this.kernelKnobs.applies($('kernel').value);
    this.schedRest = takes ? this.kernelKnobs.set(exp.sched) : (this.kernelKnobs.set({}), { ...(exp.sched || {}) });
    this.features.set(exp);
    this.applyKernel();
    $('seconds').value = String(exp.seconds ?? '');
    $('seed').value = String(exp.seed ?? '');
    $('repeats').value = String(exp.repeats ?? 1);
    $('warmup').value = String(exp.warmup ?? 0);
    this.setCpuMap(m.cpu_map || null);
    this.onScx?.(exp); // www/scx.js: each side's BPF scheduler, or the file the link asks for
  }

  /**
   * The chosen release: its changes listed (each with its commit and what the model does with it),
   * and every toggle it merged shown included in A and B and fixed (presets().kernel_merged).
   */
  applyKernel() {
    const p = this.presets;
    const name = $('kernel').value || p.default_kernel;
    // B's release: its own when `B runs` names one, else A's
    const nameB = $('kernel-b').value || name;
    const release = { a: name, b: nameB };
    const mergedIn = (k) => new Set((p.kernel_merged || {})[k] || []);
    const merged = { a: mergedIn(name), b: mergedIn(nameB) };
    this.kernelKnobs?.show(name);
    this.features?.render(name, nameB);
    const list = clear($('kernel-changes'));
    const upto = (p.kernels || []).findIndex((k) => k.name === name);
    for (const k of (p.kernels || []).slice(0, upto + 1)) {
      if (!k.changes.length) continue;
      for (const c of k.changes) {
        list.append(h('li', {}, h('code', { class: 'commit' }, c.commit), ` ${k.name}: ${c.title} — ${c.model}`));
      }
    }
    const n = list.children.length;
    if (!n) list.append(h('li', {}, `${name}: the engine's base release (no changes)`));
    const againstB = nameB !== name ? `; B runs ${nameB}` : '';
    $('kernel-summary').textContent = (n
      ? `kernel ${name}: ${n} change${n === 1 ? '' : 's'} since ${p.default_kernel} in the modelled paths; ${merged.a.size} toggle${merged.a.size === 1 ? '' : 's'} included and fixed`
      : `kernel ${name}: the release the engine mirrors; every patch is a toggle`) + againstB;
    // a toggle the release cannot take (presets().kernel_refused) is greyed out with the engine's
    // reason; one already ticked (a link, the release changed after) stays ticked and can be
    // unticked, so nothing typed is dropped and the engine's error says why it is refused
    const refusedIn = (k) => (p.kernel_refused || {})[k] || {};
    const refused = { a: refusedIn(name), b: refusedIn(nameB) };
    const knobs = this.kernelKnobs?.applies(name);
    for (const el of document.querySelectorAll('input.patch-a, input.patch-b')) {
      const s = el.classList.contains('patch-a') ? 'a' : 'b';
      const fixed = merged[s].has(el.dataset.patch);
      const why = refused[s][el.dataset.patch];
      const side = !!el.closest('tr')?.dataset.side; // a side's kernel knob: only where knobs apply
      // merged: ticked and fixed; otherwise what the user (or the experiment) asked, kept across
      // every release switch
      el.checked = fixed || el.dataset.asked === '1';
      el.dataset.fixed = fixed ? '1' : '';
      el.disabled = fixed || (side && !knobs) || (why !== undefined && !el.checked);
      el.title = fixed ? `merged in ${release[s]}: included, cannot be turned off` : (why ? `not on ${release[s]}: ${why}` : '');
    }
    // the same said in the row, as text (touch screens have no hover)
    for (const row of $('patches').tBodies[0].rows) {
      if (row.dataset.side) { row.hidden = !knobs; continue; }
      const pt = row.dataset.patch;
      const asked = [...row.querySelectorAll('input')].filter((i) => i.dataset.asked === '1').map((i) => (i.classList.contains('patch-a') ? 'A' : 'B'));
      const kept = asked.length ? ` (your ${asked.join(' and ')} tick is kept for the releases before)` : '';
      const words = (k, inA, inB) => {
        const sides = inA && inB ? 'A and B' : inA ? 'A' : 'B';
        return merged.a.has(pt) || merged.b.has(pt)
          ? `merged in ${k}: included in ${sides}, cannot be turned off`
          : `not on kernel ${k}: ${(inA ? refused.a : refused.b)[pt]}`;
      };
      let status = '';
      if (merged.a.has(pt) && merged.b.has(pt)) status = words(name, true, true) + kept;
      else if (merged.a.has(pt) || merged.b.has(pt)) status = words(merged.a.has(pt) ? name : nameB, merged.a.has(pt), merged.b.has(pt)) + kept;
      else if (refused.a[pt] !== undefined || refused.b[pt] !== undefined) {
        const inA = refused.a[pt] !== undefined, inB = refused.b[pt] !== undefined;
        status = inA && inB && name === nameB ? words(name, true, true) : [inA ? words(name, true, false) : '', inB ? words(nameB, false, true) : ''].filter(Boolean).join('; ');
      }
      row.classList.toggle('not-on', refused.a[pt] !== undefined && refused.b[pt] !== undefined);
      row.querySelector('.patch-status')?.remove();
      if (status) row.cells[2].append(h('div', { class: 'patch-status' }, status));
    }
  }

  /**
   * A patch named by an experiment (story, link) but missing from presets().patches gets a row of its
   * own, so that it is shown and kept instead of being dropped silently by get().
   */
  ensurePatchRows(names) {
    const tbody = $('patches').tBodies[0];
    const have = new Set([...tbody.rows].map((r) => r.dataset.patch));
    for (const name of names) {
      const n = String(name);
      if (!n || have.has(n)) continue;
      have.add(n);
      tbody.append(patchRow({ name: n, description: 'not in the engine\'s patch list (presets)', commit: '' }, true));
    }
  }

  /**
   * The form as a link query of the text typed in each field, for the engine to read (decode_link):
   * its errors are per field, all at once, and tell "not a number" from "out of range".
   */
  rawQuery() {
    const t0 = this.template || {};
    const q = [['v', String(t0.v ?? 1)]];
    // like encode_link: only a release other than the default is written
    if ($('kernel').value && $('kernel').value !== this.presets.default_kernel) q.push(['kernel', $('kernel').value]);
    if ($('kernel-b').value) q.push(['kernel_b', $('kernel-b').value]);
    q.push(['machine', $('machine').value]);
    const mp = this.machinePreset($('machine').value) || {};
    for (const k of this.activeMachineKeys()) {
      const t = $(k.key).value.trim();
      if (t !== '' && (t !== String(mp[k.key]) || this.touched.has(k.key))) q.push([k.link, t]);
    }
    if (this.cpuMap) q.push(['cpu_map', this.cpuMap]);
    q.push(['hz', $('hz').value], ['workload', $('workload').value]);
    if ($('workload').value === RTAPP) q.push(['workload_file', b64url(this.rtappFile ?? '')]);
    for (const k of this.knobs) {
      const t = $(`knob-${k.name}`)?.value.trim() ?? '';
      if (t !== '') q.push([k.name, t]);
    }
    const checked = (cls) => askedPatches(cls);
    q.push(['a', checked('patch-a').join(',')], ['b', checked('patch-b').join(',')]);
    q.push(['seconds', $('seconds').value.trim()], ['seed', $('seed').value.trim()]);
    for (const id of ['repeats', 'warmup']) if ($(id).value.trim() !== '') q.push([id, id === 'warmup' && this.warmupIsAuto() ? 'auto' : $(id).value.trim()]);
    for (const [k, v] of Object.entries(this.sched())) q.push([k, String(v)]);
    // assumption overrides (assume.NAME=VALUE): no fields, kept from the loaded link as get() keeps them
    for (const [k, v] of Object.entries(t0.assume || {})) q.push([`assume.${k}`, String(v)]);
    // sched features: each side's debugfs writes (www/features.js)
    for (const [k, list] of Object.entries(this.features.get())) q.push([k, list.join(',')]);
    return q.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  }

  /** What a field shows now, as words ("on", "250", "default: number of CPUs"). */
  shownValue(field) {
    const el = fieldInput(field);
    if (!el) return null;
    if (el.tagName === 'SELECT') return el.selectedOptions[0]?.textContent ?? null;
    return el.value !== '' ? el.value : (el.dataset?.hint || el.placeholder || null);
  }

  /** The warm-up field says `auto` (the steady state, as validate uses it). */
  warmupIsAuto() { return $('warmup').value.trim().toLowerCase() === 'auto'; }

  /** The engine's value of `auto` for the form as it is (decode_link), shown beside the field. */
  setAutoWarmup(seconds) {
    this.autoWarmup = Number.isFinite(seconds) ? seconds : null;
    const note = $('warmup-auto');
    note.hidden = !this.warmupIsAuto() || this.autoWarmup === null;
    note.textContent = note.hidden ? '' : `auto = ${this.autoWarmup} s: the steady state (the widest domain's first balance, at most half the run)`;
  }

  /** Current form -> Experiment (value types follow the last experiment set). */
  get() {
    const t = this.template || {};
    const num = (id) => {
      const s = $(id).value.trim();
      return s === '' ? null : Number(s);
    };
    // Machine keys are sent as overrides where the field differs from the preset or the user typed
    // it (or the link gave it), so a link made from the form names only what the user set. An
    // override equal to the preset still matters: it stops a derived value (the Intel LLC split
    // per SNC node) from being derived (scenario.rs encode_link keeps it).
    const preset = $('machine').value;
    const mp = this.machinePreset(preset) || {};
    const machine = { preset };
    for (const { key } of this.activeMachineKeys()) {
      const v = num(key);
      if (v !== null && (v !== mp[key] || this.touched.has(key))) machine[key] = v;
    }
    if (this.cpuMap) machine.cpu_map = this.cpuMap;
    const workload = { name: $('workload').value };
    if (workload.name === RTAPP) workload.file = this.rtappFile ?? '';
    for (const k of this.knobs) {
      const el = $(`knob-${k.name}`);
      if (!el) continue;
      if (el.value.trim() === '') continue; // engine default
      workload[k.name] = k.kind === 'enum' ? el.value : Number(el.value);
    }
    const checked = (cls) => askedPatches(cls);
    const kernel = $('kernel').value || this.presets.default_kernel;
    const sched = this.sched();
    const rest = { ...t };
    delete rest.kernel_b; // the B runs field stands for it
    delete rest.sched; // the knob fields and schedRest stand for the loaded experiment's knobs
    delete rest.features_a; // the feature list stands for them
    delete rest.features_b;
    delete rest.scx_a; // the pickers stand for them (www/scx.js)
    delete rest.scx_b;
    return {
      ...rest,
      v: t.v ?? 1,
      machine,
      hz: Number($('hz').value),
      workload,
      seconds: num('seconds'),
      seed: num('seed'),
      repeats: num('repeats') ?? 1,
      // `auto`: the steady state's warm-up the engine resolved for this form (app.js syncNow)
      warmup: this.warmupIsAuto() ? (this.autoWarmup ?? 0) : (num('warmup') ?? 0),
      a: checked('patch-a'),
      b: checked('patch-b'),
      kernel,
      ...($('kernel-b').value ? { kernel_b: $('kernel-b').value } : {}),
      ...(Object.keys(sched).length ? { sched } : {}),
      ...this.features.get(),
      // a BPF scheduler per side (www/scx.js): the loaded experiment's, or the file picked
      ...(this.scx?.a ? { scx_a: this.scx.a } : {}),
      ...(this.scx?.b ? { scx_b: this.scx.b } : {}),
    };
  }

  /**
   * The kernel knobs to send: the typed fields while the release takes them (hidden fields keep
   * their text but are not sent), and any key of the loaded experiment that has no field (the
   * engine names it in its error).
   */
  sched() {
    const name = $('kernel').value || this.presets.default_kernel;
    const typed = this.kernelKnobs.applies(name) ? this.kernelKnobs.sched() : {};
    return { ...this.schedRest, ...typed };
  }
}

/**
 * A side's list: every box ticked and free, and every one the user (or the experiment) asked for
 * even where the release merged it (fixed) or cannot take it: the engine then sees the experiment
 * as set up, refuses an A/B the release made identical (check_ab) and names what it cannot take.
 */
function askedPatches(cls) {
  return [...document.querySelectorAll(`input.${cls}`)]
    .filter((e) => (e.checked && !e.disabled) || e.dataset.asked === '1')
    .map((e) => e.dataset.patch);
}

/** One row of the patches table: A and B checkboxes, name, commit, description. */
function patchRow(pt, extra = false, side = false) {
  // the description is printed in full (no tooltip-only text: touch screens have no hover)
  const desc = h('div', { class: 'patch-desc' }, pt.description || '');
  const commit = pt.commit ? h('code', { class: 'commit', title: 'upstream commit' }, pt.commit) : null;
  return h('tr', { dataset: extra ? { patch: pt.name, extra: '1' } : side ? { patch: pt.name, side: '1' } : { patch: pt.name } },
    h('td', {}, h('input', { type: 'checkbox', class: 'patch-a', 'aria-label': `A: ${pt.name}`, dataset: { patch: pt.name, testid: `patch-a-${pt.name}` } })),
    h('td', {}, h('input', { type: 'checkbox', class: 'patch-b', 'aria-label': `B: ${pt.name}`, dataset: { patch: pt.name, testid: `patch-b-${pt.name}` } })),
    h('td', {}, h('span', { class: 'patch-name' }, pt.name), ' ', commit, desc));
}

/** "groups (default 10)" -> "default 10"; "... (default: number of CPUs)" -> "default: number of CPUs". */
function defaultHint(description) {
  const m = /\(?(default:?\s*[^)]*)\)?/i.exec(String(description || ''));
  return m ? m[1].trim().slice(0, 40) : 'default';
}

/** Link field name for a form element (link keys: machine knobs, workload knobs, a, b, ...). */
export function fieldOf(el) {
  if (!el) return null;
  if (el.classList?.contains('patch-a')) return 'a';
  if (el.classList?.contains('patch-b')) return 'b';
  if (el.dataset?.knob) return el.dataset.knob;
  return el.name || el.id || null;
}

/**
 * Show [{field, message, used?}] under their fields (elements with data-error-for; a link key with
 * no field of its own goes to #other-errors). Each message has a dismiss button that calls
 * onDismiss(error).
 */
export function showErrors(errors, onDismiss) {
  const all = [...document.querySelectorAll('[data-error-for]')];
  const other = $('other-errors');
  for (const el of all) {
    if (other.contains(el)) continue;
    clear(el);
    el.classList.remove('shown');
  }
  clear(other);
  for (const el of document.querySelectorAll('#scenario [aria-invalid="true"]')) el.removeAttribute('aria-invalid');
  for (const e of errors || []) {
    const field = String(e.field ?? '');
    let target = all.find((el) => el.dataset.errorFor === field && !other.contains(el) && el.isConnected && !el.closest('[hidden]'));
    const text = target ? String(e.message ?? '') : `${field}: ${String(e.message ?? '')}`;
    if (!target) {
      target = h('div', { class: 'field-error', 'data-error-for': field });
      other.append(target);
    }
    target.classList.add('shown');
    target.append(h('div', { class: 'msg', dataset: { field } },
      h('span', { class: 'msg-text' }, text),
      e.used !== undefined && e.used !== null ? h('span', { class: 'msg-used' }, ` — using ${String(e.used)}`) : null,
      h('button', { type: 'button', class: 'dismiss', 'aria-label': `dismiss the message about ${field}`, title: 'dismiss', onclick: () => onDismiss?.(e) }, '×')));
    const input = fieldInput(field);
    if (input) input.setAttribute('aria-invalid', 'true');
  }
}

/** The input of a field (by id, or a workload knob's), or null. */
export function fieldInput(field) {
  if (!field) return null;
  const direct = document.getElementById(field);
  if (direct && /^(INPUT|SELECT)$/.test(direct.tagName) && direct.closest('#scenario')) return direct;
  return document.getElementById(`knob-${field}`);
}

const plural = (n, word) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;

/** "4 × 30 cores, 8 × 14 cores" or "of 30 cores" (one size): the engine's sets by size. */
function sizesText(sizes, smt) {
  const one = (x) => `${plural(x.cores, 'core')}${smt > 1 ? ` (${plural(x.cpus, 'CPU')})` : ''}`;
  if (sizes.length === 1) return ` of ${one(sizes[0])}`;
  return `: ${sizes.map((x) => `${x.count} × ${one(x)}`).join(', ')}`;
}

/**
 * The machine summary: what the engine builds (topology_summary), not what the fields suggest, and
 * a notice for every setting it used differently. `s` null: the machine is invalid (`why`);
 * `imported`: the machine is a pasted one (www/import.js), which the summary says.
 */
export function showMachineSummary(s, why = '', imported = false, importNote = '') {
  const box = $('machine-summary');
  const notes = clear($('machine-adjusted'));
  notes.hidden = true;
  if (!s) { box.textContent = why ? `machine: ${why}` : ''; box.dataset.llcs = ''; for (const el of document.querySelectorAll('.used-hint')) el.remove(); return; }
  const smt = s.smt > 1 ? 'SMT on' : 'SMT off';
  const vendor = { amd: 'AMD', intel: 'Intel', ibm: 'IBM', arm: 'Arm', hisilicon: 'HiSilicon' }[s.vendor] ?? String(s.vendor);
  const cl = s.cluster_sizes.length && s.cluster_sizes[0].cores > 1 ? ` · ${plural(s.clusters, 'cluster')} ${sizesText(s.cluster_sizes, s.smt)}` : '';
  // an imported machine (cpu_map) is built as pasted; the preset gives its hardware figures only
  const from = imported ? ` from the imported machine (hardware figures of ${s.preset})` : '';
  box.textContent = `Built${from}: ${plural(s.cpus, 'CPU')} (${plural(s.sockets, 'socket')}, ${smt}, ${vendor}) · `
    + `${plural(s.nodes, 'NUMA node')}${sizesText(s.node_sizes, s.smt)} · ${plural(s.llcs, 'LLC')}${sizesText(s.llc_sizes, s.smt)}`
    + `${s.llc_mib ? `, ${s.llc_mib.toLocaleString('en-US')} MiB each` : ''}${cl}`;
  box.dataset.llcs = String(s.llcs);
  box.dataset.nodes = String(s.nodes);
  for (const el of document.querySelectorAll('.used-hint')) el.remove();
  for (const a of s.adjusted || []) {
    const what = a.field === 'slit' ? 'node distances' : `${a.field.replace(/_/g, ' ')}: ${a.used} used, not ${a.asked}`;
    notes.append(h('div', { dataset: { field: a.field } }, h('strong', {}, 'Adjusted '), `${what} — ${a.why}`));
    // under the field too, so that the field never shows one value while another runs
    const err = document.querySelector(`#machine-keys [data-error-for="${CSS.escape(String(a.field))}"]`);
    if (err) err.before(h('div', { class: 'used-hint', dataset: { field: a.field, testid: `used-${a.field}` } }, `${a.used} used (see Adjusted below)`));
  }
  if (importNote) notes.append(h('div', { class: 'import-note', dataset: { testid: 'import-note' } }, h('strong', {}, 'Hardware figures '), importNote));
  notes.hidden = !notes.firstChild;
}

// Report downloads: JSON (everything) and CSV (long format: side,section,name,field,value).

export function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** schedplay-<machine>-<workload>-k<kernel>[-kB<B's kernel>]-A_<patches>-B_<patches>-seed<N>[-w<warm-up>][-x<repeats>]:
 * two exports of different kernels, patch sets or warm-ups never share a name. The kernel is always
 * named (absent in the experiment: the engine's default release, 6.18). */
export function fileStem(exp) {
  const safe = (s, n = 40) => String(s ?? '').replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, n);
  const side = (list) => safe((list || []).join('+') || 'baseline', 60);
  const reps = Number(exp?.repeats) > 1 ? `-x${safe(exp.repeats)}` : '';
  const warm = Number(exp?.warmup) > 0 ? `-w${safe(exp.warmup)}` : '';
  const kernel = `-k${safe(exp?.kernel || '6.18')}${exp?.kernel_b ? `-kB${safe(exp.kernel_b)}` : ''}`;
  return `schedplay-${safe(exp?.machine?.preset)}-${safe(exp?.workload?.name)}${kernel}-A_${side(exp?.a)}-B_${side(exp?.b)}-seed${safe(exp?.seed)}${warm}${reps}`;
}

export function exportJSON(bundle) {
  download(`${fileStem(bundle.experiment)}.json`, 'application/json', JSON.stringify(bundle, null, 2) + '\n');
}

function cell(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  let s = String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`; // no formulas when opened in a spreadsheet
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A cache-line offset as the page prints it (+0x40). */
export const offsetText = (o) => (typeof o === 'number' ? `+0x${o.toString(16)}` : `+${String(o)}`);

export function toCSV(bundle) {
  const rows = [['side', 'section', 'name', 'field', 'value']];
  const add = (...r) => rows.push(r);
  // the experiment these results belong to
  const e = bundle.experiment || {};
  add('experiment', 'experiment', 'link', '', bundle.link);
  add('experiment', 'experiment', 'machine', '', e.machine?.preset);
  add('experiment', 'experiment', 'hz', '', e.hz);
  add('experiment', 'experiment', 'seed', '', e.seed);
  add('experiment', 'experiment', 'seconds', '', e.seconds);
  add('experiment', 'experiment', 'workload', '', e.workload?.name);
  add('experiment', 'experiment', 'patches_a', '', (e.a || []).join(' '));
  add('experiment', 'experiment', 'patches_b', '', (e.b || []).join(' '));
  add('experiment', 'experiment', 'repeats', '', e.repeats ?? 1);
  add('experiment', 'experiment', 'seeds', '', (bundle.seeds || [e.seed]).join(' '));
  // the rest of the scenario, so the CSV alone says what ran (the JSON carries `experiment` whole)
  add('experiment', 'experiment', 'kernel', '', e.kernel || '6.18');
  if (e.kernel_b) add('experiment', 'experiment', 'kernel_b', '', e.kernel_b);
  add('experiment', 'experiment', 'warmup_s', '', e.warmup ?? 0);
  for (const [k, v] of Object.entries(e.machine || {})) {
    if (k === 'preset' || v === null || v === undefined) continue;
    add('experiment', 'machine', k, '', typeof v === 'object' ? JSON.stringify(v) : v);
  }
  for (const [k, v] of Object.entries(e.workload || {})) {
    if (k === 'name' || k === 'file') continue;
    add('experiment', 'workload_knob', k, '', v);
  }
  // an rt-app file whole, one CSV cell (quoted; newlines kept)
  if (e.workload?.file !== undefined) add('experiment', 'workload', 'rtapp_file', '', e.workload.file);
  for (const [k, v] of Object.entries(e.sched || {})) add('experiment', 'kernel_knob', k, '', v);
  for (const [k, v] of Object.entries(e.assume || {})) add('experiment', 'assume', k, '', v);
  // side a / b: the first seed's report (the cards, charts and details)
  for (const side of ['a', 'b']) {
    const r = bundle[side];
    if (!r) continue;
    add(side, 'summary', 'patches', '', (r.patches || []).join(' '));
    add(side, 'summary', 'throughput_per_sec', r.throughput_unit ?? '', r.throughput_per_sec);
    add(side, 'summary', 'contention_pct', '', r.contention_pct);
    add(side, 'summary', 'utilization', '', r.utilization);
    add(side, 'summary', 'idle_pct', '', r.idle_pct);
    for (const k of ['min', 'avg', 'max', 'p95']) add(side, 'summary', `latency_${k}_ms`, '', r.latency_ms?.[k]);
    for (const k of ['p50', 'p90', 'p95', 'p99', 'p999', 'max']) add(side, 'summary', `wakeup_${k}_us`, '', r.wakeup_latency_us?.[k]);
    add(side, 'summary', 'events_avg', '', r.events_avg);
    add(side, 'summary', 'events_stddev', '', r.events_stddev);
    add(side, 'summary', 'sim_seconds', '', r.sim_seconds);
    add(side, 'summary', 'events', '', r.events);
    add(side, 'summary', 'report_hash', '', r.report_hash);
    for (const p of r.profile || []) add(side, 'profile', p.symbol, 'percent', p.percent);
    for (const cl of r.cachelines || []) {
      for (const f of ['loads', 'stores', 'atomics', 'hitm_local', 'hitm_remote', 'avg_stall_ns']) add(side, 'c2c', cl.name, f, cl[f]);
      for (const o of cl.offsets || []) {
        for (const f of ['loads', 'stores', 'atomics', 'hitm']) add(side, 'c2c_offset', `${cl.name}${offsetText(o.offset)} ${o.field ?? ''}`.trim(), f, o[f]);
      }
    }
    for (const [k, v] of Object.entries(r.counters || {})) add(side, 'counter', k, '', v);
    // every series of the report, by its own name, against t_s
    const s = r.series || {};
    const named = Object.entries(s).filter(([name, v]) => name !== 't_s' && Array.isArray(v));
    (s.t_s || []).forEach((t, i) => {
      for (const [name, values] of named) add(side, 'series', String(t), name, values[i]);
    });
  }
  const c = bundle.compare;
  if (c) for (const [k, v] of Object.entries(c)) if (typeof v === 'number') add('delta', 'compare', k, '', v);
  // every seed's headline figures (section seed, name = the seed)
  const seeds = bundle.seeds || [];
  for (const side of ['a', 'b']) {
    (bundle.runs?.[side] || []).forEach((r, i) => {
      const seed = String(seeds[i] ?? r?.seed ?? i);
      add(side, 'seed', seed, 'throughput_per_sec', r?.throughput_per_sec);
      add(side, 'seed', seed, 'contention_pct', r?.contention_pct);
      for (const k of ['avg', 'max', 'p95']) add(side, 'seed', seed, `latency_${k}_ms`, r?.latency_ms?.[k]);
      for (const k of ['p50', 'p95', 'p99']) add(side, 'seed', seed, `wakeup_${k}_us`, r?.wakeup_latency_us?.[k]);
      add(side, 'seed', seed, 'report_hash', r?.report_hash);
    });
  }
  // the repeat table (means, standard deviations, 95% intervals, Welch's p), as on screen
  for (const f of bundle.repeat_table?.figures || []) {
    for (const side of ['a', 'b']) {
      const m = f[side];
      if (!m) continue;
      add(side, 'repeat', f.key, 'mean', m.mean);
      add(side, 'repeat', f.key, 'stddev', m.stddev);
      add(side, 'repeat', f.key, 'ci95_lo', m.ci95?.[0]);
      add(side, 'repeat', f.key, 'ci95_hi', m.ci95?.[1]);
    }
    const d = f.delta;
    if (!d) continue;
    add('delta', 'repeat', f.key, `change_${d.unit === 'points' ? 'points' : 'pct'}`, d.change);
    add('delta', 'repeat', f.key, 'ci95_lo', d.ci95?.[0]);
    add('delta', 'repeat', f.key, 'ci95_hi', d.ci95?.[1]);
    add('delta', 'repeat', f.key, 'p', d.p);
    add('delta', 'repeat', f.key, 'significant', d.significant ? 1 : 0);
  }
  // a story's verdicts: the model against the reported figure, row by row
  for (const ch of bundle.story?.checks || []) {
    add('story', bundle.story.name, ch.id, 'model', ch.model);
    add('story', bundle.story.name, ch.id, 'published', ch.published);
    add('story', bundle.story.name, ch.id, 'status', ch.status);
  }
  return rows.map((r) => r.map(cell).join(',')).join('\n') + '\n';
}

export function exportCSV(bundle) {
  download(`${fileStem(bundle.experiment)}.csv`, 'text/csv', toCSV(bundle));
}

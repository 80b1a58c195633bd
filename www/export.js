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

export function fileStem(exp) {
  const safe = (s) => String(s ?? '').replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 40);
  return `schedplay-${safe(exp?.machine?.preset)}-${safe(exp?.workload?.name)}-seed${safe(exp?.seed)}`;
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
  return rows.map((r) => r.map(cell).join(',')).join('\n') + '\n';
}

export function exportCSV(bundle) {
  download(`${fileStem(bundle.experiment)}.csv`, 'text/csv', toCSV(bundle));
}

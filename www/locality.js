// The report's `locality` block (docs/SCHEMA.md, docs/MODEL.md §21): where user time went (the
// work itself and what placement cost: cache refills, communication, remote memory, SMT co-run),
// and starts, wakeups and handoffs by distance, for A and B. Its section is created next to the counters.
import { h, clear, fmt, fmtInt, fmtPct } from './dom.js';

const COSTS = [
  ['work (warm, local, idle sibling)', 'work_ns'],
  ['cache refill', 'refill_ns'],
  ['communication', 'comm_ns'],
  ['remote memory', 'remote_mem_ns'],
  ['SMT co-run', 'smt_ns'],
];
const CLASSES = ['same_cpu', 'smt', 'llc', 'node_near', 'node_far', 'socket'];

/** The section (a <details> after the counters' one), created once. */
function section() {
  let table = document.getElementById('locality');
  if (table) return table;
  table = h('table', { id: 'locality', class: 'counters', dataset: { testid: 'locality' } },
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'user time / distance'),
      h('th', { scope: 'col' }, 'A'), h('th', { scope: 'col' }, '% of user'),
      h('th', { scope: 'col' }, 'B'), h('th', { scope: 'col' }, '% of user'))),
    h('tbody'));
  const details = h('details', { class: 'panel' }, h('summary', {}, 'locality: where user time went'),
    h('div', { class: 'table-wrap' }, table));
  const counters = document.getElementById('counters')?.closest('details');
  if (counters) counters.after(details);
  else document.body.append(details);
  return table;
}

const ms = (ns) => (ns === undefined || ns === null ? '–' : fmt(ns / 1e6, 3) + ' ms');
const share = (l, ns) => (l && l.user_ns > 0 ? fmtPct((ns * 100) / l.user_ns, 2) : '–');

export function renderLocality(ra, rb) {
  const la = ra?.locality, lb = rb?.locality;
  if (!la && !lb && !document.getElementById('locality')) return;
  const tbody = clear(section().tBodies[0]);
  const row = (label, a, pa, b, pb) => tbody.append(h('tr', {},
    h('td', {}, label), h('td', { class: 'num' }, a), h('td', { class: 'num' }, pa),
    h('td', { class: 'num' }, b), h('td', { class: 'num' }, pb)));
  for (const [label, key] of COSTS) {
    row(label, ms(la?.[key]), share(la, la?.[key]), ms(lb?.[key]), share(lb, lb?.[key]));
  }
  row('lost to placement', ms(la?.lost_ns), share(la, la?.lost_ns), ms(lb?.lost_ns), share(lb, lb?.lost_ns));
  row('user time', ms(la?.user_ns), '', ms(lb?.user_ns), '');
  for (const c of CLASSES) {
    const n = (l) => (l ? `${fmtInt(l.starts_by_class?.[c])} starts, ${fmtInt(l.wakeups_by_class?.[c])} wakeups, ${fmtInt(l.handoffs_by_class?.[c])} handoffs` : '–');
    row(c.replace('_', ' '), n(la), '', n(lb), '');
  }
}

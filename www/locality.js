// The report's `locality` block (docs/SCHEMA.md, docs/MODEL.md §21): where user time went (the
// work itself and what placement cost: cache refills, communication, remote memory, SMT co-run),
// and starts, wakeups and handoffs by distance, for A and B. Its section is created next to the counters.
import { h, clear, fmtInt, fmtPct, fmtFixed } from './dom.js';

const COSTS = [
  ['work (warm, local, idle sibling)', 'work_ns'],
  ['cache refill', 'refill_ns'],
  ['communication', 'comm_ns'],
  ['remote memory', 'remote_mem_ns'],
  ['SMT co-run', 'smt_ns'],
];
const CLASSES = ['same_cpu', 'smt', 'llc', 'node_near', 'node_far', 'socket'];

const num = (label) => h('th', { scope: 'col', class: 'num' }, label);

/** The section (a <details> after the counters' one, holding two tables: costs in ms, and moves by
 * distance as counts), created once. */
function section() {
  let table = document.getElementById('locality');
  if (table) return [table, document.getElementById('locality-moves')];
  table = h('table', { id: 'locality', class: 'counters', dataset: { testid: 'locality' } },
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'user time'),
      num('A (ms)'), num('% of user'), num('B (ms)'), num('% of user'))),
    h('tbody'));
  const moves = h('table', { id: 'locality-moves', class: 'counters', dataset: { testid: 'locality-moves' } },
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'distance'),
      num('starts A'), num('starts B'), num('task wakeups A'), num('task wakeups B'), num('handoffs A'), num('handoffs B'))),
    h('tbody'));
  const details = h('details', { class: 'panel' }, h('summary', {}, 'locality: where user time went'),
    h('div', { class: 'table-wrap' }, table),
    h('div', { class: 'table-wrap' }, moves),
    // why a column can be 0 while the counters show wakeups: oltp's remote client is a timer
    h('p', { class: 'desc', id: 'locality-note' }, 'Task wakeups: one task woke another, by the distance from the waker\'s CPU to the CPU the wakee is queued on. A wakeup with no waking task (a timer: the round trip to a remote client, a sleep that ends) has no distance; the last row counts them, so the column adds up to the wakeups counter.'));
  const counters = document.getElementById('counters')?.closest('details');
  if (counters) counters.after(details);
  else document.body.append(details);
  return [table, moves];
}

const share = (l, ns) => (l && l.user_ns > 0 ? fmtPct((ns * 100) / l.user_ns, 2) : '–');

export function renderLocality(ra, rb) {
  const la = ra?.locality, lb = rb?.locality;
  if (!la && !lb && !document.getElementById('locality')) return;
  const [table, moves] = section();
  const tbody = clear(table.tBodies[0]);
  // one format per column: ms to the µs, so a small cost (a refill of 0.483 ms) is not rounded away
  const ms = (l, ns) => (!l || ns === undefined || ns === null ? '–' : fmtFixed(ns / 1e6, 3));
  const row = (label, key, pct = true) => tbody.append(h('tr', { dataset: { key } },
    h('td', {}, label),
    h('td', { class: 'num' }, ms(la, la?.[key])), h('td', { class: 'num' }, pct ? share(la, la?.[key]) : ''),
    h('td', { class: 'num' }, ms(lb, lb?.[key])), h('td', { class: 'num' }, pct ? share(lb, lb?.[key]) : '')));
  for (const [label, key] of COSTS) row(label, key);
  row('lost to placement', 'lost_ns');
  row('user time', 'user_ns', false);
  const mb = clear(moves.tBodies[0]);
  const n = (l, what, c) => h('td', { class: 'num' }, l ? fmtInt(l[what]?.[c]) : '–');
  for (const c of CLASSES) {
    mb.append(h('tr', { dataset: { class: c } }, h('td', {}, c.replace('_', ' ')),
      n(la, 'starts_by_class', c), n(lb, 'starts_by_class', c),
      n(la, 'wakeups_by_class', c), n(lb, 'wakeups_by_class', c),
      n(la, 'handoffs_by_class', c), n(lb, 'handoffs_by_class', c)));
  }
  // wakeups without a waking task: the wakeups counter minus the task wakeups (same window)
  const noWaker = (r, l) => {
    const all = r?.counters?.wakeups;
    if (!l || typeof all !== 'number') return h('td', { class: 'num' }, '–');
    const byClass = CLASSES.reduce((s, c) => s + (l.wakeups_by_class?.[c] || 0), 0);
    return h('td', { class: 'num' }, fmtInt(all - byClass));
  };
  const blank = () => h('td', { class: 'num' }, '');
  mb.append(h('tr', { dataset: { class: 'no_waker' } }, h('td', {}, 'no waker (timer)'),
    blank(), blank(), noWaker(ra, la), noWaker(rb, lb), blank(), blank()));
}

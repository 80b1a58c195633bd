// /proc/schedstat (v17) per sched domain for A and B, as `perf sched stats diff` shows it
// (`schedplay compare --schedstat`): the rows are the engine's (schedstat_diff of the two runs'
// summaries, src/report/schedstat.rs); this module only lays them out. Per domain the fields are
// grouped as the kernel's struct sched_domain has them: load balancing per idle type, active
// balance, exec/fork balance, wakeups. Fields 0 on both sides fold into one row per group.

import { $, h, clear, fmtInt } from './dom.js';

const IDLE = { idle: 'load balancing, CPU idle ([idle])', busy: 'load balancing, CPU busy ([busy])', newidle: 'load balancing, newly idle ([newidle])' };

/** The group of a field name: `lb_count[busy]` -> busy, `alb_pushed` -> alb, ... */
function groupOf(name) {
  const m = /\[(\w+)\]$/.exec(name);
  if (m) return IDLE[m[1]] ?? m[1];
  if (name.startsWith('alb_')) return 'active balancing (alb_*)';
  if (name.startsWith('sbe_') || name.startsWith('sbf_')) return 'exec and fork balancing (sbe_*, sbf_*: counted by no v6.18 code)';
  if (name.startsWith('ttwu_')) return 'wakeups (ttwu_*)';
  return 'fields';
}

/** A field name that may wrap after its underscores on a narrow screen (never inside a word). */
const breakable = (name) => name.split('_').flatMap((part, i) => (i ? ['_', h('wbr'), part] : [part]));

const change = (c) => (c === 'new' ? 'new' : `${c}%`);

/** One table: rows [{name, a, b, change}] in groups (`group(name)`), zero-on-both folded. */
function table(rows, group, label) {
  const tbody = h('tbody');
  const groups = new Map();
  for (const r of rows) {
    const g = group(r.name);
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push(r);
  }
  for (const [g, rs] of groups) {
    if (groups.size > 1) tbody.append(h('tr', {}, h('th', { scope: 'colgroup', colspan: '4', class: 'ss-group' }, g)));
    const zero = rs.filter((r) => r.a === 0 && r.b === 0);
    for (const r of rs) {
      if (r.a === 0 && r.b === 0) continue;
      const short = r.name.replace(/\[\w+\]$/, '');
      tbody.append(h('tr', { dataset: { field: r.name } },
        h('td', { class: 'field' }, h('code', { title: r.name }, breakable(short))),
        h('td', { class: 'num' }, fmtInt(r.a)),
        h('td', { class: 'num' }, fmtInt(r.b)),
        h('td', { class: `num${r.a !== r.b ? ' moved' : ''}` }, change(r.change))));
    }
    if (zero.length) {
      const names = zero.map((r) => r.name.replace(/\[\w+\]$/, ''));
      const text = zero.length === rs.length ? `all ${rs.length} fields 0 on both sides` : `0 on both sides: ${names.join(', ')}`;
      tbody.append(h('tr', { class: 'zero-row', dataset: { zero: zero.map((r) => r.name).join(' ') } }, h('td', { colspan: '4', class: 'zero' }, text)));
    }
  }
  return h('div', { class: 'table-wrap' }, h('table', { class: 'counters schedstat-table', 'aria-label': label },
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'field'), h('th', { scope: 'col', class: 'num' }, 'A'),
      h('th', { scope: 'col', class: 'num' }, 'B'), h('th', { scope: 'col', class: 'num' }, 'change'))),
    tbody));
}

/**
 * Shows the diff of the schedstat summaries `a` and `b` (DoneMsg.schedstat) in #schedstat; null
 * clears it (a new run). Errors are said in the box.
 */
export async function showSchedstat(engine, a, b) {
  const box = clear($('schedstat'));
  if (!a || !b) return;
  let sections;
  try {
    ({ sections } = await engine.call('schedstat_diff', { a, b }));
  } catch (e) {
    box.append(h('p', { class: 'field-error shown' }, `no schedstat table: ${e.message}`));
    return;
  }
  for (const [i, s] of sections.entries()) {
    if (s.domain === null) {
      box.append(h('h4', {}, 'per CPU, summed over all CPUs'), table(s.rows, () => '', 'schedstat CPU fields, A and B'));
      continue;
    }
    box.append(h('details', { class: 'schedstat-domain', open: i === 1, dataset: { domain: s.domain } },
      h('summary', {}, `domain ${s.domain}`),
      table(s.rows, groupOf, `schedstat domain ${s.domain}, A and B`)));
  }
}

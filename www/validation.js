// "How close is the model?": the validation rows (`validate --json`, from the engine's
// validation_table) as a table; status in words and a mark, not colour alone.
import { $, h, fmtFixed } from './dom.js';
import { IDENTICAL_RUNS } from './results.js';

const fmtModel = (x) => (x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : fmtFixed(x, Math.abs(x) >= 100 ? 0 : 2));

export function renderValidation(rows) {
  const table = $('validation-table');
  const tbody = table.tBodies[0];
  tbody.replaceChildren();
  table.hidden = false;
  for (const r of rows) {
    const ci = r.model_ci95 ? ` [${fmtModel(r.model_ci95[0])}, ${fmtModel(r.model_ci95[1])}]`
      : r.identical_runs ? ` (${IDENTICAL_RUNS})` : '';
    const tr = document.createElement('tr');
    tr.id = `vrow-${r.id}`;
    tr.tabIndex = -1; // a story's "row …" link focuses it
    tr.dataset.id = r.id;
    tr.dataset.status = r.status;
    tr.dataset.kind = r.kind;
    if ($('validation').dataset.wanted === r.id) tr.dataset.marked = '1';
    tr.title = `${r.command}\nsource: ${r.source}`;
    for (const [text, cls] of [[r.id, ''], [r.kind, ''], [r.machine, ''], [r.workload, ''], [r.what, ''], [r.published, ''],
      [`${fmtModel(r.model)}${ci}`, 'num'], [`${fmtModel(r.tolerance[0])} .. ${fmtModel(r.tolerance[1])}`, 'num']]) {
      const td = document.createElement('td');
      td.textContent = text;
      if (cls) td.className = cls;
      tr.append(td);
    }
    // status in words and a mark, not colour alone
    tr.append(h('td', { class: `status ${r.status}` }, h('span', { class: 'mark', 'aria-hidden': 'true' }, r.status === 'holds' ? '✓ ' : '✗ '), r.status));
    tbody.append(tr);
    // a miss says why, one line from docs/MODEL.md (the engine's validation::why), with the doc
    if (r.why) {
      tbody.append(h('tr', { class: 'why-row', dataset: { why: r.id } },
        h('td', { colspan: '9' }, h('span', { class: 'why-label' }, `why ${r.id} misses: `), r.why, ' (',
          h('a', { href: 'docs/MODEL.md', target: '_blank', rel: 'noopener' }, 'docs/MODEL.md'), ', How close is the model?)')));
    }
  }
}

// Result views: summary cards (A, B, Δ%), perf-report bars, perf-c2c table, counters.
import { $, h, clear, fmt, fmtInt, fmtPct, fmtFixed, columnDigits } from './dom.js';
import { offsetText } from './export.js';
import { renderLocality } from './locality.js';

const METRICS = ['throughput', 'contention', 'lat-avg', 'lat-p95', 'lat-max', 'wake-p50', 'wake-p95', 'wake-p99'];
const WAKE = ['p50', 'p95', 'p99']; // report.wakeup_latency_us: schbench's headline figures

function setCell(id, text, value) {
  const el = $(id);
  if (!el) return;
  el.textContent = text;
  if (value === undefined || value === null || Number.isNaN(value)) el.removeAttribute('data-value');
  else el.dataset.value = String(value);
}

export function clearSummary() {
  for (const side of ['a', 'b', 'delta']) {
    for (const m of METRICS) {
      setCell(`summary-${side}-${m}`, '–', null);
      $(`summary-${side}-${m}`).classList.remove('good', 'bad');
    }
  }
  $('summary').dataset.wakeup = '0';
  for (const side of ['a', 'b']) {
    $(`summary-${side}-hash`).textContent = '';
    $(`summary-${side}-features`).textContent = '';
    $(`card-${side}`).removeAttribute('data-report-hash');
  }
}

export function setPatchLists(exp) {
  // an A/B of two releases names each side's release first
  const release = { a: exp.kernel || '6.18', b: exp.kernel_b || exp.kernel || '6.18' };
  const two = release.a !== release.b;
  for (const side of ['a', 'b']) {
    const list = exp[side] || [];
    const what = list.length ? list.join(', ') : (two ? 'as released' : 'baseline');
    $(`summary-${side}-patches`).textContent = two ? `(${release[side]}: ${what})` : `(${what})`;
  }
}

const ms = (x) => (x === undefined || x === null ? '–' : fmtFixed(x, 3)); // the unit is in the row's label

/** A percentile with its histogram bucket ("2.56–2.62"): the report's figure is the bucket's lower
 * bound, so two runs in the same bucket read the same. `b`: [lo, hi] in the figure's unit. */
function rangeText(v, b, digits) {
  if (!b || !Number.isFinite(b[0]) || !Number.isFinite(b[1]) || b[1] <= b[0]) return fmtFixed(v, digits);
  const lo = fmtFixed(b[0], digits), hi = fmtFixed(b[1], digits);
  return lo === hi ? lo : `${lo}–${hi}`;
}

export function renderSide(side, r, bounds = null) {
  // the sched features the run switched from its release's defaults (the report's, as debugfs took them)
  const feats = r.features || [];
  // (a report leaves `kernel` out for 6.18, so that 6.18's reports hash as before releases existed)
  $(`summary-${side}-features`).textContent = `sched features: ${feats.length ? feats.join(',') : `kernel ${r.kernel || '6.18'}'s defaults`}`;
  setCell(`summary-${side}-throughput`, fmtFixed(r.throughput_per_sec, 1), r.throughput_per_sec);
  $(`summary-${side}-throughput`).title = `${r.throughput_per_sec} ${r.throughput_unit || ''} per second`;
  for (const el of document.querySelectorAll('.tp-unit')) el.textContent = ` (${r.throughput_unit || 'units'}/s)`;
  setCell(`summary-${side}-contention`, fmtPct(r.contention_pct, 2), r.contention_pct);
  const l = r.latency_ms || {};
  setCell(`summary-${side}-lat-avg`, ms(l.avg), l.avg);
  setCell(`summary-${side}-lat-p95`, l.p95 === undefined || l.p95 === null ? '–' : rangeText(l.p95, bounds?.latency_ms?.p95, 3), l.p95);
  $(`summary-${side}-lat-p95`).title = bounds ? 'the histogram bucket the 95th percentile falls in (buckets are 1/32 of the value wide)' : '';
  setCell(`summary-${side}-lat-max`, ms(l.max), l.max);
  // wakeup-to-run percentiles, where the workload wakes tasks (schbench's headline is p99)
  const w = r.wakeup_latency_us || {};
  for (const p of WAKE) {
    // two decimals below 10 µs (the buckets of a few µs are 0.06 µs wide), fewer above: a range fits the card
    const digits = Math.abs(w[p] ?? 0) < 10 ? 2 : Math.abs(w[p] ?? 0) < 1000 ? 1 : 0;
    setCell(`summary-${side}-wake-${p}`, rangeText(w[p], bounds?.wakeup_latency_us?.[p], digits), w[p]);
    $(`summary-${side}-wake-${p}`).title = bounds ? `the histogram bucket the ${p.slice(1)}th percentile falls in` : '';
  }
  if (w.max > 0) $('summary').dataset.wakeup = '1';
  const hash = r.report_hash === undefined ? '' : String(r.report_hash);
  // the side's sched_ext scheduler (report `scx`), and why it was disabled if it was
  const x = r.scx;
  const scx = x ? ` · sched_ext ${x.ops_name} (${x.file})${x.exit ? `, disabled at ${fmt(x.exit.at_s, 3)} s: ${x.exit.reason}: ${x.exit.msg}` : ''}` : '';
  $(`summary-${side}-hash`).textContent = hash ? `report ${hash} · ${fmtInt(r.events)} events · ${fmt(r.sim_seconds, 3)} s simulated${scx}` : '';
  $(`card-${side}`).dataset.reportHash = hash;
}

/** Δ row: the engine's figures (compare() = Delta::between, as the CLI prints them), nothing computed
 * here; without them (compare failed) every cell is '–'. higher=better for throughput only. */
export function renderDelta(cmp, bounds = null) {
  const d = {
    throughput: cmp?.throughput_pct ?? null,
    contention: cmp?.contention_points ?? null,
    'lat-avg': cmp?.latency_avg_pct ?? null,
    'lat-p95': cmp?.latency_p95_pct ?? null,
    'lat-max': cmp?.latency_max_pct ?? null,
    'wake-p50': cmp?.wakeup_p50_pct ?? null,
    'wake-p95': cmp?.wakeup_p95_pct ?? null,
    'wake-p99': cmp?.wakeup_p99_pct ?? null,
  };
  for (const m of METRICS) {
    const v = d[m];
    const text = m === 'contention'
      ? (v === null || !Number.isFinite(v) ? '–' : `${fmtFixed(v, 2, true)} pts`)
      : fmtPct(v, 1, true);
    // a percentile of A and B in the same histogram bucket: no change can be read from it
    const pb = (side) => (m === 'lat-p95' ? bounds?.[side]?.latency_ms?.p95 : m.startsWith('wake-') ? bounds?.[side]?.wakeup_latency_us?.[m.slice(5)] : null);
    const same = pb('a') && pb('b') && pb('a')[0] === pb('b')[0] && pb('a')[1] === pb('b')[1];
    setCell(`summary-delta-${m}`, same ? 'same bucket' : text, v);
    const el = $(`summary-delta-${m}`);
    el.title = same ? 'A and B fall in the same histogram bucket (1/32 of the value wide): the change is below what the histogram resolves' : '';
    el.dataset.sameBucket = same ? '1' : '0';
    // One seed per side: no interval, so nothing is marked as a win or a loss (repeats give one).
    el.classList.remove('good', 'bad');
  }
}

/** The warm-up and not-settled notes of a side's report (report.warmup_s, report.not_settled). */
export function renderFlag(side, r) {
  const el = $(`summary-${side}-flag`);
  const parts = [];
  if (r && r.warmup_s > 0) parts.push(`first ${fmt(r.warmup_s, 3)} s left out (warm-up)`);
  const ns = (r && r.not_settled) || [];
  // the report's series names, in words
  const words = { throughput: 'throughput', contention_pct: '% cycles in contention', utilization: 'utilization' };
  if (ns.length) parts.push(`not settled: ${ns.map((n) => words[n] ?? n.replace(/_/g, ' ')).join(' and ')} still ${ns.length === 1 ? 'trends' : 'trend'} more than ${ns.length === 1 ? 'its' : 'their'} noise`);
  el.textContent = parts.join(' · ');
  el.dataset.notSettled = ns.join(',');
  el.title = ns.length ? 'The series still drifts over the measured window (docs/MODEL.md, Steady state): a longer run or a warm-up gives steadier figures.' : '';
}

const num = (x) => {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  const a = Math.abs(x);
  return fmtFixed(x, a >= 1e5 ? 1 : a >= 100 ? 2 : 4);
};

/** An interval of the change wider than NOISY_WIDTH (in % or points): the figure varies so much from
 * seed to seed that no change of it can be read. A presentation threshold, said in the table's note. */
export const NOISY_WIDTH = 100;
const noisy = (d) => !!d && Number.isFinite(d.ci95?.[0]) && Number.isFinite(d.ci95?.[1]) && d.ci95[1] - d.ci95[0] > NOISY_WIDTH;

/** What the engine's tables say when every seed gave the same run (repeat::IDENTICAL_RUNS). */
export const IDENTICAL_RUNS = 'the seeds gave identical runs: no interval';

/** The repeat table (the engine's repeat::Table). A change whose interval contains 0 is greyed;
 * nothing is coloured as a win or a loss. */
export function renderRepeatTable(t) {
  const box = $('repeat-box');
  const tbody = clear($('repeat-table').tBodies[0]);
  if (!t) { box.hidden = true; return; }
  box.hidden = false;
  $('repeat-title').textContent = `Over ${t.repeats} runs per side (seeds ${t.seeds.join(', ')})`;
  for (const f of t.figures) {
    const d = f.delta;
    const u = d && d.unit === 'points' ? ' pts' : '%';
    const sign = (x) => fmtFixed(x, 2, true);
    const cv = (s) => fmtFixed(s && s.mean ? s.stddev * 100 / Math.abs(s.mean) : 0, 2);
    tbody.append(h('tr', {
      class: d && !d.significant ? 'insignificant' : '',
      dataset: { key: f.key, significant: d ? String(d.significant) : '' },
    },
    h('th', { scope: 'row' }, f.label),
    h('td', { class: 'num' }, `${num(f.a.mean)} (${cv(f.a)}%)`),
    h('td', { class: 'num' }, d ? `${sign(d.change)}${u} (${cv(f.b)}%)` : '–'),
    // seeds that gave identical runs (repeat::IDENTICAL_RUNS): one run, so no interval and no test
    (d ? d.identical : f.a.identical)
      ? h('td', { class: 'ci identical', dataset: { testid: `identical-${f.key}` } }, IDENTICAL_RUNS)
      : h('td', { class: 'num ci' }, d ? `[${sign(d.ci95[0])}, ${sign(d.ci95[1])}]${u}` : `[${num(f.a.ci95[0])}, ${num(f.a.ci95[1])}]`,
        noisy(d) ? h('div', { class: 'noisy', dataset: { testid: `noisy-${f.key}` } }, 'too noisy to compare: run longer or more repeats') : null),
    h('td', { class: 'num' }, d && !d.identical ? fmtFixed(d.p, 4) : '–')));
  }
}

/** perf-report-like bars: one row per symbol, A and B bars (share of non-idle cycles). */
export function renderProfile(ra, rb) {
  const box = clear($('profile'));
  const map = new Map();
  for (const [side, r] of [['a', ra], ['b', rb]]) {
    for (const p of (r && r.profile) || []) {
      const e = map.get(p.symbol) || { symbol: p.symbol, a: null, b: null };
      e[side] = p.percent;
      map.set(p.symbol, e);
    }
  }
  const rows = [...map.values()].sort((x, y) => Math.max(y.a ?? 0, y.b ?? 0) - Math.max(x.a ?? 0, x.b ?? 0));
  const max = Math.max(1e-9, ...rows.map((r) => Math.max(r.a ?? 0, r.b ?? 0)));
  for (const r of rows) {
    const bar = (side) => {
      const v = r[side];
      const b = h('div', { class: `bar bar-${side}`, title: `${side.toUpperCase()}: ${v === null ? 'n/a' : fmtPct(v, 2)}` });
      b.style.width = `${v === null ? 0 : (v / max) * 100}%`;
      return h('div', { class: 'bar-line' }, b, h('span', { class: 'bar-val' }, v === null ? '–' : fmtPct(v, 2)));
    };
    box.append(h('div', { class: 'prof-row', dataset: { symbol: r.symbol } },
      h('code', { class: 'sym', title: r.symbol }, r.symbol),
      h('div', { class: 'bars' }, bar('a'), bar('b'))));
  }
  $('idle-a').textContent = ra ? fmtPct(ra.idle_pct, 1) : '–';
  $('idle-b').textContent = rb ? fmtPct(rb.idle_pct, 1) : '–';
}

const PER_CPU_ROWS = 8; // as the text report (src/report.rs): the per-CPU lines with most HITMs
const hitm = (cl) => cl.hitm_local + cl.hitm_remote;

/** perf c2c, as the text report shows it: the shared lines, the 8 per-CPU lines (run queues,
 * nohz_flags, call_single_queue, slab lines: names with "(cpuN)"; a hackbench channel's: "(rxN)") with
 * most HITMs, and one sum row for the rest,
 * whose button adds them (built on first click: ~1,000 rows on a 2-socket machine). The CSV keeps all. */
/**
 * The c2c table wider than its box (a phone): the line names stay (sticky column, style.css) and a
 * cue says the HITM columns are a swipe away, until the box is scrolled to its end.
 */
export function updateC2cCue() {
  const wrap = $('c2c-wrap');
  const over = wrap.scrollWidth > wrap.clientWidth + 1;
  const atEnd = wrap.scrollLeft + wrap.clientWidth >= wrap.scrollWidth - 1;
  wrap.dataset.overflow = over ? (atEnd ? 'end' : '1') : '';
  $('c2c-cue').hidden = !over || atEnd || !$('c2c').tBodies[0].rows.length;
}
if (typeof window !== 'undefined') {
  window.addEventListener('resize', () => updateC2cCue());
  queueMicrotask(() => $('c2c-wrap')?.addEventListener('scroll', () => updateC2cCue(), { passive: true }));
}

export function renderC2C(r, sideLabel) {
  $('c2c-side').textContent = sideLabel;
  const table = $('c2c');
  const tbody = clear(table.tBodies[0]);
  if (!r) { updateC2cCue(); return; }
  const all = r.cachelines || [];
  const byHitm = (x, y) => hitm(y) - hitm(x);
  const perInstance = (cl) => /\((cpu|rx)\d+\)/.test(cl.name);
  const perCpu = all.filter(perInstance).sort(byHitm);
  const shared = all.filter((cl) => !perInstance(cl)).sort(byHitm);
  const rest = perCpu.slice(PER_CPU_ROWS);
  const shown = [...shared, ...perCpu.slice(0, PER_CPU_ROWS)];
  // one format per column over every line, so the hidden rows line up when shown
  const stallDigits = columnDigits(all.map((cl) => cl.avg_stall_ns));
  let n = 0;
  const lineRows = (cl) => {
    const i = n++;
    const offRows = [];
    const btn = h('button', { type: 'button', class: 'expand', 'aria-expanded': 'false', title: 'show offsets', 'aria-label': `offsets of ${cl.name}`, dataset: { testid: `c2c-expand-${i}` } }, '▸');
    btn.addEventListener('click', () => {
      const open = btn.getAttribute('aria-expanded') !== 'true';
      btn.setAttribute('aria-expanded', String(open));
      btn.textContent = open ? '▾' : '▸';
      for (const row of offRows) row.hidden = !open;
    });
    const rows = [h('tr', { class: 'cl-row', dataset: { line: cl.name } },
      h('td', {}, (cl.offsets || []).length ? btn : ''),
      h('td', {}, h('code', {}, cl.name)),
      h('td', { class: 'num' }, fmtInt(cl.loads)),
      h('td', { class: 'num' }, fmtInt(cl.stores)),
      h('td', { class: 'num' }, fmtInt(cl.atomics)),
      h('td', { class: 'num' }, fmtInt(cl.hitm_local)),
      h('td', { class: 'num' }, fmtInt(cl.hitm_remote)),
      h('td', { class: 'num' }, fmtFixed(cl.avg_stall_ns, stallDigits)))];
    for (const o of cl.offsets || []) {
      const off = offsetText(o.offset);
      const row = h('tr', { class: 'off-row' },
        h('td', {}),
        h('td', {}, h('code', {}, `${off} ${o.field ?? ''}`)),
        h('td', { class: 'num' }, fmtInt(o.loads)),
        h('td', { class: 'num' }, fmtInt(o.stores)),
        h('td', { class: 'num' }, fmtInt(o.atomics)),
        h('td', { class: 'num', colspan: '2' }, `HITM ${fmtInt(o.hitm)}`),
        h('td', {}));
      row.hidden = true;
      offRows.push(row);
      rows.push(row);
    }
    return rows;
  };
  for (const cl of shown) tbody.append(...lineRows(cl));
  table.dataset.lines = String(all.length);
  if (rest.length) {
    const sum = (f) => rest.reduce((s, cl) => s + (cl[f] || 0), 0);
    const label = `(${fmtInt(rest.length)} more per-CPU lines)`;
    const more = h('button', { type: 'button', class: 'c2c-more', 'aria-expanded': 'false', dataset: { testid: 'c2c-more' } }, 'show all');
    const sumRow = h('tr', { class: 'c2c-rest', dataset: { more: String(rest.length) } },
      h('td', {}),
      h('td', {}, label, ' ', more),
      h('td', { class: 'num' }, fmtInt(sum('loads'))),
      h('td', { class: 'num' }, fmtInt(sum('stores'))),
      h('td', { class: 'num' }, fmtInt(sum('atomics'))),
      h('td', { class: 'num' }, fmtInt(sum('hitm_local'))),
      h('td', { class: 'num' }, fmtInt(sum('hitm_remote'))),
      h('td', {}));
    tbody.append(sumRow);
    let extra = null;
    more.addEventListener('click', () => {
      const open = more.getAttribute('aria-expanded') !== 'true';
      if (open && !extra) {
        extra = rest.flatMap(lineRows);
        for (const row of extra) row.classList.add('c2c-extra');
        tbody.append(...extra);
      } else if (extra) {
        for (const row of extra) if (row.classList.contains('cl-row')) row.hidden = !open;
        // offsets stay folded when their line comes back
        for (const row of extra) if (row.classList.contains('off-row')) row.hidden = true;
        for (const b of tbody.querySelectorAll('tr.c2c-extra button.expand')) { b.setAttribute('aria-expanded', 'false'); b.textContent = '▸'; }
      }
      more.setAttribute('aria-expanded', String(open));
      more.textContent = open ? 'hide' : 'show all';
    });
  }
  if (!all.length) tbody.append(h('tr', {}, h('td', { colspan: '8' }, 'no contended cache lines')));
  requestAnimationFrame(() => updateC2cCue());
}

export function renderCounters(ra, rb) {
  const tbody = clear($('counters').tBodies[0]);
  const names = new Set([...Object.keys(ra?.counters || {}), ...Object.keys(rb?.counters || {})]);
  for (const n of [...names].sort()) {
    tbody.append(h('tr', {},
      h('td', {}, h('code', {}, n)),
      h('td', { class: 'num' }, fmtInt(ra?.counters?.[n])),
      h('td', { class: 'num' }, fmtInt(rb?.counters?.[n]))));
  }
  renderLocality(ra, rb);
}

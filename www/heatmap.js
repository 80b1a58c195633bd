// CPU heatmap (canvas): CPUs grouped socket -> node -> LLC -> core (SMT threads stacked in a core
// cell), coloured by ONE chosen metric (busy, stall share or idle: report.cpu_heat) on a single-hue
// scale with a legend. Clicking a CPU, or Enter on the keyboard-selected one (arrow keys move it),
// shows its sched-domain tree.
import { $, h, clear, fmtInt, fmtPct } from './dom.js';
import { domainTextBox } from './domtext.js';

/** The metrics of report.cpu_heat the map can show: label and the top of its scale (null: the
 * smallest of NICE_MAX above the largest value, so that a 3% stall is not one pale shade). */
export const HEAT_METRICS = {
  busy: { label: 'busy', max: 1 },
  stall: { label: 'stall share', max: null },
  idle: { label: 'idle', max: 1 },
};
const NICE_MAX = [0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1];
const HUE = 265; // one hue (violet), apart from the A (blue) and B (orange) colours

const dark = () => matchMedia('(prefers-color-scheme: dark)').matches;

/** Colour of a fraction t in 0..1 of the scale: light to dark (on a dark page: dark to light). */
export function heatColor(t) {
  const x = Math.max(0, Math.min(1, Number(t) || 0));
  const l = dark() ? 20 + 55 * x : 95 - 65 * x;
  return `hsl(${HUE}, ${dark() ? 60 : 55}%, ${l.toFixed(1)}%)`;
}

/** The legend's ticks for a scale of 0..max (a fraction): 4 or 5 equal steps that are round in %,
 * all with the same decimals ("0% 5% 10% 15% 20% 25%", never "6.3% 13% 19%"). */
export function legendTicks(max) {
  const top = Math.round(max * 1e6) / 1e4; // % with no float dust
  for (const decimals of [0, 1, 2]) {
    for (const n of [4, 5]) {
      const step = top / n;
      if (Math.abs(step * 10 ** decimals - Math.round(step * 10 ** decimals)) < 1e-9) {
        return Array.from({ length: n + 1 }, (_, i) => `${(step * i).toFixed(decimals)}%`);
      }
    }
  }
  return [0, 0.25, 0.5, 0.75, 1].map((t) => `${(top * t).toFixed(2)}%`);
}

const pctText = (v) => `${(v * 100).toLocaleString('en-US', { maximumFractionDigits: v < 0.1 ? 1 : 0 })}%`;

export class Heatmap {
  constructor(canvas, onSelect) {
    this.canvas = canvas;
    this.onSelect = onSelect;
    this.cpuInfo = null;
    this.heat = null;
    this.rects = []; // {cpu, x, y, w, h}
    this.selected = null;
    this.metric = 'busy';
    this.scaleMax = 1;
    canvas.tabIndex = 0;
    canvas.setAttribute('role', 'img');
    canvas.addEventListener('click', (ev) => {
      const r = this.hit(ev);
      if (r) { this.select(r.cpu); this.onSelect?.(r.cpu); }
    });
    canvas.addEventListener('keydown', (ev) => this.key(ev));
    canvas.addEventListener('focus', () => { if (this.selected === null && this.rects.length) this.select(this.rects[0].cpu); });
    canvas.addEventListener('mousemove', (ev) => {
      const r = this.hit(ev);
      $('heat-tip').textContent = r ? this.describe(r.cpu) : '';
      canvas.style.cursor = r ? 'pointer' : 'default';
    });
    new ResizeObserver(() => this.draw()).observe(canvas.parentElement);
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => this.draw());
  }

  set(cpuInfo, heat) {
    this.cpuInfo = cpuInfo;
    this.heat = heat;
    this.byCpu = new Map((cpuInfo || []).map((c) => [c.cpu, c]));
    if (this.selected !== null && !this.byCpu.has(this.selected)) this.selected = null;
    this.draw();
    this.table();
  }

  /** The map's text alternative: per NUMA node, the mean of each metric and its most stalled CPU. */
  table() {
    const tbody = $('heat-table')?.tBodies[0];
    if (!tbody) return;
    clear(tbody);
    if (!this.cpuInfo || !this.heat) return;
    const nodes = new Map();
    for (const c of this.cpuInfo) {
      if (!nodes.has(c.node)) nodes.set(c.node, { socket: c.socket, cpus: [] });
      nodes.get(c.node).cpus.push(c.cpu);
    }
    const mean = (arr, cpus) => cpus.reduce((a, c) => a + (+(arr?.[c] ?? 0)), 0) / cpus.length;
    for (const [node, { socket, cpus }] of [...nodes].sort((x, y) => x[0] - y[0])) {
      const worst = cpus.reduce((w, c) => (+(this.heat.stall?.[c] ?? 0) > +(this.heat.stall?.[w] ?? 0) ? c : w), cpus[0]);
      tbody.append(h('tr', { dataset: { node: String(node) } },
        h('th', { scope: 'row' }, String(node)), h('td', { class: 'num' }, String(socket)),
        h('td', { class: 'num' }, fmtInt(cpus.length)),
        ...['busy', 'stall', 'idle'].map((m) => h('td', { class: 'num' }, fmtPct(mean(this.heat[m], cpus) * 100, 1))),
        h('td', { class: 'num' }, `CPU ${worst}: ${fmtPct(+(this.heat.stall?.[worst] ?? 0) * 100, 1)}`)));
    }
  }

  clear() { this.set(null, null); }

  setMetric(m) {
    if (!HEAT_METRICS[m]) return;
    this.metric = m;
    this.draw();
    if (this.selected !== null) $('heat-tip').textContent = this.describe(this.selected);
  }

  /** Keyboard-select a CPU: drawn with a ring and described in #heat-tip (a live region). */
  select(cpu) {
    this.selected = cpu;
    this.draw();
    $('heat-tip').textContent = this.describe(cpu);
    this.canvas.dataset.selected = String(cpu);
  }

  /** Arrow keys move the selection (left/right: the nearest CPU in the same row; up/down: the
   * nearest CPU in the row above/below), Home/End jump, Enter opens its sched domains. */
  key(ev) {
    if (!this.rects.length) return;
    const i = Math.max(0, this.rects.findIndex((r) => r.cpu === this.selected));
    const cur = this.rects[i];
    let next = null;
    if (ev.key === 'ArrowRight' || ev.key === 'ArrowLeft') {
      // the nearest CPU in the same row on that side; at the row's end, the next/previous as drawn
      const right = ev.key === 'ArrowRight';
      const cy = cur.y + cur.h / 2;
      const row = this.rects.filter((r) => Math.abs(r.y + r.h / 2 - cy) < cur.h / 2 && (right ? r.x > cur.x : r.x < cur.x));
      next = row.sort((p, q) => (right ? p.x - q.x : q.x - p.x))[0]
        ?? this.rects[right ? Math.min(i + 1, this.rects.length - 1) : Math.max(i - 1, 0)];
    }
    else if (ev.key === 'Home') next = this.rects[0];
    else if (ev.key === 'End') next = this.rects[this.rects.length - 1];
    else if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      const down = ev.key === 'ArrowDown';
      const cy = cur.y + cur.h / 2, cx = cur.x + cur.w / 2;
      const cands = this.rects.filter((r) => (down ? r.y >= cur.y + cur.h - 0.01 : r.y + r.h <= cur.y + 0.01));
      // the nearest row first, then the nearest column in it
      next = cands.reduce((best, r) => {
        const dy = Math.abs(r.y + r.h / 2 - cy), dx = Math.abs(r.x + r.w / 2 - cx);
        if (!best) return { r, dy, dx };
        return dy < best.dy - 0.01 || (Math.abs(dy - best.dy) <= 0.01 && dx < best.dx) ? { r, dy, dx } : best;
      }, null)?.r ?? cur;
    } else if (ev.key === 'Enter' || ev.key === ' ') {
      ev.preventDefault();
      if (this.selected === null) this.select(cur.cpu);
      this.onSelect?.(this.selected, { focus: true });
      return;
    } else return;
    ev.preventDefault();
    this.select(next.cpu);
  }

  describe(cpu) {
    const c = this.byCpu?.get(cpu);
    if (!c) return '';
    const pct = (arr) => (arr && arr[cpu] !== undefined ? `${(arr[cpu] * 100).toFixed(1)}%` : '–');
    const ht = this.heat || {};
    return `CPU ${cpu}: socket ${c.socket}, node ${c.node}, LLC ${c.llc}, core ${c.core}, thread ${c.thread} — busy ${pct(ht.busy)}, stall ${pct(ht.stall)}, idle ${pct(ht.idle)}`;
  }

  value(cpu) {
    return +(this.heat?.[this.metric]?.[cpu] ?? 0);
  }

  hit(ev) {
    const b = this.canvas.getBoundingClientRect();
    const x = ev.clientX - b.left, y = ev.clientY - b.top;
    return this.rects.find((r) => x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h) || null;
  }

  color(cpu) {
    if (!this.heat) return 'rgb(128,128,128)';
    return heatColor(this.value(cpu) / this.scaleMax);
  }

  /** The scale's top for the metric, and the legend under the metric selector. */
  scale() {
    const m = HEAT_METRICS[this.metric];
    const vals = this.heat?.[this.metric] || [];
    const top = vals.reduce((a, v) => Math.max(a, +v || 0), 0);
    this.scaleMax = m.max ?? NICE_MAX.find((x) => x >= top - 1e-12) ?? 1;
    const bar = $('heat-legend-bar');
    if (!bar) return;
    bar.style.background = `linear-gradient(to right, ${[0, 0.25, 0.5, 0.75, 1].map(heatColor).join(', ')})`;
    const ticks = clear($('heat-legend-ticks'));
    for (const t of legendTicks(this.scaleMax)) ticks.append(h('span', {}, t));
    $('heat-legend').dataset.max = String(this.scaleMax);
    $('heat-legend').dataset.metric = this.metric;
    this.canvas.setAttribute('aria-label', `CPU heatmap of ${m.label}, 0 to ${pctText(this.scaleMax)} of each CPU's time. Arrow keys move the selected CPU, Enter shows its sched domains.`);
  }

  draw() {
    const cv = this.canvas;
    const cssW = Math.max(240, Math.floor(cv.parentElement.clientWidth - 2));
    const dpr = window.devicePixelRatio || 1;
    const ctx = cv.getContext('2d');
    this.rects = [];
    const fg = getComputedStyle(document.documentElement).getPropertyValue('--fg').trim() || '#222';
    const muted = getComputedStyle(document.documentElement).getPropertyValue('--muted').trim() || '#888';
    this.scale();
    if (!this.cpuInfo || !this.cpuInfo.length) {
      cv.width = cssW * dpr; cv.height = 40 * dpr;
      cv.style.width = `${cssW}px`; cv.style.height = '40px';
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, cssW, 40);
      ctx.fillStyle = muted; ctx.font = '12px system-ui, sans-serif';
      ctx.fillText('run an experiment to see per-CPU load', 4, 24);
      cv.dataset.cpus = '0';
      return;
    }
    // group socket -> node -> llc -> core -> [cpu info sorted by thread]
    const tree = new Map();
    const get = (m, k) => { if (!m.has(k)) m.set(k, new Map()); return m.get(k); };
    for (const c of this.cpuInfo) {
      const cores = get(get(get(tree, c.socket), c.node), c.llc);
      if (!cores.has(c.core)) cores.set(c.core, []);
      cores.get(c.core).push(c);
    }
    const sorted = (m) => [...m.entries()].sort((x, y) => x[0] - y[0]);
    let maxNodes = 1, maxLlcs = 1, maxCores = 1, maxThreads = 1;
    for (const [, nodes] of tree) {
      maxNodes = Math.max(maxNodes, nodes.size);
      for (const [, llcs] of nodes) {
        maxLlcs = Math.max(maxLlcs, llcs.size);
        for (const [, cores] of llcs) {
          maxCores = Math.max(maxCores, cores.size);
          for (const [, th] of cores) maxThreads = Math.max(maxThreads, th.length);
        }
      }
    }
    const gapN = 10, gapL = 4, label = 14, gapS = 8;
    const lc = Math.ceil(Math.sqrt(maxLlcs)), lr = Math.ceil(maxLlcs / lc);
    const llcW = (cssW - (maxNodes - 1) * gapN - maxNodes * (lc - 1) * gapL) / (maxNodes * lc);
    // cores per row: as many as fit, but rows of equal length where a divisor of the LLC's cores
    // allows it (32 cores as 4 × 8, not 15 + 15 + 2)
    const fit = Math.min(maxCores, Math.max(1, Math.ceil(llcW / 22)));
    const div = [...Array(fit).keys()].map((i) => fit - i).find((d) => maxCores % d === 0) ?? 1;
    const cc = div * 2 > fit ? div : Math.ceil(maxCores / Math.ceil(maxCores / fit));
    const s = Math.max(3, Math.min(22, Math.floor(llcW / cc)));
    const rows = Math.ceil(maxCores / cc);
    const llcH = rows * s;
    const nodeW = lc * cc * s + (lc - 1) * gapL;
    const nodeH = lr * llcH + (lr - 1) * gapL;
    const bandH = label + nodeH;
    const cssH = tree.size * bandH + (tree.size - 1) * gapS + 2;
    cv.width = Math.round(cssW * dpr); cv.height = Math.round(cssH * dpr);
    cv.style.width = `${cssW}px`; cv.style.height = `${cssH}px`;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssW, cssH);
    ctx.font = '11px system-ui, sans-serif';
    let y0 = 0;
    for (const [socket, nodes] of sorted(tree)) {
      let x0 = 0;
      for (const [node, llcs] of sorted(nodes)) {
        ctx.fillStyle = fg;
        ctx.fillText(`socket ${socket} · node ${node}`, x0, y0 + 11);
        sorted(llcs).forEach(([, cores], li) => {
          const lx = x0 + (li % lc) * (cc * s + gapL);
          const ly = y0 + label + Math.floor(li / lc) * (llcH + gapL);
          ctx.strokeStyle = muted; ctx.lineWidth = 1;
          ctx.strokeRect(lx - 0.5, ly - 0.5, cc * s + 1, Math.ceil(cores.size / cc) * s + 1);
          sorted(cores).forEach(([, threads], ci) => {
            const cx = lx + (ci % cc) * s, cy = ly + Math.floor(ci / cc) * s;
            const th = threads.slice().sort((p, q) => p.thread - q.thread);
            const stripe = (s - 1) / th.length;
            th.forEach((t, ti) => {
              const r = { cpu: t.cpu, x: cx, y: cy + ti * stripe, w: s - 1, h: stripe };
              ctx.fillStyle = this.color(t.cpu);
              ctx.fillRect(r.x, r.y, r.w, Math.max(1, r.h - (ti < th.length - 1 ? 0.5 : 0)));
              this.rects.push(r);
              if (t.cpu === this.selected) {
                // a two-tone ring, visible on light and dark cells
                ctx.strokeStyle = fg; ctx.lineWidth = 2;
                ctx.strokeRect(r.x - 1, r.y - 1, r.w + 2, r.h + 2);
                ctx.strokeStyle = getComputedStyle(document.documentElement).getPropertyValue('--panel').trim() || '#fff';
                ctx.lineWidth = 1;
                ctx.strokeRect(r.x + 0.5, r.y + 0.5, r.w - 1, r.h - 1);
              }
            });
          });
        });
        x0 += nodeW + gapN;
      }
      y0 += bandH + gapS;
    }
    cv.dataset.cpus = String(this.rects.length);
  }
}

/** Sched-domain tree of one CPU, from topology(experiment, side, cpu): one <details> per domain
 * (widest first, each nesting its child), so the keyboard opens and closes levels (Tab, Enter). */
export function renderDomains(topo, cpu, sideLabel, focus = false) {
  const box = clear($('domains'));
  if (!topo) return;
  const info = (topo.cpu_info || []).find((c) => c.cpu === cpu);
  const head = h('h4', { tabindex: '-1' }, `CPU ${cpu} (${sideLabel})` + (info ? `: socket ${info.socket}, node ${info.node}, LLC ${info.llc}, core ${info.core}, thread ${info.thread}` : ''));
  box.append(head);
  const domains = [...(topo.domains || [])].sort((a, b) => (b.level ?? 0) - (a.level ?? 0));
  let parent = box;
  for (const d of domains) {
    const det = h('details', { open: true },
      // domain-N as sched_verbose numbers it; the kernel's sd->level (debugfs `level`) beside it
      h('summary', {}, h('strong', {}, `${d.name}`), ` domain-${d.level}${d.sd_level !== undefined && d.sd_level !== d.level ? ` (debugfs level:${d.sd_level})` : ''} · span `, h('code', {}, String(d.span)),
        ` (${d.span_weight.toLocaleString('en-US')} CPUs)`),
      h('div', { class: 'desc' },
        `interval ${d.min_interval}–${d.max_interval} ms, busy_factor ${d.busy_factor}, imbalance_pct ${d.imbalance_pct}, cache_nice_tries ${d.cache_nice_tries}`),
      h('div', { class: 'flags' }, (d.flags || []).map((f) => h('code', { class: 'flag' }, String(f)))),
      h('div', { class: 'desc' }, `groups: `, (d.groups || []).map((g, i) => h('code', { class: i === 0 ? 'group local' : 'group' }, `{${g}}`))));
    const li = h('li', { class: 'domain', dataset: { level: String(d.level), name: String(d.name) } }, det);
    const ul = h('ul', { class: 'domain-tree' }, li);
    parent.append(ul);
    parent = det;
  }
  // the texts (sched_verbose, debugfs) after the tree: Tab from the heading reaches the tree first
  const text = domainTextBox(topo);
  if (text) box.append(text);
  if (focus) head.focus();
  if (Array.isArray(topo.node_distances) && topo.node_distances.length) {
    const t = h('table', { class: 'distances' },
      h('thead', {}, h('tr', {}, h('th', {}, 'node'), topo.node_distances.map((_, i) => h('th', {}, String(i))))),
      h('tbody', {}, topo.node_distances.map((row, i) => h('tr', {}, h('th', {}, String(i)), row.map((v) => h('td', { class: 'num' }, String(v)))))));
    box.append(h('details', {}, h('summary', {}, 'node distances (SLIT)'), t));
  }
}

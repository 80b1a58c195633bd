// CPU heatmap (canvas): CPUs grouped socket -> node -> LLC -> core (SMT threads stacked in a core
// cell), coloured by busy / contention stall / idle. Clicking a CPU shows its sched-domain tree.
import { $, h, clear } from './dom.js';
import { domainTextBox } from './domtext.js';

const COL = { busy: [46, 160, 67], stall: [214, 39, 40], idle: [140, 140, 150] };

export class Heatmap {
  constructor(canvas, onSelect) {
    this.canvas = canvas;
    this.onSelect = onSelect;
    this.cpuInfo = null;
    this.heat = null;
    this.rects = []; // {cpu, x, y, w, h}
    this.selected = null;
    canvas.addEventListener('click', (ev) => {
      const r = this.hit(ev);
      if (r) { this.selected = r.cpu; this.draw(); this.onSelect?.(r.cpu); }
    });
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
  }

  clear() { this.set(null, null); }

  describe(cpu) {
    const c = this.byCpu?.get(cpu);
    if (!c) return '';
    const pct = (arr) => (arr && arr[cpu] !== undefined ? `${(arr[cpu] * 100).toFixed(1)}%` : '–');
    const ht = this.heat || {};
    return `CPU ${cpu}: socket ${c.socket}, node ${c.node}, LLC ${c.llc}, core ${c.core}, thread ${c.thread} — busy ${pct(ht.busy)}, stall ${pct(ht.stall)}, idle ${pct(ht.idle)}`;
  }

  hit(ev) {
    const b = this.canvas.getBoundingClientRect();
    const x = ev.clientX - b.left, y = ev.clientY - b.top;
    return this.rects.find((r) => x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h) || null;
  }

  color(cpu) {
    const ht = this.heat;
    if (!ht) return 'rgb(128,128,128)';
    const busy = +(ht.busy?.[cpu] ?? 0), stall = +(ht.stall?.[cpu] ?? 0), idle = +(ht.idle?.[cpu] ?? 0);
    const sum = busy + stall + idle || 1;
    const mix = [0, 1, 2].map((i) => Math.round((busy * COL.busy[i] + stall * COL.stall[i] + idle * COL.idle[i]) / sum));
    return `rgb(${mix[0]},${mix[1]},${mix[2]})`;
  }

  draw() {
    const cv = this.canvas;
    const cssW = Math.max(240, Math.floor(cv.parentElement.clientWidth - 2));
    const dpr = window.devicePixelRatio || 1;
    const ctx = cv.getContext('2d');
    this.rects = [];
    const fg = getComputedStyle(document.documentElement).getPropertyValue('--fg').trim() || '#222';
    const muted = getComputedStyle(document.documentElement).getPropertyValue('--muted').trim() || '#888';
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
    const cc = Math.min(maxCores, Math.max(1, Math.ceil(llcW / 22)));
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
                ctx.strokeStyle = fg; ctx.lineWidth = 2;
                ctx.strokeRect(r.x + 1, r.y + 1, r.w - 2, r.h - 2);
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

/** Sched-domain tree of one CPU, from topology(experiment, side, cpu). */
export function renderDomains(topo, cpu, sideLabel) {
  const box = clear($('domains'));
  if (!topo) return;
  const info = (topo.cpu_info || []).find((c) => c.cpu === cpu);
  box.append(h('h4', {}, `CPU ${cpu} (${sideLabel})` + (info ? `: socket ${info.socket}, node ${info.node}, LLC ${info.llc}, core ${info.core}, thread ${info.thread}` : '')));
  const text = domainTextBox(topo);
  if (text) box.append(text);
  const domains = [...(topo.domains || [])].sort((a, b) => (b.level ?? 0) - (a.level ?? 0));
  let parent = box;
  for (const d of domains) {
    const li = h('li', { class: 'domain', dataset: { level: String(d.level), name: String(d.name) } },
      h('div', {},
        h('strong', {}, `${d.name}`), ` level ${d.level} · span `, h('code', {}, String(d.span)),
        ` (${d.span_weight} CPUs)`),
      h('div', { class: 'desc' },
        `interval ${d.min_interval}–${d.max_interval} ms, busy_factor ${d.busy_factor}, imbalance_pct ${d.imbalance_pct}, cache_nice_tries ${d.cache_nice_tries}`),
      h('div', { class: 'flags' }, (d.flags || []).map((f) => h('code', { class: 'flag' }, String(f)))),
      h('div', { class: 'desc' }, `groups: `, (d.groups || []).map((g, i) => h('code', { class: i === 0 ? 'group local' : 'group' }, `{${g}}`))));
    const ul = h('ul', { class: 'domain-tree' }, li);
    parent.append(ul);
    parent = li;
  }
  if (Array.isArray(topo.node_distances) && topo.node_distances.length) {
    const t = h('table', { class: 'distances' },
      h('thead', {}, h('tr', {}, h('th', {}, 'node'), topo.node_distances.map((_, i) => h('th', {}, String(i))))),
      h('tbody', {}, topo.node_distances.map((row, i) => h('tr', {}, h('th', {}, String(i)), row.map((v) => h('td', { class: 'num' }, String(v)))))));
    box.append(h('details', {}, h('summary', {}, 'node distances (SLIT)'), t));
  }
}

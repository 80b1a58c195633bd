// Tiny DOM helpers. Text from links, presets or reports only ever reaches the DOM through
// textContent and attribute setters (never HTML parsing).
export const $ = (id) => document.getElementById(id);

/** Enter in `panel` (a curve, a screen, a search) submits that panel's own job, not an A/B run:
 * the page's Enter handler is on document. Not on a button or a select (their own Enter), not
 * with a modifier or mid-composition, and not while `busy()` says a job is running. */
export function enterStarts(panel, start, busy) {
  panel.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Enter' || ev.isComposing || ev.shiftKey || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.target?.closest?.('button, select')) return;
    ev.preventDefault();
    ev.stopPropagation();
    if (!busy()) start();
  });
}

/** h('td', {class: 'x', dataset: {k: 'v'}, onclick: fn}, 'text', childNode, ...) */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'text') el.textContent = String(v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'checked' || k === 'value' || k === 'disabled' || k === 'selected') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function setText(id, text) {
  const el = typeof id === 'string' ? $(id) : id;
  if (el) el.textContent = text;
  return el;
}

/** Number formatting for tables and cards: grouped digits (1,234,567.8), never a k/M suffix, so a
 * column reads in one unit. Integers print without decimals. Every number on the page goes through
 * fmt, fmtFixed, fmtInt or fmtPct (charts: axis.js, on the same grouping). */
export function fmt(x, digits = 2) {
  if (x === null || x === undefined || Number.isNaN(x)) return '–';
  if (typeof x !== 'number') return String(x);
  if (!Number.isFinite(x)) return '–';
  return x.toLocaleString('en-US', { minimumFractionDigits: Number.isInteger(x) ? 0 : digits, maximumFractionDigits: digits });
}

/** Grouped digits with exactly `digits` decimals (a column whose rows line up: 54,812.0 above
 * 9,492.3); `signed`: a + on positive values. */
export function fmtFixed(x, digits = 1, signed = false) {
  if (x === null || x === undefined || typeof x !== 'number' || !Number.isFinite(x)) return '–';
  const s = x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return signed && x > 0 ? `+${s}` : s;
}

/** Decimals for a column of values: 0 from 1,000 up, 1 from 10, else 2 (one choice per column). */
export function columnDigits(values) {
  const top = Math.max(0, ...values.filter((v) => typeof v === 'number' && Number.isFinite(v)).map(Math.abs));
  return top >= 1000 ? 0 : top >= 10 ? 1 : 2;
}

export function fmtInt(x) {
  if (x === null || x === undefined || Number.isNaN(x)) return '–';
  return Math.round(x).toLocaleString('en-US');
}

export function fmtPct(x, digits = 1, signed = false) {
  if (x === null || x === undefined || Number.isNaN(x) || !Number.isFinite(x)) return '–';
  return `${fmtFixed(x, digits, signed)}%`;
}

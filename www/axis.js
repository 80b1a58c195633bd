// Chart axes (uPlot): nice tick steps (1, 2, 2.5, 5 × 10^k) so that every y axis has 4 to 6 ticks,
// tick labels with grouped digits and as many decimals as the step needs (the same format as the
// tables: 12,500 not 12.5k), and an axis width that fits its longest label.

const STEPS = [1, 2, 2.5, 5, 10];

/** The nice step that cuts [lo, hi] into about `n` intervals. */
export function niceStep(lo, hi, n = 4) {
  const span = Math.abs(hi - lo) || Math.abs(hi) || 1;
  const raw = span / n;
  const p = 10 ** Math.floor(Math.log10(raw));
  return p * STEPS.find((s) => s * p >= raw - 1e-12);
}

/** [lo, hi] widened to multiples of a nice step; `zero`: from 0 (shares, counts). */
export function niceRange(min, max, zero = false, n = 4) {
  if (min == null || max == null || !Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  let lo = zero ? Math.min(0, min) : min;
  let hi = max;
  if (hi - lo < 1e-12) { hi = lo + (Math.abs(lo) || 1) * 0.1; lo = zero ? lo : lo - (hi - lo); }
  const step = niceStep(lo, hi, n);
  return [Math.floor(lo / step + 1e-9) * step, Math.ceil(hi / step - 1e-9) * step];
}

/** Ticks at the nice step inside [min, max] (uPlot `splits`). */
export function niceTicks(min, max, n = 4) {
  const step = niceStep(min, max, n);
  const out = [];
  for (let v = Math.ceil(min / step - 1e-9) * step; v <= max + step * 1e-9; v += step) out.push(+v.toPrecision(12));
  return out;
}

/** Decimals a step needs (2.5 -> 1, 0.05 -> 2, 500 -> 0). */
export function stepDecimals(step) {
  let d = 0;
  while (d < 6 && Math.abs(step * 10 ** d - Math.round(step * 10 ** d)) > 1e-6) d++;
  return d;
}

/** Tick labels: grouped digits, the decimals of the step between ticks, optional suffix. */
export function tickLabels(ticks, suffix = '') {
  const step = ticks.length > 1 ? Math.abs(ticks[1] - ticks[0]) : 1;
  const d = stepDecimals(step);
  return ticks.map((v) => (v == null ? '' : v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) + suffix));
}

/** Axis width (px) for its labels (uPlot `size`): the widest label in the axis font, plus the tick
 * and the gaps (so that a value never runs into the rotated axis label). */
let measure = null;
export function axisSize(u, values, i) {
  measure ??= document.createElement('canvas').getContext('2d');
  const ax = u.axes[i] || {};
  measure.font = (Array.isArray(ax.font) ? ax.font[0] : ax.font) || '12px system-ui, sans-serif';
  const widest = Math.max(measure.measureText('0,000').width, ...(values || []).map((v) => measure.measureText(String(v ?? '')).width));
  // uPlot keeps the font scaled by the device pixel ratio ([font, size]): back to CSS px
  const scale = Array.isArray(ax.font) ? (window.devicePixelRatio || 1) : 1;
  return Math.ceil(widest / scale + 20);
}

/** A y axis of uPlot with nice ticks and grouped labels. */
export function yAxis(base, label, suffix = '', extra = {}) {
  return {
    ...base,
    label,
    splits: (u, i, min, max) => niceTicks(min, max),
    values: (u, v) => tickLabels(v, suffix),
    size: axisSize,
    ...extra,
  };
}

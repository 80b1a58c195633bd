// The trace panel: the finished run's side, run again in the engine worker with the tracer on (runs
// are deterministic, so it is the same run: same report hash), as Perfetto protobuf (.pftrace: CPU
// scheduling tracks, thread states, the sched tables) or Chrome JSON (.json: slices and counters
// only), docs/TRACE.md. Without an end the engine picks the longest window that fits its event cap
// and says which; the window and the size are shown before the file is saved. "Open in Perfetto UI"
// hands it to ui.perfetto.dev (perfetto.js), only when clicked.

import { $, setText } from './dom.js';
import { download, fileStem } from './export.js';
import { openPerfettoTab, handOver } from './perfetto.js';

/** An optional seconds field: undefined when empty. */
function seconds(id) {
  const v = $(id).value.trim();
  return v === '' ? undefined : Number(v);
}

const EXT = { pftrace: 'pftrace', json: 'trace.json' };
const MIME = { pftrace: 'application/octet-stream', json: 'application/json' };

/** "31.2 MB", "412 KB" (decimal, as the CLI's summary). */
function size(n) {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.max(1, Math.round(n / 1e3))} KB`;
}

/** The engine's field errors (a bad window, the event cap: `trace_to`), else the message. */
function why(e) {
  return e?.errors?.length ? e.errors.map((f) => `${f.field}: ${f.message}`).join('; ') : String(e?.message ?? e);
}

/**
 * Wires the #trace-box controls. `engine`: the page's Engine; `finished()`: the finished run's
 * experiment (null before one). The buttons follow #export-json (enabled once a run has finished).
 */
export function setupTrace(engine, finished) {
  const buttons = [$('download-trace'), $('open-perfetto')];
  let busy = false;
  let last = null; // {key, trace}: the last trace made, reused by the other button
  const sync = () => { for (const b of buttons) b.disabled = $('export-json').disabled || busy; };
  new MutationObserver(sync).observe($('export-json'), { attributes: true, attributeFilter: ['disabled'] });
  sync();

  /** The trace the controls ask for (made once per finished run and settings). */
  async function make(exp) {
    const side = $('trace-side').value;
    const format = $('trace-format').value;
    const from = seconds('trace-from'), to = seconds('trace-to');
    const key = JSON.stringify([exp, side, format, from ?? null, to ?? null]);
    if (last?.key === key) return last.trace;
    setText('trace-status', `tracing side ${side.toUpperCase()}…`);
    const t = await engine.call('trace', { experiment: exp, side, format, from, to });
    const trace = { ...t, side, fileName: `${fileStem(exp)}-${side}.${EXT[t.format]}` };
    last = { key, trace };
    return trace;
  }

  // the engine's summary with its integers grouped (1,000,000) and the size of the bytes in hand
  const shown = (t) => `side ${t.side.toUpperCase()}: ${t.summary.replace(/, [\d.]+ MB$/, '')
    .replace(/(?<![.\d])\d{4,}(?![.\d])/g, (n) => Number(n).toLocaleString('en-US'))}, ${size(t.bytes.byteLength)}`;

  async function act(fn) {
    const exp = finished();
    if (!exp) return;
    busy = true;
    sync();
    try {
      await fn(exp);
    } finally {
      busy = false;
      sync();
    }
  }

  $('download-trace').addEventListener('click', () => act(async (exp) => {
    try {
      const t = await make(exp);
      // the window and the size first, then the file
      setText('trace-status', `${shown(t)} — saving ${t.fileName}`);
      await new Promise((r) => setTimeout(r, 0));
      download(t.fileName, MIME[t.format], t.bytes);
      setText('trace-status', `${shown(t)} — trace saved as ${t.fileName}: open it in ui.perfetto.dev`);
    } catch (e) {
      setText('trace-status', `no trace: ${why(e)}`);
    }
  }));

  $('open-perfetto').addEventListener('click', () => {
    // the tab opens in the click itself (pop-up rule); the trace is made while it loads
    const win = finished() ? openPerfettoTab() : null;
    act(async (exp) => {
      if (!win) {
        setText('trace-status', 'the browser blocked the new tab: allow pop-ups for this page, or Download trace and open the file in ui.perfetto.dev');
        return;
      }
      let t;
      try {
        t = await make(exp);
      } catch (e) {
        win.close();
        setText('trace-status', `no trace: ${why(e)}`);
        return;
      }
      setText('trace-status', `${shown(t)} — waiting for ui.perfetto.dev…`);
      try {
        const buffer = t.bytes.buffer.slice(t.bytes.byteOffset, t.bytes.byteOffset + t.bytes.byteLength);
        await handOver(win, { buffer, title: `schedplay ${t.fileName}`, fileName: t.fileName });
        setText('trace-status', `${shown(t)} — opened in the Perfetto UI tab`);
      } catch (e) {
        setText('trace-status', `${shown(t)} — not opened: ${e.message}`);
      }
    });
  });
}

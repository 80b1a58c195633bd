// "Download trace": the finished run's side, run again in the engine worker with the tracer on (runs
// are deterministic, so it is the same run: same report hash), saved as Chrome JSON trace events for
// the user's own Perfetto UI (docs/TRACE.md). No network call: the file is made in the page.

import { $, setText } from './dom.js';
import { download, fileStem } from './export.js';

/** An optional seconds field: undefined when empty. */
function seconds(id) {
  const v = $(id).value.trim();
  return v === '' ? undefined : Number(v);
}

/**
 * Wires the #trace-box controls. `engine`: the page's Engine; `finished()`: the finished run's
 * experiment (null before one). The button follows #export-json (enabled once a run has finished).
 */
export function setupTrace(engine, finished) {
  const button = $('download-trace');
  const sync = () => { button.disabled = $('export-json').disabled || button.dataset.busy === '1'; };
  new MutationObserver(sync).observe($('export-json'), { attributes: true, attributeFilter: ['disabled'] });
  sync();
  button.addEventListener('click', async () => {
    const exp = finished();
    if (!exp) return;
    const side = $('trace-side').value;
    button.dataset.busy = '1';
    sync();
    setText('trace-status', `tracing side ${side.toUpperCase()}…`);
    try {
      const reply = await engine.call('trace', { experiment: exp, side, from: seconds('trace-from'), to: seconds('trace-to') });
      download(`${fileStem(exp)}-${side}.trace.json`, 'application/json', reply.text);
      setText('trace-status', `trace saved (${Math.round(reply.text.length / 1024)} KiB): open it in ui.perfetto.dev`);
    } catch (e) {
      // the engine's field errors (a bad window, or the event cap: `trace_to`), else its message
      const list = e?.errors?.length ? e.errors.map((f) => `${f.field}: ${f.message}`).join('; ') : String(e?.message ?? e);
      setText('trace-status', `no trace: ${list}`);
    } finally {
      button.dataset.busy = '';
      sync();
    }
  });
}

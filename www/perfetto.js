// "Open in Perfetto UI": hands a trace to ui.perfetto.dev through the handshake its docs give
// (perfetto.dev/docs/visualization/deep-linking-to-perfetto-ui): open the UI with window.open, post
// 'PING' until it answers 'PONG' (its message channel is not buffered: a message sent before its
// listener is up is lost), then post {perfetto: {buffer, title, fileName}}. Only on a click; the page
// loads nothing from the network otherwise.

export const PERFETTO_ORIGIN = 'https://ui.perfetto.dev';

/** Opens the UI's tab (call it in the click handler itself: browsers allow pop-ups only there).
 * Null when the browser blocked it. */
export function openPerfettoTab(origin = PERFETTO_ORIGIN) {
  return window.open(`${origin}/#!/`, '_blank');
}

/**
 * PING the opened tab every `everyMs` until it answers PONG (from its window and origin), then post
 * the trace. Resolves once posted; rejects when the tab is closed or gives no PONG in `timeoutMs`
 * (no network: the UI never loads). `buffer` is an ArrayBuffer, copied (not transferred), so the
 * page keeps its trace.
 */
export function handOver(win, { buffer, title, fileName }, { origin = PERFETTO_ORIGIN, timeoutMs = 60000, everyMs = 50 } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const stop = () => { clearInterval(timer); window.removeEventListener('message', onMessage); };
    const onMessage = (ev) => {
      if (ev.source !== win || ev.origin !== origin || ev.data !== 'PONG') return;
      stop();
      win.postMessage({ perfetto: { buffer, title, fileName } }, origin);
      resolve();
    };
    const timer = setInterval(() => {
      if (win.closed) { stop(); reject(new Error('the Perfetto UI tab was closed before it took the trace')); return; }
      if (Date.now() - t0 > timeoutMs) {
        stop();
        reject(new Error(`ui.perfetto.dev did not answer in ${Math.round(timeoutMs / 1000)} s (no network?): download the trace and open it there instead`));
        return;
      }
      // dropped by the browser while the tab is not yet on the UI's origin
      win.postMessage('PING', origin);
    }, everyMs);
    window.addEventListener('message', onMessage);
  });
}

// The stories' results shipped with the page (www/precomputed/stories.json, written by
// `schedplay precompute`): each story's A/B as its Run computes it (both sides' reports, their
// schedstat, the engine's Δ and the story's checks) and its curve's points, run natively by this
// build. A story opens with them at once; they are shown only while the form's experiment is the
// story's own (its canonical link is the entry's `link`), labelled as computed by this build, and
// Run recomputes them. A report keeps its cache lines with most HITMs (`cachelines_total` says of
// how many); every other figure is whole.
import { $, h, clear, fmtInt } from './dom.js';

/** The words on screen beside shipped results. */
export const SHIPPED_LABEL = 'computed by this build; Run to recompute';

let file = null; // Promise of {stories: [...]} or null when absent

/** Starts loading the file (once); resolves to it, or null when the page has none. */
export function loadShipped() {
  file ??= fetch(new URL('./precomputed/stories.json', import.meta.url))
    .then((r) => (r.ok ? r.json() : null))
    .catch(() => null);
  return file;
}

/** The story's entry when it was computed for `link` (the form's canonical link), else null. */
export async function shippedFor(name, link) {
  const f = await loadShipped();
  const e = (f?.stories || []).find((s) => s.name === name);
  return e && link && e.link === link ? e : null;
}

/** The label beside the results: what they are, that Run recomputes them, and which cache lines
 * the c2c table has. `entry` null: no label. */
export function renderShippedNote(entry) {
  const box = $('shipped-note');
  clear(box);
  box.hidden = !entry;
  delete box.dataset.gone;
  if (!entry) return;
  const lines = ['a', 'b'].map((s) => `${fmtInt(entry[s].report.cachelines.length)} of ${fmtInt(entry[s].cachelines_total)}`);
  box.append(h('strong', {}, SHIPPED_LABEL), ` (shipped with the page: report hashes A ${entry.a.report_hash}, B ${entry.b.report_hash}; `
    + `the c2c table lists the cache lines with most HITMs, ${lines[0]} in A and ${lines[1]} in B).`);
}

/** The note where shipped results were: the form changed, so they are not its results. */
export function renderShippedGone(storyTitle) {
  const box = $('shipped-note');
  clear(box);
  box.hidden = false;
  box.append(h('strong', {}, 'Not shown: '), `the results shipped with the page are ${storyTitle}'s own experiment, and the form has changed since. Run computes the form's.`);
  box.dataset.gone = '1';
}

export function hideShippedNote() {
  const box = $('shipped-note');
  clear(box);
  box.hidden = true;
  delete box.dataset.gone;
}

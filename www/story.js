// Seed stories: the claim box under the story buttons, and the model against the reported figures
// next to a story's results. The checks are the engine's (validation::check on the story's own run:
// the rows of "How close is the model?", each with its published figure, band and status); this
// module only words them.
import { $, h, clear, fmtFixed } from './dom.js';
import { IDENTICAL_RUNS } from './results.js';

/** The claim, what to look at, the source, and what the model's figures are of. */
export function renderClaim(s, edited = false) {
  const box = $('story-claim');
  box.hidden = !s;
  clear(box);
  if (!s) return;
  box.append(h('strong', {}, s.title || s.name), s.claim ? h('span', {}, ` — ${s.claim}`) : null);
  if (s.look_at) box.append(h('div', {}, `Look at: ${s.look_at} (the details below show side ${String(s.details_side || 'b').toUpperCase()}).`));
  // the claim's share is of all cycles (perf top on a busy box); the model's profile leaves idle out
  box.append(h('div', { class: 'story-note' }, 'The model\'s profile shares are of non-idle cycles (perf report without [idle]); the results show the model against the reported figures, with a verdict.'));
  if (s.source) box.append(h('div', {}, `Source: ${s.source}`));
  if (edited) box.append(h('div', { class: 'story-edited', dataset: { testid: 'story-edited' } }, 'This link\'s experiment is not the story\'s: Run runs it as it is, without the story\'s verdict; the story button loads the story.'));
}

const signed = (what) => /throughput|messages/.test(what);
const num = (x, what) => (Number.isFinite(x) ? `${fmtFixed(x, 1, signed(what))}%` : 'n/a');

/** "2.7× larger than reported", "about as reported", "the opposite sign of reported"; '' without a
 * published number. */
export function ratioWords(model, published) {
  if (!Number.isFinite(model) || !Number.isFinite(published) || published === 0) return '';
  if (Math.sign(model) !== Math.sign(published) && model !== 0) return 'the opposite sign of the reported figure';
  const r = Math.abs(model / published);
  if (r >= 1.25) return `${fmtFixed(r, 1)}× larger than reported`;
  if (r <= 0.8) return r < 0.05 ? 'almost none of the reported figure' : `${fmtFixed(1 / r, 1)}× smaller than reported`;
  return 'about as reported';
}

/** One line per check: the model's figure against the published one, the row's band and status,
 * and a link to the row in "How close is the model?". */
/**
 * What "How close is the model?" last gave for a row, next to the story's own figure: the same run
 * when it ran the story's seconds with one repeat (its seed is 1, as the story's), else in words why
 * the two differ. `validation`: {rows, seconds, repeats} of the last model check, or null.
 */
function rowFigure(c, validation, exp) {
  const r = validation?.rows?.find((x) => x.id === c.id);
  if (!r || !exp) return null;
  const ci = r.model_ci95 ? ` [${num(r.model_ci95[0], c.what)}, ${num(r.model_ci95[1], c.what)}]` : '';
  const same = Number(validation.seconds) === Number(exp.seconds) && Number(validation.repeats) === 1 && Number(exp.seed) === 1;
  const text = same
    ? `“How close is the model?” ran this same run (${exp.seconds} s, seed 1): model ${num(r.model, c.what)}.`
    : `“How close is the model?” gives ${num(r.model, c.what)}${ci} for this row from ${validation.repeats} seed${Number(validation.repeats) === 1 ? '' : 's'} of ${validation.seconds} s each; this story's figure is one run of ${exp.seconds} s at seed ${exp.seed}. They differ by the measured window and the seeds: check the model at ${exp.seconds} s with 1 repeat for this run's figure.`;
  return h('div', { class: 'row-figure', dataset: { rowFigure: c.id, same: same ? '1' : '0' } }, text);
}

export function renderVerdict(story, checks, onRow, run = null, validation = null) {
  const box = $('story-figure');
  clear(box);
  box.hidden = !story;
  if (!story) return;
  box.dataset.status = checks.some((c) => c.status === 'misses') ? 'misses' : 'holds';
  box.append(h('div', {}, h('strong', {}, 'Reported: '), story.reported, '.'));
  if (run?.a && run?.b && story.symbol) {
    // the story's symbol in this run's profiles (the cards' seed), as the claim names it
    const pct = (r) => fmtFixed(r.profile?.find((p) => p.symbol === story.symbol)?.percent ?? 0, 2);
    const d = run.compare?.throughput_pct;
    box.append(h('div', {}, `Model (${run.shipped ? 'the run shipped with the page, computed by this build' : 'this run'}): ${story.symbol} ${pct(run.a)}% in A, ${pct(run.b)}% in B; throughput B vs A ${Number.isFinite(d) ? `${fmtFixed(d, 1, true)}%` : '–'} (shares of non-idle cycles).`));
  }
  const list = h('ul', { class: 'verdicts' });
  for (const c of checks) {
    const ci = c.model_ci95 ? ` [${num(c.model_ci95[0], c.what)}, ${num(c.model_ci95[1], c.what)}]`
      : c.identical_runs ? ` (${IDENTICAL_RUNS})` : '';
    const words = ratioWords(c.model, c.published_value);
    const link = h('a', { href: `#vrow-${c.id}`, class: 'row-link', dataset: { row: c.id } }, `row ${c.id}`);
    link.addEventListener('click', (ev) => { ev.preventDefault(); onRow?.(c.id); });
    list.append(h('li', { class: `verdict ${c.status}`, dataset: { row: c.id, status: c.status } },
      h('span', { class: 'mark', 'aria-hidden': 'true' }, c.status === 'holds' ? '✓' : '✗'), ' ',
      `${c.what}: model ${num(c.model, c.what)}${ci} against reported ${c.published} (band ${num(c.tolerance[0], c.what)} .. ${num(c.tolerance[1], c.what)})`,
      words ? ` — ${words}` : '', '; ', link, ` ${c.status === 'holds' ? 'holds' : 'misses'}.`,
      // why a miss misses, the engine's line from docs/MODEL.md
      c.why ? h('div', { class: 'why', dataset: { why: c.id } }, `Why: ${c.why}.`) : null,
      rowFigure(c, validation, run?.exp)));
  }
  box.append(list);
  box.append(h('div', { class: 'desc' }, checks.length && checks[0].model_ci95 ? '' : 'One run per side: no interval. "How close is the model?" runs every row with repeats.'));
}

// Time left of a long run, from how fast it has gone so far (wall time per fraction done). Nothing
// is said for the first two seconds or the first 2%: too early to tell.

/** "about 40 s left", "about 3 min left", or '' (too early). `startMs`: performance.now() at the
 * start; `frac`: 0..1 done. */
export function timeLeft(startMs, frac, now = performance.now()) {
  const elapsed = (now - startMs) / 1000;
  if (!(frac >= 0.02 && frac < 1) || !(elapsed >= 2)) return '';
  const left = (elapsed * (1 - frac)) / frac;
  if (left < 60) return `about ${Math.max(1, Math.round(left))} s left`;
  if (left < 3600) return `about ${Math.round(left / 60)} min left`;
  return `about ${(left / 3600).toFixed(1)} h left`;
}

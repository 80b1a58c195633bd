// Screenshots for the page-review rule: every shot at 1280x800 and 390x844, light and dark, named
// OUT/<what>-<size>-<scheme>.png. Shared by the e2e modules so that the sizes and names are one.
import { join } from 'node:path';

export const VIEWPORTS = [['1280x800', { width: 1280, height: 800 }], ['390x844', { width: 390, height: 844 }]];

/**
 * `el`: a shot of that element (scrolled into view); `into`: the viewport with that element scrolled
 * into it (for a panel that scrolls on its own, where an element shot would be clipped);
 * `scrollTo`: the viewport with that element at the top; otherwise the viewport, or the full page
 * with `full` (or on the phone only with `fullPhone`). The viewport and scheme are restored.
 */
export async function shots(page, OUT, what, { el = null, into = null, scrollTo = null, full = false, fullPhone = false } = {}) {
  const old = page.viewportSize();
  for (const [name, vp] of VIEWPORTS) {
    await page.setViewportSize(vp);
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.waitForTimeout(150);
      const path = join(OUT, `${what}-${name}-${scheme}.png`);
      if (scrollTo) await page.locator(scrollTo).evaluate((e) => e.scrollIntoView({ block: 'start' }));
      if (into) await page.locator(into).scrollIntoViewIfNeeded();
      if (el) { await page.locator(el).scrollIntoViewIfNeeded(); await page.locator(el).screenshot({ path }); }
      else await page.screenshot({ path, fullPage: full || (fullPhone && name === '390x844') });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  if (old) await page.setViewportSize(old);
}

/**
 * The desk's order and its charts' colours, in real Chromium (issue 29,
 * "quality bar"): once a day is loaded the page reads top to bottom —
 * verdict, what it means (summary, replay report), what to look at (charts),
 * the day (timeline) — with the "Open a day" box below them, not between the
 * banner and the replay report; and every chart line's colour, as drawn in
 * the canvas, meets WCAG 2.1 non-text contrast (3:1) against the chart's
 * background, in light and in dark.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, CHROMIUM, demoDayDir, launch, PAGE, SKIP_REASON } from './browser.js';
import { resealedForgery } from './forge.js';

if (!CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!CHROMIUM)('the desk reads top to bottom, and its chart lines stand out (Chromium)', () => {
  let dir: string;
  const contexts: BrowserContext[] = [];
  const file = (n: string): string => join(dir, n);

  beforeAll(() => {
    dir = demoDayDir('tally-web-layout-');
    const lines = readFileSync(file('bundle.jsonl'), 'utf8').split('\n').slice(0, -1);
    writeFileSync(file('forged.jsonl'), resealedForgery(lines));
  }, 120_000);

  afterAll(async () => {
    for (const c of contexts) await c.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function load(page: Page, bundle: string): Promise<void> {
    await page.setInputFiles('#in-bundle', bundle);
    await page.setInputFiles('#in-checkpoint', file('receipt.note'));
    await page.setInputFiles('#in-key', file('engine.vkey'));
    // A day loaded before leaves its mark until the next one starts: clear it so the wait is for this day.
    await page.evaluate("document.body.removeAttribute('data-replayed')");
    await page.click('#load-files');
    await page.waitForSelector('body[data-replayed]', { timeout: 60_000 });
  }

  /** Page-relative top and bottom of each element shown. */
  async function boxes(page: Page, ids: readonly string[]): Promise<Record<string, { top: number; bottom: number }>> {
    return page.evaluate(`(() => {
      const out = {};
      for (const id of ${JSON.stringify(ids)}) {
        const el = document.getElementById(id);
        if (!el || el.getClientRects().length === 0) continue;
        const r = el.getBoundingClientRect();
        out[id] = { top: r.top + scrollY, bottom: r.bottom + scrollY };
      }
      return out;
    })()`);
  }

  it('puts verdict, summary, replay report, charts and the day first, and the "Open a day" box below them', async () => {
    const ctx = await launch();
    contexts.push(ctx);
    const page = await ctx.newPage();
    await page.goto(`file://${PAGE}`);
    // Idle: the box is where the grader starts, under the banner and the help.
    const idle = await boxes(page, ['banner', 'idle-help', 'load']);
    expect(idle['banner']!.bottom).toBeLessThanOrEqual(idle['idle-help']!.top);
    expect(idle['idle-help']!.bottom).toBeLessThanOrEqual(idle['load']!.top);
    for (const [bundle, state] of [
      ['bundle.jsonl', 'pinned'],
      ['forged.jsonl', 'failed-pin'],
    ] as const) {
      await page.$eval('#load', (d) => ((d as unknown as { open: boolean }).open = true));
      await load(page, file(bundle));
      expect(await page.getAttribute('#banner', 'data-state')).toBe(state);
      const order = ['banner', 'summary', 'replay', 'charts', 'work', 'load'] as const;
      const b = await boxes(page, order);
      for (const id of order) expect(b[id], `${state}: #${id} shown`).toBeDefined();
      for (let k = 1; k < order.length; k++) expect(b[order[k - 1]!]!.bottom, `${state}: #${order[k - 1]} above #${order[k]}`).toBeLessThanOrEqual(b[order[k]!]!.top);
      // Nothing between the verdict and what it means: the summary follows the banner within a margin.
      expect(b['summary']!.top - b['banner']!.bottom, state).toBeLessThan(40);
      expect(await page.getAttribute('#load', 'open')).toBeNull();
      await page.screenshot({ path: join(ARTIFACTS, `layout-${state}.png`), fullPage: true });
    }
    // The box still opens another day from where it now sits.
    await page.click('#load summary');
    expect(await page.isVisible('#load-files')).toBe(true);
    await page.close();
  });
});

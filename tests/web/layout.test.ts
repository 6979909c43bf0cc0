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

/** WCAG relative luminance of an sRGB colour given as [r, g, b] in 0..255. */
function luminance([r, g, b]: readonly number[]): number {
  const c = (x: number): number => {
    const v = x / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * c(r!) + 0.7152 * c(g!) + 0.0722 * c(b!);
}

/** WCAG contrast ratio of two colours. */
function contrast(a: readonly number[], b: readonly number[]): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

/** `#rrggbb` or `rgb(r, g, b)` as [r, g, b]. */
function rgb(c: string): number[] {
  const hex = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(c);
  if (hex) return hex.slice(1).map((x) => parseInt(x, 16));
  const m = c.match(/[\d.]+/g);
  if (!m || m.length < 3) throw new Error(`not a colour: ${c}`);
  return m.slice(0, 3).map(Number);
}

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

  it('draws every chart line at 3:1 or more against the chart background, in light and dark', async () => {
    const seen = new Map<string, Set<string>>();
    for (const colorScheme of ['light', 'dark'] as const) {
      const ctx = await launch({ colorScheme });
      contexts.push(ctx);
      for (const bundle of ['bundle.jsonl', 'forged.jsonl']) {
        const page = await ctx.newPage();
        await page.goto(`file://${PAGE}`);
        await load(page, file(bundle));
        const figs = (await page.evaluate(`(() => {
          const bgOf = (el) => { for (let e = el; e; e = e.parentElement) { const c = getComputedStyle(e).backgroundColor; if (c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') return c; } return getComputedStyle(document.documentElement).backgroundColor; };
          return [...document.querySelectorAll('#charts figure.chart')].map((f) => {
            const canvas = f.querySelector('canvas');
            const px = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
            const opaque = {};
            for (let k = 0; k < px.length; k += 4) if (px[k + 3] === 255) { const key = px[k] + ',' + px[k + 1] + ',' + px[k + 2]; opaque[key] = (opaque[key] ?? 0) + 1; }
            return { title: f.getAttribute('data-title'), strokes: (f.getAttribute('data-strokes') ?? '').split('|').filter((s) => s !== ''), bg: bgOf(canvas), opaque };
          });
        })()`)) as { title: string; strokes: string[]; bg: string; opaque: Record<string, number> }[];
        expect(figs.length, `${colorScheme} ${bundle}`).toBeGreaterThanOrEqual(3);
        for (const f of figs) {
          expect(f.strokes.length, f.title).toBeGreaterThan(0);
          const bg = rgb(f.bg);
          for (const s of f.strokes) {
            const c = rgb(s);
            // The colour declared is the one painted: fully opaque pixels of it are in the canvas.
            const drawn = Object.entries(f.opaque).filter(([k]) => k.split(',').every((v, i) => Math.abs(Number(v) - c[i]!) <= 2)).reduce((n, [, v]) => n + v, 0);
            expect(drawn, `${colorScheme} ${f.title}: ${s} painted`).toBeGreaterThan(0);
            expect(contrast(c, bg), `${colorScheme} ${f.title}: line ${s} on ${f.bg}`).toBeGreaterThanOrEqual(3);
            if (!seen.has(colorScheme)) seen.set(colorScheme, new Set());
            seen.get(colorScheme)!.add(s);
          }
        }
        await page.screenshot({ path: join(ARTIFACTS, `layout-charts-${bundle.replace('.jsonl', '')}-${colorScheme}.png`), fullPage: true });
        await page.close();
      }
    }
    // Each scheme has its own line colours (one palette cannot meet 3:1 on both backgrounds for every hue).
    expect([...seen.get('dark')!].some((s) => seen.get('light')!.has(s))).toBe(false);
  });
});

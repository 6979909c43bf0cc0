/**
 * How the desk reads, in real Chromium (issue 29, "navigation and charts",
 * "quality bar"): charts in UTC with ISO labels whatever the locale and time
 * zone, y axes as wide as their labels, a sane axis for a one-frame day, a
 * quota chart that stays readable when the cap dwarfs use, rulings grouped;
 * the idle page explains the two modes and hides the empty day; inputs fit 64
 * hex characters; small files in KiB; text contrast in light and dark; a
 * small type scale. Screenshots of the main states, in two locales and time
 * zones and both colour schemes, go to test-artifacts/web (gitignored).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/session/index.js';
import { ARTIFACTS, CHROMIUM, demoDayDir, launch, loadFiles, PAGE, SKIP_REASON } from './browser.js';
import { resealedForgery } from './forge.js';

if (!CHROMIUM) console.warn(SKIP_REASON);

const ISO = /^(\d{4}-\d{2}-\d{2}|\d{2}:\d{2}Z)$/;

interface Drawn {
  title: string;
  x: string[];
  y: string[];
  labelPx: number;
  axisPx: number;
  range: [number, number];
  legend: string[];
  caption: string;
}

async function charts(page: Page): Promise<Drawn[]> {
  return (await page.$$eval('#charts figure.chart', (figs) =>
    figs.map((f) => {
      const r = (f.getAttribute('data-x-range') ?? ',').split(',').map(Number);
      return {
        title: f.getAttribute('data-title') ?? '',
        x: (f.getAttribute('data-x-labels') ?? '').split('|').filter((s: string) => s !== ''),
        y: (f.getAttribute('data-y-labels') ?? '').split('|').filter((s: string) => s !== ''),
        labelPx: Number(f.getAttribute('data-y-label-px')),
        axisPx: Number(f.getAttribute('data-y-axis-px')),
        range: [r[0]!, r[1]!],
        legend: [...f.querySelectorAll('.u-legend .u-series .u-label')].map((e) => e.textContent ?? '').slice(1),
        caption: f.querySelector('figcaption')?.textContent ?? '',
      };
    }),
  )) as Drawn[];
}

/** WCAG contrast ratio of two `rgb(...)` colours. */
function contrast(a: string, b: string): number {
  const lum = (c: string): number => {
    const [r, g, bl] = (c.match(/[\d.]+/g) ?? ['0', '0', '0']).slice(0, 3).map((x) => {
      const v = Number(x) / 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

describe.skipIf(!CHROMIUM)('how the desk reads (Chromium)', () => {
  let dir: string;
  const contexts: BrowserContext[] = [];
  const file = (n: string): string => join(dir, n);

  beforeAll(async () => {
    dir = demoDayDir('tally-web-look-');
    const lines = readFileSync(file('bundle.jsonl'), 'utf8').split('\n').slice(0, -1);
    writeFileSync(file('forged.jsonl'), resealedForgery(lines));
    writeFileSync(file('one-frame.jsonl'), await oneFrameDay());
  }, 120_000);

  afterAll(async () => {
    for (const c of contexts) await c.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const load = (ctx: BrowserContext, bundle: string, pinned: boolean): Promise<Page> => loadFiles(ctx, { bundle, dir, pinned });


  it('draws charts in UTC with ISO labels, whatever the locale and time zone, and no y label clipped', async () => {
    const seen: string[][] = [];
    for (const [locale, timezoneId] of [
      ['en-US', 'UTC'],
      ['de-DE', 'America/New_York'],
    ] as const) {
      const ctx = await launch({ locale, timezoneId });
      contexts.push(ctx);
      const tag = `${locale}-${timezoneId.replace('/', '_')}`;
      const page = await load(ctx, file('bundle.jsonl'), true);
      const drawn = await charts(page);
      expect(drawn.length).toBeGreaterThanOrEqual(3);
      for (const c of drawn) {
        expect(c.x.length, c.title).toBeGreaterThan(1);
        for (const l of c.x) expect(l, `${tag} ${c.title}`).toMatch(ISO);
        expect(c.caption, c.title).toMatch(/^UTC, \d{4}-\d{2}-\d{2} \d{2}:\d{2}Z – \d{4}-\d{2}-\d{2} \d{2}:\d{2}Z/);
        expect(c.labelPx + 8, `${tag} ${c.title}: y labels ${c.y.join(',')}`).toBeLessThanOrEqual(c.axisPx);
      }
      seen.push(drawn.flatMap((c) => c.x));
      // Rulings grouped by outcome: a handful of lines, not one per code.
      const rulings = drawn.find((c) => c.title.startsWith('Rulings'))!;
      expect(rulings.legend.length).toBeLessThanOrEqual(6);
      expect(rulings.caption).toContain('refused (');
      await page.screenshot({ path: join(ARTIFACTS, `look-pinned-${tag}.png`), fullPage: true });
      const forged = await load(ctx, file('forged.jsonl'), true);
      await forged.screenshot({ path: join(ARTIFACTS, `look-forged-${tag}.png`), fullPage: true });
      // A cap of 999,999 against a use of a few units: said, not drawn; no clipped "0,000".
      const quota = (await charts(forged)).find((c) => c.title.startsWith('Quota'))!;
      expect(quota.title).toBe('Quota used and locked');
      expect(quota.caption).toMatch(/ · cap 999999 \(not drawn: about \d+ times the most used and locked, so use stays readable\)$/);
      expect(quota.y.every((y) => !y.includes(','))).toBe(true);
      expect(quota.labelPx + 8).toBeLessThanOrEqual(quota.axisPx);
      await forged.close();
      await page.close();
    }
    expect(seen[1]).toEqual(seen[0]);
  });

  it('gives a one-frame day an hour around its frame, not years', async () => {
    const ctx = await launch();
    contexts.push(ctx);
    const page = await load(ctx, file('one-frame.jsonl'), false);
    const drawn = await charts(page);
    expect(drawn.length).toBeGreaterThan(0);
    for (const c of drawn) {
      expect(c.range[1] - c.range[0], c.title).toBeLessThanOrEqual(3600);
      for (const l of c.x) expect(l).toMatch(ISO);
    }
    await page.close();
  });

  it('explains the two modes while idle, hides the empty day, sizes inputs, and says KiB', async () => {
    const ctx = await launch({ locale: 'de-DE', timezoneId: 'America/New_York' });
    contexts.push(ctx);
    const page = await ctx.newPage();
    await page.goto(`file://${PAGE}`);
    expect(await page.textContent('#idle-help')).toContain('Files you have');
    for (const id of ['#work', '#charts', '#summary', '#f-agent', '#timeline-scroll', '#progress']) expect(await page.isVisible(id), id).toBe(false);
    // Room for 64 hex characters in the pin fields.
    const fits = await page.$eval('#pin-root', (el) => {
      const i = el as unknown as { value: string; scrollWidth: number; clientWidth: number };
      i.value = 'f'.repeat(64);
      return i.scrollWidth <= i.clientWidth;
    });
    expect(fits).toBe(true);
    await page.fill('#pin-root', '');
    await page.screenshot({ path: join(ARTIFACTS, 'look-idle-de-DE.png'), fullPage: true });
    await page.setInputFiles('#in-bundle', file('one-frame.jsonl'));
    await page.click('#load-files');
    await page.waitForSelector('body[data-ready=true]');
    expect(await page.textContent('#progress-text')).toMatch(/^\d+ entries, \d+\.\d of \d+\.\d KiB$/);
    expect(await page.isVisible('#idle-help')).toBe(false);
    expect(await page.isVisible('#work')).toBe(true);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(ARTIFACTS, 'look-one-frame-phone.png'), fullPage: true });
    await page.close();
  });

  it('keeps text contrast at 4.5:1 in light and dark, with a small type scale', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const ctx = await launch({ colorScheme });
      contexts.push(ctx);
      for (const [bundle, pinned, state] of [
        ['bundle.jsonl', true, 'pinned'],
        ['bundle.jsonl', false, 'unpinned'],
        ['forged.jsonl', true, 'failed-pin'],
      ] as const) {
        const page = await load(ctx, file(bundle), pinned);
        expect(await page.getAttribute('#banner', 'data-state')).toBe(state);
        await page.evaluate("location.hash = '#entry=4'");
        await page.locator('#detail h2', { hasText: /^Entry 4:/ }).waitFor();
        const pairs = (await page.evaluate(`(() => {
          const bgOf = (el) => { for (let e = el; e; e = e.parentElement) { const c = getComputedStyle(e).backgroundColor; if (c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') return c; } return getComputedStyle(document.documentElement).backgroundColor; };
          const out = [];
          for (const sel of ['#banner-title', '#banner .sub', '#banner .meta', '#banner .icon', 'header p.muted', '#summary', '#replay p', '#timeline li .code', '#timeline li .time', '#detail dt', '#detail dd', '#legend', '.unverified', '#chart-note']) {
            for (const el of document.querySelectorAll(sel)) { if (el.getClientRects().length === 0) continue; out.push([sel, getComputedStyle(el).color, bgOf(el)]); }
          }
          return out;
        })()`)) as [string, string, string][];
        expect(pairs.length).toBeGreaterThan(10);
        for (const [sel, fg, bg] of pairs) expect(contrast(fg, bg), `${colorScheme} ${state} ${sel}: ${fg} on ${bg}`).toBeGreaterThanOrEqual(4.5);
        const sizes = (await page.evaluate(`[...new Set([...document.querySelectorAll('body *')].filter((e) => e.getClientRects().length > 0 && [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '')).map((e) => getComputedStyle(e).fontSize))]`)) as string[];
        expect(sizes.length, sizes.join(' ')).toBeLessThanOrEqual(7);
        await page.screenshot({ path: join(ARTIFACTS, `look-${state}-${colorScheme}.png`), fullPage: true });
        await page.close();
      }
    }
  });
});

/** A sealed day of one frame and its turn. */
async function oneFrameDay(): Promise<Uint8Array> {
  const engine = createEngine();
  const open = await engine.open({ name: 'one frame', day: '2026-12-01' });
  if (!open.ok) throw new Error(open.message);
  const f = await engine.frame({ sessionId: open.sessionId, ordinal: -1, time: Date.UTC(2026, 11, 1, 14, 30) });
  if (!f.ok) throw new Error(f.message);
  const t = await engine.turn({ sessionId: open.sessionId, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: new TextEncoder().encode('{"note":"one frame"}') } });
  if (!t.ok) throw new Error(t.message);
  const fin = await engine.finalize(open.sessionId);
  if (!fin.ok) throw new Error(fin.message);
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(open.sessionId)) lines.push(l);
  return encodeBundle(lines);
}

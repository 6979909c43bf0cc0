/**
 * Replay in the page (Chromium via playwright-core): the worker re-derives
 * every ruling with `replay`, the function `tally replay` runs. The demo day
 * replays with 0 divergences; a day whose ruling was edited and re-sealed
 * (a valid chain) diverges at the entries `tally replay --json` names, in the
 * same order.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, CHROMIUM, demoDayDir, launch, loadFiles, SKIP_REASON, tally } from './browser.js';
import { resealedForgery } from './forge.js';

if (!CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!CHROMIUM)('replay in the page', () => {
  let dir: string;
  let ctx: BrowserContext;
  const file = (n: string): string => join(dir, n);

  beforeAll(async () => {
    dir = demoDayDir('tally-web-replay-');
    ctx = await launch();
  }, 120_000);

  afterAll(async () => {
    await ctx?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function replayed(bundle: string, pinned: boolean): Promise<Page> {
    const errors: string[] = [];
    const page = await loadFiles(ctx, { bundle, dir, pinned, errors });
    expect(errors, errors.join('\n')).toEqual([]);
    return page;
  }


  it('re-derives every ruling of the demo day, as tally replay does', async () => {
    const cli = JSON.parse(tally(['replay', file('bundle.jsonl'), '--json']).stdout) as { ok: boolean; turns: number; rulings: number; ruler: string };
    expect(cli.ok).toBe(true);
    const page = await replayed(file('bundle.jsonl'), true);
    expect(await page.getAttribute('body', 'data-replayed')).toBe('replayed');
    expect(await page.getAttribute('#replay', 'data-divergences')).toBe('0');
    expect(await page.getAttribute('#replay', 'data-ruler')).toBe(cli.ruler);
    expect(await page.textContent('#replay')).toContain(`${cli.turns} turns replayed, ${cli.rulings} rulings identical, 0 divergences`);
    expect(await page.textContent('#replay')).toContain('never asks a judge again');
    expect(await page.$$('#timeline li.diverged')).toHaveLength(0);
    await page.screenshot({ path: join(ARTIFACTS, 'replay-demo.png'), fullPage: true });
    await page.close();
  });

  it('shows a re-sealed ruling edit as divergences at the entries tally replay reports', async () => {
    const lines = readFileSync(file('bundle.jsonl'), 'utf8').split('\n').slice(0, -1);
    for (const nth of [0, 5]) {
      const p = file(`forged-${nth}.jsonl`);
      writeFileSync(p, resealedForgery(lines, nth));
      expect(tally(['verify', p]).code, 'the forgery is a valid chain').toBe(0);
      const r = tally(['replay', p, '--json']);
      expect(r.code).toBe(1);
      const cli = JSON.parse(r.stdout) as { stage: string; divergences: { index: number; kind: string }[] };
      expect(cli.stage).toBe('replay');
      const page = await replayed(p, false);
      expect(await page.getAttribute('#banner', 'data-state')).toBe('unpinned');
      expect(await page.getAttribute('body', 'data-replayed')).toBe('diverged');
      const shown = await page.$$eval('#replay ol.divergences > li', (els) => els.map((e) => `${e.getAttribute('data-index')}:${e.getAttribute('data-kind')}`));
      expect(shown).toEqual(cli.divergences.map((d) => `${d.index}:${d.kind}`));
      expect(cli.divergences[0]!.kind).toBe('ruling-diverged');
      // The diverged entry is marked in the timeline and its detail says why.
      const first = cli.divergences[0]!.index;
      await page.click(`#replay a[href="#entry=${first}"]`);
      await page.locator('#detail h2', { hasText: new RegExp(`^Entry ${first}:`) }).waitFor();
      expect(await page.textContent('#detail')).toContain('ruling-diverged');
      expect(await page.getAttribute(`#timeline li[data-i="${first}"]`, 'class')).toContain('diverged');
      if (nth === 0) await page.screenshot({ path: join(ARTIFACTS, 'replay-diverged.png'), fullPage: true });
      await page.close();
    }
  });
});

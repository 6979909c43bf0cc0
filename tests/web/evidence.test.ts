/**
 * The desk explains the evidence, in real Chromium (issue 29): a replay
 * divergence is a field-level diff, not two walls of JSON; a judge panel shows
 * each judge's answer and the quorum arithmetic; a frame's prices, fills and
 * transitions are readable; ⚑ has a legend; a ticket transition on a refused
 * intent says why it is there. And navigation: a deep link and a click on
 * "entry N" bring the entry's detail into view; the detail follows the filter.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, CHROMIUM, demoDayDir, launch, loadFiles, SKIP_REASON, tally } from './browser.js';
import { resealedForgery } from './forge.js';

if (!CHROMIUM) console.warn(SKIP_REASON);

type Line = { kind: string; data?: { prices?: Record<string, string> }; ruling?: { quota?: { cap: string }; transitions?: { op: string }[]; verdict?: { panel?: unknown[] } } };

/** Whether the element's box lies inside the viewport. */
async function inView(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).boundingBox();
  const vp = page.viewportSize()!;
  return box !== null && box.y >= 0 && box.y < vp.height && box.y + Math.min(box.height, 60) <= vp.height;
}

describe.skipIf(!CHROMIUM)('the desk explains the evidence (Chromium)', () => {
  let dir: string;
  let ctx: BrowserContext;
  let lines: string[];
  let entries: Line[];
  const file = (n: string): string => join(dir, n);

  beforeAll(async () => {
    dir = demoDayDir('tally-web-evidence-');
    lines = readFileSync(file('bundle.jsonl'), 'utf8').split('\n').slice(0, -1);
    entries = lines.map((l) => JSON.parse(l) as Line);
    ctx = await launch();
  }, 120_000);

  afterAll(async () => {
    await ctx?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const load = (bundle: string, pinned: boolean): Promise<Page> => loadFiles(ctx, { bundle, dir, pinned });


  it('shows a forged ruling as a field-level diff, and "entry N" brings its detail into view', async () => {
    writeFileSync(file('forged.jsonl'), resealedForgery(lines));
    const k = entries.findIndex((e) => e.kind === 'turn' && e.ruling?.quota !== undefined);
    const cap = entries[k]!.ruling!.quota!.cap;
    const page = await load(file('forged.jsonl'), true);
    expect(await page.getAttribute('body', 'data-replayed')).toBe('diverged');
    const change = page.locator(`#replay li[data-index="${k}"] .changes li[data-path="ruling.quota.cap"]`);
    expect(await change.textContent()).toBe(`ruling.quota.cap: recorded "999999", re-derived "${cap}"`);
    // The whole values are folded away: no wall of JSON, no base64 judge response, in the visible text.
    const visible = await page.locator('#replay').innerText();
    expect(visible.length).toBeLessThan(1200);
    expect(visible).not.toContain('"quota":{');
    await page.screenshot({ path: join(ARTIFACTS, 'evidence-forged-diff.png') });
    await page.click(`#replay a[data-entry="${k}"]`);
    await page.locator('#detail h2', { hasText: new RegExp(`^Entry ${k}:`) }).waitFor();
    expect(await inView(page, '#detail h2')).toBe(true);
    expect(await page.textContent('#detail')).toContain(`ruling.quota.cap: recorded "999999", re-derived "${cap}"`);
    // Clicking it again (the hash is already this entry's) still brings it back.
    await page.evaluate('window.scrollTo(0, 0)');
    await page.click(`#replay a[data-entry="${k}"]`);
    await page.waitForFunction(`document.getElementById('detail').getBoundingClientRect().top < window.innerHeight`);
    expect(await inView(page, '#detail h2')).toBe(true);
    await page.close();
  });

  it("shows each panel judge's answer and the quorum arithmetic; frames and transitions read as fields", async () => {
    const panel = entries.findIndex((e) => (e.ruling?.verdict?.panel?.length ?? 0) === 3);
    expect(panel).toBeGreaterThan(0);
    const page = await load(file('bundle.jsonl'), true);
    expect(await page.getAttribute('body', 'data-replayed')).toBe('replayed');
    await page.evaluate(`location.hash = '#entry=${panel}'`);
    await page.locator('#detail h2', { hasText: new RegExp(`^Entry ${panel}:`) }).waitFor();
    expect(await inView(page, '#detail h2')).toBe(true);
    const rows = await page.$$eval('#judge-panel li[data-judge]', (lis) => lis.map((li) => ['.model', '.decision', '.reason', '.signature', '.timeout'].map((c) => li.querySelector(c)?.textContent ?? '')));
    expect(rows).toHaveLength(3);
    for (const [model, decision, reason, signature, timeout] of rows) {
      expect(model).toMatch(/^tally-local-/);
      expect(decision).toMatch(/^[✓✗] (ALLOW|DENY|no answer)$/);
      expect(reason!.length).toBeGreaterThan(0);
      expect(signature).toMatch(/verified \(replay re-checked it\)|^absent$|^none/);
      expect(timeout).toMatch(/answered in time|counts as DENY/);
    }
    expect(await page.textContent('#quorum')).toMatch(/^\d of 3 judges gave a valid ALLOW signed by their own key; the quorum is 2: \d [≥<] 2, so the verdict (admits|refuses)\.$/);
    expect(await page.textContent('#detail')).not.toContain('judge signature: absent');
    // The slow judge of the demo: its time-out is said, and counted as a DENY.
    const slow = lines.findIndex((l) => l.includes('"failure":"timeout"'));
    await page.evaluate(`location.hash = '#entry=${slow}'`);
    await page.locator('#detail h2', { hasText: new RegExp(`^Entry ${slow}:`) }).waitFor();
    expect(await page.textContent('#judge-panel')).toContain('timed out: counts as DENY');
    await page.screenshot({ path: join(ARTIFACTS, 'evidence-panel.png'), fullPage: true });
    // A frame: prices as fields.
    const frame = entries.findIndex((e) => e.kind === 'frame' && e.data?.prices !== undefined);
    const [market, price] = Object.entries(entries[frame]!.data!.prices!)[0]!;
    await page.evaluate(`location.hash = '#entry=${frame}'`);
    await page.locator('#detail h2', { hasText: new RegExp(`^Entry ${frame}:`) }).waitFor();
    expect(await page.textContent('#frame-fields')).toContain(`${market} ${price}`);
    // A release on a refused intent says why it is on that turn.
    const release = entries.findIndex((e) => e.ruling?.transitions?.some((t) => t.op === 'release') === true);
    await page.evaluate(`location.hash = '#entry=${release}'`);
    await page.locator('#detail h2', { hasText: new RegExp(`^Entry ${release}:`) }).waitFor();
    expect(await page.textContent('#detail')).toContain('applied from the frame this turn answers, before the turn was ruled');
    // The ⚑ mark has its legend.
    expect(await page.isVisible('#legend')).toBe(true);
    expect(await page.textContent('#legend')).toContain('⚑ n: the entry carries n runtime diagnostics');
    await page.close();
  });

  it('opens a deep link on load in view, and the detail follows the filter', async () => {
    const out = file('view.html');
    expect(tally(['view', file('bundle.jsonl'), '--checkpoint', file('receipt.note'), '--vkey', file('engine.vkey'), '--out', out]).code).toBe(0);
    const page = await ctx.newPage();
    await page.goto(`file://${out}#entry=60`);
    await page.waitForSelector('body[data-ready=true]');
    await page.locator('#detail h2', { hasText: /^Entry 60:/ }).waitFor();
    // Replay's report grows above the detail after load; the page keeps the deep-linked detail in view through it.
    await page.waitForSelector('body[data-replayed]', { timeout: 60_000 });
    expect(await inView(page, '#detail h2')).toBe(true);
    // A filter that hides the open entry: the detail no longer shows it.
    const code = entries[60]!.kind === 'turn' ? 'replayed_nonce' : 'admitted';
    await page.selectOption('#f-code', code);
    expect(await page.textContent('#detail')).toContain('Entry 60 is hidden by the filter');
    await page.close();
  });
});

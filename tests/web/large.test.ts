/**
 * A large day in Chromium: a 100,000-entry bundle (TALLY_WEB_LARGE_ENTRIES
 * scales it) verifies in the worker with progress, and the timeline is
 * virtual — the DOM holds a few dozen rows, never the day, wherever the
 * grader scrolls or jumps with the keyboard. Counts are asserted, not time.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/session/index.js';
import { ARTIFACTS, CHROMIUM, launch, PAGE, SKIP_REASON } from './browser.js';

/** The page replays days up to this size on its own (src/web/browser/replay-view.ts AUTO_REPLAY_ENTRIES, a DOM module). */
const AUTO_REPLAY_ENTRIES = 20_000;
const ENTRIES = Number(process.env['TALLY_WEB_LARGE_ENTRIES'] ?? 100_000);

/** A sealed day of exactly `entries` entries (genesis, frame/turn pairs, seal). */
async function dayOf(entries: number): Promise<Uint8Array> {
  // A seal follows a turn, never a pending frame, so a sealed day has an even number of entries; and
  // the test is of a day too large for the page to replay on its own.
  if (!Number.isSafeInteger(entries) || entries <= AUTO_REPLAY_ENTRIES || entries % 2 !== 0) {
    throw new Error(`TALLY_WEB_LARGE_ENTRIES must be an even number above ${AUTO_REPLAY_ENTRIES}, got ${entries}`);
  }
  const engine = createEngine();
  const open = await engine.open({ name: 'large day', entries });
  if (!open.ok) throw new Error(open.message);
  const sid = open.sessionId;
  const enc = new TextEncoder();
  let n = 1;
  for (let ord = -1; n < entries - 1; ord++) {
    const f = await engine.frame({ sessionId: sid, ordinal: ord, time: 1_000 + (ord + 1) * 1000 });
    if (!f.ok) throw new Error(f.message);
    n++;
    if (n >= entries - 1) break;
    const t = await engine.turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(`{"i":${ord}}`) } });
    if (!t.ok) throw new Error(t.message);
    n++;
  }
  const fin = await engine.finalize(sid);
  if (!fin.ok) throw new Error(fin.message);
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(sid)) lines.push(l);
  return encodeBundle(lines);
}

if (!CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!CHROMIUM)('a large day in the page', () => {
  let dir: string;
  let ctx: BrowserContext;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tally-web-large-'));
    writeFileSync(join(dir, 'large.jsonl'), await dayOf(ENTRIES));
    ctx = await launch();
  }, 180_000);
  afterAll(async () => {
    await ctx?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  /** At least twice the time the page took to show the whole day (set by the first test): rows being built would be in by then. */
  let settleMs = 3_000;
  /** A new tab that has been given the large day to load, and the page errors it reports. */
  const loadLarge = async () => {
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`file://${PAGE}`);
    await page.setInputFiles('#in-bundle', join(dir, 'large.jsonl'));
    await page.click('#load-files');
    return { page, errors };
  };

  it(`verifies ${ENTRIES} entries in the worker with progress, keeping the DOM small`, async () => {
    const { page, errors } = await loadLarge();
    await page.waitForSelector('body[data-ready=true]', { timeout: 170_000 });
    settleMs = Math.max(settleMs, 2 * Number(await page.getAttribute('body', 'data-page-ms')));
    expect(await page.getAttribute('#banner', 'data-state')).toBe('unpinned');
    expect(await page.textContent('#summary')).toMatch(new RegExp(`^${ENTRIES} entries`));
    // Progress: the worker reported more than once, and the bar ended full.
    expect(Number(await page.getAttribute('#progress', 'data-updates'))).toBeGreaterThan(1);
    expect(await page.evaluate("(() => { const p = document.getElementById('progress'); return p.value === p.max; })()")).toBe(true);
    // Too large to replay on its own: the page offers it instead.
    expect(await page.getAttribute('#replay', 'data-state')).toBe('idle');
    const rows = () => page.$$eval('#timeline li', (els) => els.length);
    const elements = () => page.$$eval('*', (els) => els.length);
    expect(await rows()).toBeGreaterThan(5);
    expect(await rows()).toBeLessThan(80);
    expect(await elements()).toBeLessThan(1500);
    // The keyboard reaches the end, and the DOM still holds a window of rows.
    await page.focus('#timeline li');
    await page.keyboard.press('End');
    await page.locator(`#timeline li[data-i="${ENTRIES - 1}"]`).waitFor();
    expect(await page.evaluate("document.activeElement && document.activeElement.getAttribute('data-i')")).toBe(String(ENTRIES - 1));
    expect(await rows()).toBeLessThan(80);
    await page.keyboard.press('Enter');
    await page.locator('#detail h2', { hasText: new RegExp(`^Entry ${ENTRIES - 1}: finalize`) }).waitFor();
    // A row is a compact summary; the entry's exact line comes from the worker when asked.
    await page.click('#entry-bytes summary');
    await page.locator('#entry-text', { hasText: '"kind":"finalize"' }).waitFor();
    // A deep link into the middle scrolls there.
    const mid = Math.floor(ENTRIES / 2);
    await page.evaluate(`location.hash = '#entry=${mid}'`);
    await page.locator('#detail h2', { hasText: new RegExp(`^Entry ${mid}:`) }).waitFor();
    expect(await page.getAttribute(`#timeline li[data-i="${mid}"]`, 'aria-selected')).toBe('true');
    expect(await rows()).toBeLessThan(80);
    await page.screenshot({ path: join(ARTIFACTS, 'large-day.png') });
    expect(errors, errors.join('\n')).toEqual([]);
    await page.close();
  }, 180_000);

  it('shows the verdict before the rows, and a refusal made while they are built stays', async () => {
    const { page, errors } = await loadLarge();
    await page.waitForSelector('#banner[data-state=unpinned]', { timeout: 170_000 });
    // The verdict is in; the rows (hundreds of milliseconds for this day) are not yet.
    expect(await page.textContent('#progress-text')).toBe(`checked; listing ${ENTRIES} entries…`);
    expect(await page.getAttribute('body', 'data-ready')).not.toBe('true');
    // A pin outside the one encoding, loaded now: refused, and the day whose rows were being built never comes back over it.
    await page.$eval('#pin-root', (el) => ((el as unknown as { value: string }).value = 'XYZ'));
    await page.$eval('#load-files', (el) => (el as unknown as { click(): void }).click());
    await page.waitForSelector('#banner[data-state=refused]');
    await page.waitForTimeout(settleMs);
    expect(await page.getAttribute('#banner', 'data-state')).toBe('refused');
    expect(errors, errors.join('\n')).toEqual([]);
    await page.close();
  }, 180_000);
});

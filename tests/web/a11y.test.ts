/**
 * Accessibility of the grader's desk in Chromium: axe-core (injected by the
 * test; the page's CSP is bypassed for that alone) finds no serious or
 * critical violation on the loaded demo day, on a failing day and on a
 * diverged replay; and the desk works from the keyboard alone — tab to the
 * filters, on to the entries, arrows through the rows, Enter opens one.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, demoDayDir, launch, loadFiles, PAGE, SKIP_REASON } from './browser.js';
import { resealedForgery } from './forge.js';

const AXE = resolve(import.meta.dirname, '../../node_modules/axe-core/axe.min.js');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

if (!CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!CHROMIUM)('accessibility of the desk', () => {
  let dir: string;
  let ctx: BrowserContext;
  const file = (n: string): string => join(dir, n);

  beforeAll(async () => {
    dir = demoDayDir('tally-web-a11y-');
    const good = readFileSync(file('bundle.jsonl'));
    const flipped = Buffer.from(good);
    const at = good.indexOf('"ordinal":7');
    flipped[at + 11] = flipped[at + 11]! ^ 0x01;
    writeFileSync(file('flipped.jsonl'), flipped);
    writeFileSync(file('forged.jsonl'), resealedForgery(good.toString('utf8').split('\n').slice(0, -1)));
    ctx = await launch({ bypassCSP: true });
  }, 120_000);

  afterAll(async () => {
    await ctx?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const load = (bundle: string, pinned: boolean, wait = 'body[data-ready=true]'): Promise<Page> => loadFiles(ctx, { bundle, dir, pinned, wait });


  async function serious(page: Page): Promise<string[]> {
    await page.addScriptTag({ path: AXE });
    const violations = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)')) as AxeViolation[];
    return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => JSON.stringify(n.target)).slice(0, 5).join(', ')}`);
  }

  it('has no serious or critical axe violation: idle, demo day, failing day, diverged replay', async () => {
    const idle = await ctx.newPage();
    await idle.goto(`file://${PAGE}`);
    expect(await serious(idle), 'idle page').toEqual([]);
    // The check can fail: an unlabeled image is a serious violation.
    await idle.evaluate("document.querySelector('main').append(Object.assign(document.createElement('img'), { src: 'data:,' }))");
    expect((await serious(idle)).join('\n')).toContain('image-alt');
    await idle.close();
    for (const [name, bundle, pinned, wait] of [
      ['demo day (opened entry)', file('bundle.jsonl'), true, 'body[data-replayed]'],
      ['failing day', file('flipped.jsonl'), true, 'body[data-ready=true]'],
      ['diverged replay', file('forged.jsonl'), false, 'body[data-replayed]'],
    ] as const) {
      const page = await load(bundle, pinned, wait);
      if (name.startsWith('demo')) {
        await page.focus('#timeline li');
        await page.keyboard.press('Enter');
        await page.waitForSelector('#detail h2');
      }
      expect(await serious(page), name).toEqual([]);
      await page.close();
    }
  });

  it('works from the keyboard: tab to the filters, arrows through the rows, Enter opens', async () => {
    const page = await load(file('bundle.jsonl'), true);
    const focused = () => page.evaluate('document.activeElement ? (document.activeElement.getAttribute("data-i") || document.activeElement.id || document.activeElement.tagName) : ""') as Promise<string>;
    // Tab from the top of the page until the agent filter has focus (the order follows the page).
    await page.focus('body');
    const seen: string[] = [];
    for (let i = 0; i < 40 && (await focused()) !== 'f-agent'; i++) {
      await page.keyboard.press('Tab');
      seen.push(await focused());
    }
    expect(await focused(), `tab order: ${seen.join(' → ')}`).toBe('f-agent');
    // Tab on through the filters to the list.
    await page.keyboard.press('Tab'); // action
    await page.keyboard.press('Tab'); // code
    expect(await focused()).toBe('f-code');
    for (let i = 0; i < 6 && !/^[0-9]+$/.test(await focused()); i++) await page.keyboard.press('Tab');
    expect(await focused()).toBe('0');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('j');
    expect(await focused()).toBe('3');
    await page.keyboard.press('ArrowUp');
    expect(await focused()).toBe('2');
    await page.keyboard.press('Enter');
    await page.locator('#detail h2', { hasText: /^Entry 2:/ }).waitFor();
    expect(page.url()).toContain('#entry=2');
    expect(await page.getAttribute('#timeline li[data-i="2"]', 'aria-selected')).toBe('true');
    // End and Home scroll the list, and the rows in view are redrawn on the next animation frame
    // (focus kept on the cursor's row), so focus is read once that frame has run.
    await page.keyboard.press('End');
    await expect.poll(focused, { timeout: 5000 }).toBe('99');
    await page.keyboard.press('Home');
    await expect.poll(focused, { timeout: 5000 }).toBe('0');
    // The replay's report refreshes the open entry's detail and leaves the cursor and focus where the keys put them
    // (it used to re-open entry 2, moving focus back to it whenever the replay ended after these keys).
    await page.waitForSelector('body[data-replayed]');
    expect(await focused()).toBe('0');
    await page.locator('#detail h2', { hasText: /^Entry 2:/ }).waitFor();
    await page.close();
  });
});

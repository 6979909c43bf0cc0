/**
 * Incremental live follow. The server side: `GET /sessions/<id>/bundle?from=N
 * [&limit=M]` answers exactly entries N… (capped), with the same token rule
 * as the whole bundle. The page side (Chromium via playwright-core): while
 * turns land, each poll asks only for the entries after the ones it has
 * (`from` = the entries received so far), the bytes fetched add up to the
 * bundle exactly once, the banner stays pinned, and after the seal the page
 * stops polling with the CLI's receipt root.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveSession, newEngineKey, rpc, startServer, TOKENS, type ServerProc } from '../server/helpers.js';
import { ARTIFACTS, CHROMIUM, SKIP_REASON, launch } from './browser.js';

const TALLY = resolve(import.meta.dirname, '../../dist/cli/main.js');

const dir = mkdtempSync(join(tmpdir(), 'tally-web-follow-'));
let srv: ServerProc;

beforeAll(async () => {
  newEngineKey(join(dir, 'served.key'));
  srv = await startServer({ db: 'memory:', args: ['--key', join(dir, 'served.key')] });
}, 60_000);

afterAll(async () => {
  await srv?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const get = (path: string, token?: string) => fetch(`${srv.url}${path}`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });

describe('GET /sessions/:id/bundle?from=N', () => {
  it('answers exactly the entries from N, capped by limit, under the bundle token rule', async () => {
    const { sid, step } = await liveSession(srv.url, 'ranged');
    for (let i = 0; i < 4; i++) await step();
    const whole = await (await get(`/sessions/${sid}/bundle`, TOKENS.auditor)).text();
    const lines = whole.split('\n').slice(0, -1);
    expect(lines.length).toBe(9);
    const ranged = await get(`/sessions/${sid}/bundle?from=2&limit=3`, TOKENS.auditor);
    expect(ranged.status).toBe(200);
    expect(ranged.headers.get('content-type')).toBe('application/jsonl');
    expect(await ranged.text()).toBe(lines.slice(2, 5).map((l) => `${l}\n`).join(''));
    expect(await (await get(`/sessions/${sid}/bundle?from=5`, TOKENS.auditor)).text()).toBe(lines.slice(5).map((l) => `${l}\n`).join(''));
    const past = await get(`/sessions/${sid}/bundle?from=9`, TOKENS.auditor);
    expect(past.status).toBe(200);
    expect(await past.text()).toBe('');
    for (const bad of ['from=-1', 'from=x', 'from=1&limit=0', 'limit=3']) expect((await get(`/sessions/${sid}/bundle?${bad}`, TOKENS.auditor)).status, bad).toBe(422);
    expect((await get(`/sessions/${sid}/bundle?from=0`)).status).toBe(401);
    expect((await get(`/sessions/${'a'.repeat(64)}/bundle?from=0`, TOKENS.auditor)).status).toBe(404);
  });
});

if (!CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!CHROMIUM)('following a live day in Chromium', () => {
  let ctx: BrowserContext;
  beforeAll(async () => {
    ctx = await launch();
  }, 60_000);
  afterAll(async () => {
    await ctx?.close();
  });

  it('fetches only new entries each poll, stays pinned, and stops at the seal', async () => {
    const { sid, step } = await liveSession(srv.url, 'followed day');
    await step();
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    const fetched: { from: string | null; bytes: number }[] = [];
    page.on('response', async (r) => {
      const u = new URL(r.url());
      if (!u.pathname.endsWith('/bundle')) return;
      fetched.push({ from: u.searchParams.get('from'), bytes: (await r.body()).length });
    });
    await page.goto(`${srv.url}/`);
    await page.fill('#srv-session', sid);
    await page.fill('#srv-token', TOKENS.auditor);
    // The grader's own copy of the engine key (here fetched by the test: out of band for the page).
    await page.fill('#in-key-text', (await (await fetch(`${srv.url}/verifier-key`, { headers: { authorization: `Bearer ${TOKENS.auditor}` } })).text()).trim());
    await page.click('#load-server');
    await page.locator('#summary', { hasText: /^3 entries/ }).waitFor();
    expect(await page.getAttribute('#banner', 'data-state')).toBe('pinned');
    await step();
    await page.locator('#summary', { hasText: /^5 entries/ }).waitFor({ timeout: 30_000 });
    await step();
    await step();
    await page.locator('#summary', { hasText: /^9 entries/ }).waitFor({ timeout: 30_000 });
    expect(await page.getAttribute('#banner', 'data-state')).toBe('pinned');
    const fin = await rpc(srv.url, TOKENS.runtime, 'session/finalize', { sessionId: sid });
    const receipt = fin.body.result!['receipt'] as { receiptRoot: string };
    await page.locator('#srv-status', { hasText: 'the day is sealed: following stopped' }).waitFor({ state: 'attached', timeout: 30_000 });
    expect(await page.getAttribute('#banner', 'data-state')).toBe('pinned');
    expect(await page.textContent('#banner-root')).toBe(receipt.receiptRoot);
    expect(await page.textContent('#banner')).not.toContain('not sealed');
    // The sealed day replays in the page once following ends.
    await page.waitForSelector('body[data-replayed=replayed]');
    await page.screenshot({ path: join(ARTIFACTS, 'follow-sealed.png'), fullPage: true });
    const afterSeal = fetched.length;
    await page.waitForTimeout(2000);
    expect(fetched.length, 'no polling after the seal').toBe(afterSeal);

    // Every request named a start; each start is the entries received before it; the bytes add up to the bundle once.
    const whole = Buffer.from(await (await get(`/sessions/${sid}/bundle`, TOKENS.auditor)).arrayBuffer());
    let entries = 0;
    let bytes = 0;
    for (const f of fetched) {
      expect(f.from).toBe(String(entries));
      const piece = whole.subarray(bytes, bytes + f.bytes);
      entries += piece.filter((b) => b === 0x0a).length;
      bytes += f.bytes;
    }
    expect(bytes).toBe(whole.length);
    expect(entries).toBe(10);
    writeFileSync(join(dir, 'followed.jsonl'), whole);
    const cli = JSON.parse(spawnSync(process.execPath, [TALLY, 'verify', join(dir, 'followed.jsonl'), '--json'], { encoding: 'utf8' }).stdout) as { receiptRoot: string };
    expect(cli.receiptRoot).toBe(receipt.receiptRoot);
    expect(errors, errors.join('\n')).toEqual([]);
    await page.close();
  });

  it('a live day that fails lists the bad entry and every later line fetched, marked not verified, and stops', async () => {
    const { sid, step } = await liveSession(srv.url, 'followed failing day');
    await step();
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // A hostile engine: from the second poll on, the first line it serves has one hex digit changed (still JSON).
    let polls = 0;
    let served = '';
    await page.route(/\/bundle\?from=/, async (route) => {
      const res = await route.fetch();
      let body = await res.text();
      if (polls++ === 1 && body.length > 0) body = body.replace(/[0-9a-f]{64}/, (hex) => (hex[0] === 'a' ? 'b' : 'a') + hex.slice(1));
      served += body;
      await route.fulfill({ response: res, body });
    });
    await page.goto(`${srv.url}/`);
    await page.fill('#srv-session', sid);
    await page.fill('#srv-token', TOKENS.auditor);
    await page.click('#load-server');
    await page.locator('#summary', { hasText: /^3 entries/ }).waitFor();
    await step();
    await step();
    await step();
    await page.locator('#srv-status', { hasText: 'stopped: the day failed verification' }).waitFor({ state: 'attached', timeout: 30_000 });
    expect(await page.getAttribute('#banner', 'data-state')).toBe('failed-entry');
    const lines = served.split('\n').slice(0, -1);
    expect(lines.length).toBeGreaterThan(4);
    // Entry 3 (the first line of the tampered poll) fails; it and every later line fetched are listed, not verified.
    expect(await page.textContent('#summary')).toMatch(new RegExp(`^3 entries .* · ${lines.length - 3} more lines not verified$`));
    expect(await page.textContent('#pager')).toBe(`${lines.length} entries`);
    expect(await page.textContent('#unverified')).toContain('Entry 3 and every entry after it: not verified');
    for (const i of [3, lines.length - 1]) {
      await page.evaluate(`location.hash = '#entry=${i}'`);
      await page.locator('#detail h2', { hasText: new RegExp(`^Entry ${i}:`) }).waitFor();
      expect(await page.$eval(`#row-${i}`, (li) => li.querySelector('.code')?.textContent ?? '')).toBe('⚠ not verified');
      expect(await page.textContent('#detail')).toContain(i === 3 ? 'the first entry that failed verification' : 'after entry 3, which failed verification');
      await page.click('#entry-bytes summary');
      await expect.poll(() => page.textContent('#entry-text')).toBe(lines[i]);
    }
    await page.screenshot({ path: join(ARTIFACTS, 'follow-failed.png'), fullPage: true });
    expect(errors, errors.join('\n')).toEqual([]);
    await page.close();
  });
});

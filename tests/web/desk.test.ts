/**
 * The grader's desk in a real browser (Debian's Chromium via playwright-core):
 * the demo day is pinned with the CLI's receipt root; tampered bundles fail at
 * the same entry with the same code as `tally verify --json`; a receipt
 * downloaded from the page verifies with `tally verify-proof`; hostile bundle
 * text is shown as text; a served session is followed while turns land.
 * Screenshots go to test-artifacts/web (gitignored).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/session/index.js';
import { encodeBundle } from '../../src/codec/index.js';
import { liveSession, newEngineKey, startServer, TOKENS, type ServerProc } from '../server/helpers.js';
import { ARTIFACTS, CHROMIUM, demoDayDir, launch, PAGE, SKIP_REASON, tally } from './browser.js';
import { resealedForgery } from './forge.js';

if (!CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!CHROMIUM)("the grader's desk in Chromium", () => {
  let dir: string;
  let ctx: BrowserContext;
  const file = (n: string): string => join(dir, n);

  beforeAll(async () => {
    dir = demoDayDir('tally-web-');
    ctx = await launch();
  }, 120_000);

  afterAll(async () => {
    await ctx?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Opens the built page from disk and verifies the given files through the pickers. */
  async function verifyInPage(bundle: string, pinned: boolean | string = true, shot?: string): Promise<Page> {
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(`file://${PAGE}`);
    await page.setInputFiles('#in-bundle', bundle);
    if (pinned) {
      await page.setInputFiles('#in-checkpoint', typeof pinned === 'string' ? pinned : file('receipt.note'));
      await page.setInputFiles('#in-key', file('engine.vkey'));
    }
    await page.click('#load-files');
    await page.waitForSelector('body[data-ready=true]', { timeout: 60_000 });
    if (shot) await page.screenshot({ path: join(ARTIFACTS, shot), fullPage: true });
    expect(errors, errors.join('\n')).toEqual([]);
    return page;
  }

  it('shows the demo day as verified and pinned, with the CLI receipt root', async () => {
    const cli = JSON.parse(tally(['verify', file('bundle.jsonl'), '--vkey', file('engine.vkey'), '--checkpoint', file('receipt.note'), '--json']).stdout) as { receiptRoot: string };
    const page = await verifyInPage(file('bundle.jsonl'), true, 'demo-pinned-1280.png');
    expect(await page.getAttribute('#banner', 'data-state')).toBe('pinned');
    expect(await page.textContent('#banner strong')).toBe('Valid, pinned');
    expect(await page.textContent('#banner-root')).toBe(cli.receiptRoot);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(400); // the charts redraw for the new width
    await page.screenshot({ path: join(ARTIFACTS, 'demo-pinned-phone.png'), fullPage: true });
    await page.close();
    // A tlog-proof pins too: its signed checkpoint is the receipt's.
    const byProof = await verifyInPage(file('bundle.jsonl'), file('proof.tlog-proof'));
    expect(await byProof.getAttribute('#banner', 'data-state')).toBe('pinned');
    expect(await byProof.textContent('#banner-root')).toBe(cli.receiptRoot);
    await byProof.close();
    const bare = await verifyInPage(file('bundle.jsonl'), false);
    expect(await bare.getAttribute('#banner', 'data-state')).toBe('unpinned');
    expect(await bare.textContent('#banner-root')).toBe(cli.receiptRoot);
    await bare.close();
  });

  it('fails tampered bundles at the same entry with the same code as tally verify', async () => {
    const good = readFileSync(file('bundle.jsonl'));
    const lines = good.toString('utf8').split('\n').slice(0, -1);
    const flipped = Buffer.from(good);
    const at = good.indexOf('"ordinal":7');
    flipped[at + 11] = flipped[at + 11]! ^ 0x01; // "7" → "6"
    const dropped = Buffer.from([...lines.slice(0, 20), ...lines.slice(21)].map((l) => `${l}\n`).join(''));
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), good]);
    const variants: Record<string, Buffer> = { flipped, dropped, bom, forged: resealedForgery(lines) };
    for (const [name, bytes] of Object.entries(variants)) {
      const p = file(`${name}.jsonl`);
      writeFileSync(p, bytes);
      const r = tally(['verify', p, '--vkey', file('engine.vkey'), '--checkpoint', file('receipt.note'), '--json']);
      expect(r.code, name).toBe(1);
      const cli = JSON.parse(r.stdout) as { stage: string; index?: number; code: string };
      const page = await verifyInPage(p, true, `tampered-${name}.png`);
      expect(await page.getAttribute('#banner', 'data-code'), name).toBe(cli.code);
      if (cli.stage === 'chain') {
        expect(await page.getAttribute('#banner', 'data-state'), name).toBe('failed-entry');
        expect(await page.getAttribute('#banner', 'data-index'), name).toBe(String(cli.index));
      } else {
        expect(await page.getAttribute('#banner', 'data-state'), name).toBe('failed-pin');
      }
      await page.close();
    }
    // The forgery is self-consistent: only the signed checkpoint catches it.
    expect(tally(['verify', file('forged.jsonl')]).code).toBe(0);
  });

  it('filters, opens an entry by deep link, and downloads a receipt tally verify-proof accepts', async () => {
    const page = await verifyInPage(file('bundle.jsonl'));
    await page.selectOption('#f-code', 'replayed_nonce');
    const rows = await page.$$eval('#timeline li', (els) => els.map((e) => e.getAttribute('data-i')));
    expect(rows.length).toBe(1);
    await page.focus('#timeline li');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#download-receipt');
    const index = Number(rows[0]);
    expect(await page.textContent('#detail h2')).toContain(`Entry ${index}`);
    expect(page.url()).toContain(`#entry=${index}`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-receipt')]);
    const saved = file('from-page.tlog-proof');
    await download.saveAs(saved);
    // The same proof, shown: its hashes are the receipt's proof lines.
    await page.click('#show-proof');
    await page.locator('#receipt-status ol.proof').waitFor();
    const shown = await page.$$eval('#receipt-status ol.proof li', (els) => els.map((e) => e.textContent ?? ''));
    const lines = readFileSync(saved, 'utf8').split('\n');
    const proofLines = lines.slice(lines.findIndex((l) => l.startsWith('index ')) + 1, lines.indexOf(''));
    expect(shown.map((x) => Buffer.from(x, 'hex').toString('base64'))).toEqual(proofLines);
    const r = tally(['verify-proof', saved, '--vkey', file('engine.vkey'), '--checkpoint', file('receipt.note'), '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { index: number }).index).toBe(index);
    // A deep link opens its entry after verification. (No string evaluation in the page: its CSP forbids eval.)
    await page.selectOption('#f-code', '');
    await page.evaluate("location.hash = '#entry=4'");
    await page.locator('#detail h2', { hasText: /^Entry 4:/ }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'entry-detail.png'), fullPage: true });
    await page.close();
  });

  it('renders hostile bundle text as text, never as markup', async () => {
    const evil = '<img src=x onerror="window.__pwned=1"></script><script>window.__pwned=2</script>';
    const p = file('hostile.jsonl');
    writeFileSync(p, await hostileDay(evil));
    const page = await verifyInPage(p, false, 'hostile.png');
    await page.evaluate("location.hash = '#entry=0'");
    await page.locator('#detail h2', { hasText: /^Entry 0:/ }).waitFor();
    expect(await page.textContent('#detail')).toContain(evil);
    for (const i of [2, 3]) {
      await page.evaluate(`location.hash = '#entry=${i}'`);
      await page.locator('#detail h2', { hasText: new RegExp(`^Entry ${i}:`) }).waitFor();
      expect(await page.textContent('#detail'), `entry ${i}`).toContain(evil);
    }
    expect(await page.textContent('#timeline')).toContain(evil);
    expect(await page.$$('img')).toHaveLength(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    await page.close();
    // tally view embeds the same bytes; the data block cannot be closed by the text.
    const out = file('hostile.html');
    expect(tally(['view', p, '--out', out]).code).toBe(0);
    const viewed = await ctx.newPage();
    await viewed.goto(`file://${out}`);
    await viewed.waitForSelector('body[data-ready=true]');
    expect(await viewed.getAttribute('#banner', 'data-state')).toBe('unpinned');
    expect(await viewed.$$('img')).toHaveLength(0);
    await viewed.close();
  });

  it('is served by tally serve under a strict CSP and follows a live session', async () => {
    newEngineKey(file('served.key'));
    const srv: ServerProc = await startServer({ db: 'memory:', args: ['--key', file('served.key')] });
    try {
      const res = await fetch(`${srv.url}/`);
      expect(res.status).toBe(200);
      const csp = res.headers.get('content-security-policy')!;
      // Scripts by hash only; 'wasm-unsafe-eval' admits WebAssembly compilation (the page's SHA-256), never JavaScript eval.
      expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+' 'wasm-unsafe-eval'(;|$)/);
      expect(csp).toContain("connect-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toMatch(/'unsafe-eval'/);
      const { sid, step } = await liveSession(srv.url, 'live web day');
      await step();
      const page = await ctx.newPage();
      const errors: string[] = [];
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      await page.goto(`${srv.url}/`);
      await page.fill('#srv-session', sid);
      await page.fill('#srv-token', TOKENS.auditor);
      // The grader's own copy of the engine key (here fetched by the test: out of band for the page).
      await page.fill('#in-key-text', (await (await fetch(`${srv.url}/verifier-key`, { headers: { authorization: `Bearer ${TOKENS.auditor}` } })).text()).trim());
      await page.click('#load-server');
      await page.locator('#summary', { hasText: /^3 entries/ }).waitFor();
      expect(await page.getAttribute('#banner', 'data-state')).toBe('pinned');
      await step();
      await step();
      await page.locator('#summary', { hasText: /^7 entries/ }).waitFor({ timeout: 30_000 });
      expect(await page.getAttribute('#banner', 'data-state')).toBe('pinned');
      await page.screenshot({ path: join(ARTIFACTS, 'live.png'), fullPage: true });
      expect(errors, errors.join('\n')).toEqual([]);
      await page.close();
    } finally {
      await srv.stop();
    }
  });
});

/** A sealed day whose spec name, frame notices and authored intent fields are all `evil`. */
async function hostileDay(evil: string): Promise<Uint8Array> {
  const engine = createEngine();
  const open = await engine.open({ name: evil, day: '2026-12-01' });
  if (!open.ok) throw new Error(open.message);
  const sid = open.sessionId;
  const f = await engine.frame({ sessionId: sid, ordinal: -1, time: 1_000, data: { notices: [{ probe: evil, outcome: evil, ordinal: 0 }], fills: [{ market: evil, size: '1', side: 'long', action: 'open' }] } });
  if (!f.ok) throw new Error(f.message);
  const bytes = new TextEncoder().encode(JSON.stringify({ intent: { agent_id: evil, action: evil, market: evil, nonce: evil, size: evil }, context: evil }));
  const t = await engine.turn({ sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes } });
  if (!t.ok) throw new Error(t.message);
  const fin = await engine.finalize(sid, { notices: [{ probe: evil, outcome: evil }] });
  if (!fin.ok) throw new Error(fin.message);
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(sid)) lines.push(l);
  return encodeBundle(lines);
}

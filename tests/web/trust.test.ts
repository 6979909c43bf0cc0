/**
 * Whose key the desk trusts, in real Chromium (issue 29, "trust first"):
 * server mode pins only to a key the grader supplies, and a day checked
 * against the key the engine itself served says so and is never green;
 * "pinned" means what `tally verify --root` means; a refused pin value, a
 * wrong token and any HTTP failure are said in the banner; below a witness
 * quorum the day stays browsable, unpinned; a failed day marks what is not
 * verified and draws nothing from it without saying so.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toHex } from '../../src/protocol/index.js';
import { generateEngineKey } from '../../src/receipt/keys/index.js';
import { addSignatureLines, cosignatureLine, cosignerKeyFrom } from '../../src/witness/index.js';
import { liveSession, newEngineKey, startServer, TOKENS, type ServerProc } from '../server/helpers.js';
import { ARTIFACTS, CHROMIUM, demoDayDir, launch, PAGE, SKIP_REASON, tally } from './browser.js';
import { resealedForgery } from './forge.js';

if (!CHROMIUM) console.warn(SKIP_REASON);

/** The banner's computed background and border colours (to assert "never green"). */
async function bannerColours(page: Page): Promise<{ bg: string; border: string; ok: string; okBg: string }> {
  return (await page.evaluate(`(() => {
    const b = document.getElementById('banner');
    const cs = getComputedStyle(b);
    const probe = document.createElement('div');
    document.body.append(probe);
    probe.style.color = 'var(--ok)';
    probe.style.backgroundColor = 'var(--ok-bg)';
    const p = getComputedStyle(probe);
    const out = { bg: cs.backgroundColor, border: cs.borderTopColor, ok: p.color, okBg: p.backgroundColor };
    probe.remove();
    return out;
  })()`)) as { bg: string; border: string; ok: string; okBg: string };
}

describe.skipIf(!CHROMIUM)('whose key the desk trusts (Chromium)', () => {
  let dir: string;
  let ctx: BrowserContext;
  let srv: ServerProc;
  const file = (n: string): string => join(dir, n);

  beforeAll(async () => {
    dir = demoDayDir('tally-web-trust-');
    ctx = await launch();
    newEngineKey(file('served.key'));
    srv = await startServer({ db: 'memory:', args: ['--key', file('served.key')] });
  }, 120_000);

  afterAll(async () => {
    await ctx?.close();
    await srv?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(url = `file://${PAGE}`): Promise<{ page: Page; errors: string[] }> {
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    return { page, errors };
  }

  async function fromEngine(sid: string, o: { token?: string; key?: string; follow?: boolean }): Promise<{ page: Page; errors: string[] }> {
    const r = await open(`${srv.url}/`);
    await r.page.fill('#srv-session', sid);
    await r.page.fill('#srv-token', o.token ?? TOKENS.auditor);
    if (o.key !== undefined) await r.page.fill('#in-key-text', o.key);
    await r.page.setChecked('#srv-follow', o.follow ?? false);
    await r.page.click('#load-server');
    return r;
  }

  it('server mode: the served key is never green; the key the grader supplies pins; another key refuses', async () => {
    const { sid, step } = await liveSession(srv.url, 'trust day');
    await step();
    await step();
    const served = (await (await fetch(`${srv.url}/verifier-key`, { headers: { authorization: `Bearer ${TOKENS.auditor}` } })).text()).trim();
    for (const follow of [false, true]) {
      const { page, errors } = await fromEngine(sid, { follow });
      await page.waitForSelector('#banner[data-state=served]', { timeout: 30_000 });
      expect((await page.textContent('#banner'))!.toLowerCase()).toContain('pinned to the key this engine served, not one you supplied');
      expect(await page.getAttribute('#banner', 'data-key')).toBe('served');
      const c = await bannerColours(page);
      expect(c.bg).not.toBe(c.okBg);
      expect(c.border).not.toBe(c.ok);
      if (!follow) await page.screenshot({ path: join(ARTIFACTS, 'trust-served-key.png') });
      expect(errors).toEqual([]);
      await page.close();
    }
    // The key the grader obtained out of band (here: the same key, typed in): pinned, green.
    const mine = await fromEngine(sid, { key: served });
    await mine.page.waitForSelector('#banner[data-state=pinned]', { timeout: 30_000 });
    expect(await mine.page.getAttribute('#banner', 'data-key')).toBe('supplied');
    expect(await mine.page.textContent('#banner strong')).toBe('Valid, pinned');
    const c = await bannerColours(mine.page);
    expect(c.bg).toBe(c.okBg);
    await mine.page.close();
    // A key the engine did not sign with (the demo's): the engine's own signature is not accepted.
    const other = readFileSync(file('engine.vkey'), 'utf8').trim();
    const hostile = await fromEngine(sid, { key: other });
    await hostile.page.waitForSelector('#banner[data-state=failed-pin]', { timeout: 30_000 });
    expect(await hostile.page.textContent('#banner strong')).toContain('Invalid');
    await hostile.page.close();
  });

  it('a wrong token and other HTTP failures say so in the banner, never "Verifying…" forever', async () => {
    const { sid, step } = await liveSession(srv.url, 'token day');
    await step();
    for (const follow of [false, true]) {
      const { page } = await fromEngine(sid, { token: 'not-a-token', follow });
      await page.waitForSelector('#banner[data-state=http]', { timeout: 30_000 });
      expect(await page.textContent('#banner')).toContain('unauthorized: check the auditor token');
      if (follow) await page.screenshot({ path: join(ARTIFACTS, 'trust-wrong-token.png') });
      await page.close();
    }
    const missing = await fromEngine('b'.repeat(64), { follow: false });
    await missing.page.waitForSelector('#banner[data-state=http]', { timeout: 30_000 });
    expect(await missing.page.textContent('#banner')).toContain('not found');
    await missing.page.close();
  });

  it('"pinned" is what tally verify --root says; a refused pin value is shown in the banner', async () => {
    const cli = tally(['verify', file('bundle.jsonl'), '--json']);
    const root = (JSON.parse(cli.stdout) as { receiptRoot: string }).receiptRoot;
    const words = tally(['verify', file('bundle.jsonl'), '--root', root]).stdout;
    expect(words).toContain(`valid, pinned to receipt root ${root}`);
    const { page } = await open();
    await page.setInputFiles('#in-bundle', file('bundle.jsonl'));
    await page.fill('#pin-root', root);
    await page.click('#load-files');
    await page.waitForSelector('body[data-ready=true]', { timeout: 60_000 });
    expect(await page.getAttribute('#banner', 'data-state')).toBe('pinned');
    expect(await page.textContent('#banner strong')).toBe('Valid, pinned');
    expect(await page.textContent('#banner')).toContain(`pinned to receipt root ${root}`);
    // Uppercase hex, a wrong length: refused, in the banner, nothing checked.
    for (const [bad, says] of [
      [root.toUpperCase(), 'uppercase hex'],
      [root.slice(2), '62 characters of hex, not 64'],
    ] as const) {
      await page.evaluate("document.getElementById('load').open = true; document.body.removeAttribute('data-ready')");
      await page.fill('#pin-root', bad);
      await page.click('#load-files');
      await page.waitForSelector('#banner[data-state=refused]');
      const text = (await page.textContent('#banner'))!;
      expect(text).toContain('Not checked: the pinned receipt root refused');
      expect(text).toContain(says);
      expect(await page.textContent('#summary')).toBe('0 entries · 0 frames · 0 turns: 0 admitted, 0 refused, 0 stand-downs, 0 notes · 0 with diagnostics');
    }
    await page.screenshot({ path: join(ARTIFACTS, 'trust-refused-pin.png') });
    await page.close();
  });

  it('below a witness quorum the day stays browsable as unpinned, the quorum said once', async () => {
    const w1 = cosignerKeyFrom(generateEngineKey('w1.example'));
    const w2 = cosignerKeyFrom(generateEngineKey('w2.example'));
    const note = readFileSync(file('receipt.note'), 'utf8');
    writeFileSync(file('one.note'), addSignatureLines(note, [cosignatureLine(note.slice(0, note.indexOf('\n\n') + 1), w1, 1_800_000_000)]));
    writeFileSync(file('all.policy'), `witness w1.example ${toHex(w1.publicKey)}\nwitness w2.example ${toHex(w2.publicKey)}\ngroup both all w1.example w2.example\nquorum both\n`);
    const cli = tally(['verify', file('bundle.jsonl'), '--json']);
    const size = (JSON.parse(cli.stdout) as { size: number }).size;
    const { page } = await open();
    await page.setInputFiles('#in-bundle', file('bundle.jsonl'));
    await page.setInputFiles('#in-checkpoint', file('one.note'));
    await page.setInputFiles('#in-key', file('engine.vkey'));
    await page.setInputFiles('#in-policy', file('all.policy'));
    await page.click('#load-files');
    await page.waitForSelector('body[data-ready=true]', { timeout: 60_000 });
    expect(await page.getAttribute('#banner', 'data-state')).toBe('failed-pin');
    expect(await page.getAttribute('#banner', 'data-code')).toBe('below-quorum');
    const text = (await page.textContent('#banner'))!;
    expect(text.match(/quorum 2 not met/g)).toHaveLength(1);
    expect(text).not.toContain('witness quorum not met');
    expect(await page.textContent('#banner-unpinned')).toContain(`${size} entries`);
    expect(await page.textContent('#summary')).toMatch(new RegExp(`^${size} entries`));
    expect(await page.$$('#timeline li')).not.toHaveLength(0);
    expect(await page.isVisible('#unverified')).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'trust-below-quorum.png'), fullPage: true });
    await page.close();
  });

  it('a failed day marks the first bad entry and all after it, and draws nothing from them without saying so', async () => {
    const lines = readFileSync(file('bundle.jsonl'), 'utf8').split('\n').slice(0, -1);
    writeFileSync(file('dropped.jsonl'), [...lines.slice(0, 20), ...lines.slice(21)].map((l) => `${l}\n`).join(''));
    const cli = JSON.parse(tally(['verify', file('dropped.jsonl'), '--json']).stdout) as { index: number };
    const { page } = await open();
    await page.setInputFiles('#in-bundle', file('dropped.jsonl'));
    await page.click('#load-files');
    await page.waitForSelector('body[data-ready=true]', { timeout: 60_000 });
    expect(await page.getAttribute('#banner', 'data-state')).toBe('failed-entry');
    expect(await page.textContent('#unverified')).toContain(`Entry ${cli.index} and every entry after it: not verified`);
    expect(await page.textContent('#chart-note')).toContain(`Entry ${cli.index} and every entry after it`);
    // Every line is listed: entries before the bad one as verified, the bad one and all after it marked (icon and word).
    const kept = lines.length - 1;
    expect(await page.textContent('#pager')).toBe(`${kept} entries`);
    expect(await page.textContent('#summary')).toMatch(new RegExp(`^${cli.index} entries .* · ${kept - cli.index} more lines not verified$`));
    const row = async (i: number): Promise<{ cls: string; code: string; what: string }> => {
      await page.evaluate(`location.hash = '#entry=${i}'`);
      await page.locator('#detail h2', { hasText: new RegExp(`^Entry ${i}:`) }).waitFor();
      return page.$eval(`#row-${i}`, (li) => ({ cls: li.className, code: li.querySelector('.code')?.textContent ?? '', what: li.querySelector('.what')?.textContent ?? '' }));
    };
    const before = await row(cli.index - 1);
    expect(before.cls).not.toContain('unverified');
    expect(before.code).not.toContain('not verified');
    const bad = await row(cli.index);
    expect(bad.cls).toContain('unverified');
    expect(bad.code).toBe('⚠ not verified');
    expect(bad.what).toMatch(/^claims: (turn|frame)/);
    expect(await page.textContent('#detail')).toContain('the first entry that failed verification');
    expect(await page.isVisible('#detail .unverified-mark')).toBe(true);
    await page.click('#entry-bytes summary');
    await expect.poll(() => page.textContent('#entry-text')).toBe(lines[21]);
    const last = await row(kept - 1);
    expect(last.cls).toContain('unverified');
    expect(last.code).toBe('⚠ not verified');
    expect(await page.textContent('#detail')).toContain(`after entry ${cli.index}, which failed verification`);
    // Nothing drawn from them: the rulings chart counts only the turns before the bad entry, its x axis ends at the last verified frame.
    const verified = lines.slice(0, 20).map((l) => JSON.parse(l) as { kind: string; time?: number });
    expect(cli.index).toBe(20);
    const rulings = await page.$eval('#charts figure[data-title^="Rulings"]', (f) => ({ legend: [...f.querySelectorAll('.u-legend .u-series .u-label')].map((e) => e.textContent ?? '').filter((t) => / \d+$/.test(t)), range: f.getAttribute('data-x-range') ?? '' }));
    const counted = rulings.legend.reduce((n, l) => n + Number(/ (\d+)$/.exec(l)?.[1] ?? 'NaN'), 0);
    expect(counted, rulings.legend.join('; ')).toBe(verified.filter((e) => e.kind === 'turn').length);
    const lastTime = Math.max(...verified.filter((e) => e.kind === 'frame').map((e) => e.time!));
    expect(Number(rulings.range.split(',')[1])).toBeLessThanOrEqual(lastTime / 1000 + 1800);
    expect(await page.textContent('#chart-note')).toContain('nothing is drawn from them');
    expect(await page.textContent('#legend')).toContain('⚠ not verified: a line from a failed entry on');
    await page.screenshot({ path: join(ARTIFACTS, 'trust-failed-entry.png'), fullPage: true });
    await page.close();
    // A forged, self-consistent day against the signed checkpoint: listed, said to be unpinned, and replayed.
    writeFileSync(file('forged.jsonl'), resealedForgery(lines));
    const f = await open();
    await f.page.setInputFiles('#in-bundle', file('forged.jsonl'));
    await f.page.setInputFiles('#in-checkpoint', file('receipt.note'));
    await f.page.setInputFiles('#in-key', file('engine.vkey'));
    await f.page.click('#load-files');
    await f.page.waitForSelector('body[data-replayed]', { timeout: 60_000 });
    expect(await f.page.getAttribute('#banner', 'data-state')).toBe('failed-pin');
    expect(await f.page.textContent('#chart-note')).toContain('Not pinned');
    expect(await f.page.getAttribute('body', 'data-replayed')).toBe('diverged');
    await f.page.screenshot({ path: join(ARTIFACTS, 'trust-forged.png'), fullPage: true });
    await f.page.close();
  });
});

/**
 * Witness quorum in the page (Chromium via playwright-core): the demo's signed
 * checkpoint cosigned by real witness keys (the library's `cosignerKeyFrom`,
 * what `tally witness keygen` writes) and a Sigsum-format policy. The banner
 * says "witnessed k of n (quorum q)" when the one rule (`checkWitnessPolicy`)
 * is met, and refuses "pinned by quorum" — with the code `tally verify
 * --policy --json` gives — when it is not, or when a cosignature is forged.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toHex } from '../../src/protocol/index.js';
import { generateEngineKey } from '../../src/receipt/keys/index.js';
import { addSignatureLines, cosignatureLine, cosignerKeyFrom } from '../../src/witness/index.js';
import { ARTIFACTS, CHROMIUM, demoDayDir, launch, PAGE, SKIP_REASON, tally } from './browser.js';

if (!CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!CHROMIUM)('witness quorum in the page', () => {
  let dir: string;
  let ctx: BrowserContext;
  const file = (n: string): string => join(dir, n);
  const w1 = cosignerKeyFrom(generateEngineKey('w1.example'));
  const w2 = cosignerKeyFrom(generateEngineKey('w2.example'));
  const witnesses = `witness w1.example ${toHex(w1.publicKey)}\nwitness w2.example ${toHex(w2.publicKey)}\n`;

  beforeAll(async () => {
    dir = demoDayDir('tally-web-witness-');
    const note = readFileSync(file('receipt.note'), 'utf8');
    const body = note.slice(0, note.indexOf('\n\n') + 1);
    const time = 1_800_000_000;
    writeFileSync(file('both.note'), addSignatureLines(note, [cosignatureLine(body, w1, time), cosignatureLine(body, w2, time + 1)]));
    writeFileSync(file('one.note'), addSignatureLines(note, [cosignatureLine(body, w1, time)]));
    // w2's line with one signature byte flipped: a pinned witness's bad line rejects the note.
    const bad = cosignatureLine(body, w2, time);
    const raw = Buffer.from(bad.slice(bad.lastIndexOf(' ') + 1, -1), 'base64');
    raw[raw.length - 1]! ^= 0x01;
    writeFileSync(file('forged.note'), addSignatureLines(note, [cosignatureLine(body, w1, time), `${bad.slice(0, bad.lastIndexOf(' ') + 1)}${raw.toString('base64')}\n`]));
    writeFileSync(file('all.policy'), `${witnesses}group both all w1.example w2.example\nquorum both\n`);
    writeFileSync(file('any.policy'), `${witnesses}group either any w1.example w2.example\nquorum either\n`);
    ctx = await launch();
  }, 120_000);

  afterAll(async () => {
    await ctx?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function load(note: string, policy: string): Promise<Page> {
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(`file://${PAGE}`);
    await page.setInputFiles('#in-bundle', file('bundle.jsonl'));
    await page.setInputFiles('#in-checkpoint', file(note));
    await page.setInputFiles('#in-key', file('engine.vkey'));
    await page.setInputFiles('#in-policy', file(policy));
    await page.click('#load-files');
    await page.waitForSelector('body[data-ready=true]', { timeout: 60_000 });
    expect(errors, errors.join('\n')).toEqual([]);
    return page;
  }

  const cli = (note: string, policy: string) => tally(['verify', file('bundle.jsonl'), '--vkey', file('engine.vkey'), '--checkpoint', file(note), '--policy', file(policy), '--json']);

  it('pins by quorum when the policy is met, and says k of n', async () => {
    for (const [note, policy, text] of [
      ['both.note', 'all.policy', 'witnessed 2 of 2 (quorum 2): cosigned by w1.example, w2.example'],
      ['one.note', 'any.policy', 'witnessed 1 of 2 (quorum 1): cosigned by w1.example; not by w2.example'],
    ] as const) {
      expect(cli(note, policy).code, `${note} ${policy}`).toBe(0);
      const page = await load(note, policy);
      expect(await page.getAttribute('#banner', 'data-state')).toBe('pinned');
      expect(await page.textContent('#banner strong')).toBe('Valid, pinned by quorum');
      expect(await page.textContent('#banner-witnessed')).toBe(text);
      if (note === 'both.note') await page.screenshot({ path: join(ARTIFACTS, 'witnessed.png') });
      await page.close();
    }
    // tally view --policy embeds the policy: the offline page checks the quorum on open.
    const out = file('witnessed.html');
    const v = tally(['view', file('bundle.jsonl'), '--checkpoint', file('both.note'), '--vkey', file('engine.vkey'), '--policy', file('all.policy'), '--out', out]);
    expect(v.code, v.stderr).toBe(0);
    const viewed = await ctx.newPage();
    await viewed.goto(`file://${out}`);
    await viewed.waitForSelector('body[data-ready=true]');
    expect(await viewed.textContent('#banner-witnessed')).toBe('witnessed 2 of 2 (quorum 2): cosigned by w1.example, w2.example');
    await viewed.close();
  });

  it('refuses pinned-by-quorum below the quorum and on a forged cosignature, with the CLI code', async () => {
    for (const [note, policy] of [
      ['one.note', 'all.policy'],
      ['receipt.note', 'any.policy'],
      ['forged.note', 'any.policy'],
    ] as const) {
      const r = cli(note, policy);
      expect(r.code, `${note} ${policy}`).toBe(1);
      const want = JSON.parse(r.stdout) as { stage: string; code: string };
      expect(want.stage).toBe('witnesses');
      const page = await load(note, policy);
      expect(await page.getAttribute('#banner', 'data-state'), note).toBe('failed-pin');
      expect(await page.getAttribute('#banner', 'data-code'), note).toBe(want.code);
      const banner = (await page.textContent('#banner'))!;
      expect(banner).not.toContain('pinned by quorum');
      expect(banner).toContain('(witnesses: ');
      if (want.code === 'below-quorum') expect(banner).toContain(note === 'one.note' ? 'witnessed 1 of 2 (quorum 2 not met)' : 'witnessed 0 of 2 (quorum 1 not met)');
      if (note === 'one.note') await page.screenshot({ path: join(ARTIFACTS, 'below-quorum.png') });
      await page.close();
    }
  });
});

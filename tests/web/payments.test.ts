/**
 * An x402 payment day on the grader's page (Chromium via playwright-core),
 * built offline with the payment fixtures (no chain: the settlement is a
 * recorded receipt): the page replays it with the ruler `tally replay` picks
 * from the genesis (payments over the referee) and the same rulings; a
 * re-sealed edit of a payment ruling diverges at the entries `tally replay`
 * names; an evidence pack from `tally evidence --payment` verifies in the page
 * as in `tally verify-evidence`, and a mutated one is refused with the CLI's code.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBundle } from '../../src/codec/index.js';
import { createNotary, generateEngineKey } from '../../src/receipt/index.js';
import { PayDesk, paymentRequired, receiptOf, requirement, signPayment } from '../payments/fixtures.js';
import { CHROMIUM, launch, loadFiles, SKIP_REASON, tally } from './browser.js';
import { resealedEdit } from './forge.js';

if (!CHROMIUM) console.warn(SKIP_REASON);

type Line = { kind: string; ruling?: { x402?: { payment?: { admitted: boolean; value?: string; code?: string; payment_hash: string } } } };

describe.skipIf(!CHROMIUM)('an x402 payment day in the page', () => {
  let dir: string;
  let ctx: BrowserContext;
  let vkey: string;
  const file = (n: string): string => join(dir, n);

  beforeAll(async () => {
    // Admitted, then an offer_drift refusal whose frame records the first payment's settlement as UNKNOWN; a later frame reconciles it with its receipt.
    const key = generateEngineKey('tally.example/x402-page');
    vkey = key.verifierKey;
    const notary = createNotary({ key });
    const desk = await PayDesk.open();
    const a = await signPayment({ seq: 1 });
    await desk.pay(a);
    await desk.pay(await signPayment({ seq: 3, accepted: requirement({ maxTimeoutSeconds: 121 }) }), { required: paymentRequired([requirement()]), settlements: [{ ticket: 1, unknown: 'timeout' }] });
    await desk.wake({ settlements: [{ ticket: 1, receipt: receiptOf(a) as never }] });
    const sealed = await notary.sealWithReceipt(desk.engine, desk.sid);
    if (!sealed.ok) throw new Error('seal');
    const lines: Uint8Array[] = [];
    for await (const l of desk.engine.exportEntries(desk.sid)) lines.push(l);
    dir = mkdtempSync(join(tmpdir(), 'tally-web-x402-'));
    writeFileSync(file('bundle.jsonl'), encodeBundle(lines));
    writeFileSync(file('receipt.note'), sealed.signedCheckpoint);
    writeFileSync(file('engine.vkey'), `${vkey}\n`);
    ctx = await launch();
  }, 120_000);

  afterAll(async () => {
    await ctx?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  async function replayed(bundle: string, pinned: boolean): Promise<Page> {
    const errors: string[] = [];
    const page = await loadFiles(ctx, { bundle, dir, pinned, errors });
    expect(errors, errors.join('\n')).toEqual([]);
    return page;
  }

  it('replays the day with the payment ruler tally replay picks, every ruling identical', async () => {
    const r = tally(['replay', file('bundle.jsonl'), '--json']);
    const cli = JSON.parse(r.stdout) as { ok: boolean; turns: number; rulings: number; ruler: string };
    expect(cli.ok, r.stderr).toBe(true);
    expect(cli.ruler).toBe('payments');
    const page = await replayed(file('bundle.jsonl'), true);
    expect(await page.getAttribute('#banner', 'data-state')).toBe('pinned');
    expect(await page.getAttribute('body', 'data-replayed')).toBe('replayed');
    expect(await page.getAttribute('#replay', 'data-ruler')).toBe('payments');
    expect(await page.textContent('#replay')).toContain(`${cli.turns} turns replayed, ${cli.rulings} rulings identical, 0 divergences`);
    await page.close();
  });

  it('shows a re-sealed edit of a payment ruling at the entries tally replay reports', async () => {
    const entries = readFileSync(file('bundle.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const k = (entries as Line[]).findIndex((e) => e.ruling?.x402?.payment?.admitted === true);
    expect(k).toBeGreaterThan(0);
    writeFileSync(file('forged.jsonl'), resealedEdit(entries, k, (e) => ((e as Line).ruling!.x402!.payment!.value = '1')));
    expect(tally(['verify', file('forged.jsonl')]).code, 'the forgery is a valid chain').toBe(0);
    const r = tally(['replay', file('forged.jsonl'), '--json']);
    expect(r.code).toBe(1);
    const cli = JSON.parse(r.stdout) as { ruler: string; divergences: { index: number; kind: string }[] };
    expect(cli.ruler).toBe('payments');
    expect(cli.divergences[0]).toMatchObject({ index: k, kind: 'ruling-diverged' });
    const page = await replayed(file('forged.jsonl'), false);
    expect(await page.getAttribute('body', 'data-replayed')).toBe('diverged');
    const shown = await page.$$eval('#replay ol.divergences > li', (els) => els.map((e) => `${e.getAttribute('data-index')}:${e.getAttribute('data-kind')}`));
    expect(shown).toEqual(cli.divergences.map((d) => `${d.index}:${d.kind}`));
    expect(await page.textContent(`#replay li[data-index="${k}"]`)).toContain('ruling.x402.payment.value');
    await page.close();
  });

  /** Opens the page, picks `pack` (and the engine key) and checks it; returns the page once the report is shown. */
  async function checked(pack: string): Promise<Page> {
    const errors: string[] = [];
    const page = await ctx.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(`file://${join(import.meta.dirname, '../../dist/web/index.html')}`);
    await page.setInputFiles('#in-pack', pack);
    await page.setInputFiles('#in-key', file('engine.vkey'));
    await page.click('#check-pack');
    const shown = await page.waitForSelector('#pack[data-state="verified"], #pack[data-state="refused"]', { timeout: 20_000 }).catch(async () => `pack ${await page.textContent('#pack')}`);
    expect(errors, errors.join('\n')).toEqual([]);
    expect(typeof shown, String(shown)).not.toBe('string');
    return page;
  }

  it('verifies an evidence pack as tally verify-evidence does, and refuses a mutated one with its code', async () => {
    const base = [file('bundle.jsonl'), '--checkpoint', file('receipt.note'), '--vkey', vkey];
    expect(tally(['evidence', ...base, '--payment', '1', '--out', file('p1.json')]).code).toBe(0);
    const v = JSON.parse(tally(['verify-evidence', file('p1.json'), '--vkey', vkey, '--json']).stdout) as { ok: boolean; state: string; reasons: string[]; payment: { payment_hash: string } };
    expect(v.ok).toBe(true);
    let page = await checked(file('p1.json'));
    expect(await page.getAttribute('#pack', 'data-state')).toBe('verified');
    expect(await page.getAttribute('#pack', 'data-final')).toBe(v.state);
    expect(v.state).toBe('SETTLED');
    expect(await page.getAttribute('#pack', 'data-reasons')).toBe(v.reasons.join(' '));
    expect(await page.textContent('#pack')).toContain(v.payment.payment_hash);
    await page.close();

    // The refused payment's pack: its dispute reason, as the CLI names it.
    const lines = readFileSync(file('bundle.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Line);
    const drift = lines.find((e) => e.ruling?.x402?.payment?.code === 'offer_drift')!.ruling!.x402!.payment!.payment_hash;
    expect(tally(['evidence', ...base, '--payment', drift, '--out', file('drift.json')]).code).toBe(0);
    page = await checked(file('drift.json'));
    expect(await page.getAttribute('#pack', 'data-reasons')).toBe('offer_drift');
    await page.close();

    // Mutations: a receipt's entry edited (its inclusion fails), another payment named, not a pack at all. Each refused with the CLI's code.
    const pack = JSON.parse(readFileSync(file('p1.json'), 'utf8')) as { payment_hash: string; entries: { receipt: string }[] };
    const edited = structuredClone(pack);
    // The payment turn's entry bytes (the receipt's "extra" line, base64) with its ordinal moved by one.
    edited.entries[2]!.receipt = edited.entries[2]!.receipt
      .split('\n')
      .map((l) => (l.startsWith('extra ') ? `extra ${Buffer.from(Buffer.from(l.slice(6), 'base64').toString('utf8').replace(/"ordinal":(-?\d+)/, (_, n: string) => `"ordinal":${Number(n) + 1}`)).toString('base64')}` : l))
      .join('\n');
    expect(edited.entries[2]!.receipt).not.toBe(pack.entries[2]!.receipt);
    const other = { ...structuredClone(pack), payment_hash: drift };
    for (const [name, text] of [['edited.json', JSON.stringify(edited)], ['other.json', JSON.stringify(other)], ['garbage.json', 'not json']] as const) {
      writeFileSync(file(name), text);
      const r = tally(['verify-evidence', file(name), '--vkey', vkey, '--json']);
      expect(r.code, name).toBe(1);
      const cli = JSON.parse(r.stdout) as { ok: false; code: string };
      page = await checked(file(name));
      expect(await page.getAttribute('#pack', 'data-state'), name).toBe('refused');
      expect(await page.getAttribute('#pack', 'data-code'), name).toBe(cli.code);
      await page.close();
    }
    // Under another engine's key, nothing opens.
    writeFileSync(file('engine.vkey'), `${generateEngineKey('tally.example/x402-page').verifierKey}\n`);
    page = await checked(file('p1.json'));
    expect(await page.getAttribute('#pack', 'data-code')).toBe('receipt_invalid');
    writeFileSync(file('engine.vkey'), `${vkey}\n`);
    await page.close();
  });
});

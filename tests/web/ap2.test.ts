/**
 * AP2 and Verifiable Intent days on the grader's page (Chromium via
 * playwright-core): the page replays them with the ruler `tally replay`
 * picks from the genesis (`ap2`), re-verifying every SD-JWT credential,
 * closed mandate and receipt from the recorded bytes in the browser (jose's
 * WebCrypto build, @sd-jwt/core with the page's SHA-256). The `tally demo
 * --ap2` day replays to the CLI's report; days recorded here as the second
 * session spending one AP2 open mandate or one VI credential list the first
 * session's use as an external fact, in the CLI's words; a re-sealed edit of a
 * recorded AP2 ruling diverges at the entries `tally replay` names.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/engine.js';
import { createAp2Ruler } from '../../src/mandates/index.js';
import { externalFactText, type ExternalFact } from '../../src/receipt/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { ap2Spec, openPaymentMandate, paymentTurn, receiptJwt, turnParts, world } from '../mandates/fixtures.js';
import { purchase, T0 as VI_T0, viSpec } from '../mandates/vi-fixtures.js';
import { CHROMIUM, launch, loadFiles, SKIP_REASON, tally } from './browser.js';
import { resealedEdit } from './forge.js';

if (!CHROMIUM) console.warn(SKIP_REASON);

type Line = { kind: string; ruling?: { ap2?: { admitted: boolean; spent_before?: number } } };
interface CliReplay { ok: boolean; ruler: string; turns: number; rulings: number; externalFacts: ExternalFact[]; divergences?: { index: number; kind: string }[] }

const T0 = 1_893_456_000_000; // 2030-01-01T00:00:00Z, ms

/**
 * Two sessions of one store spending one open mandate (USD 100): `a` buys for
 * 40, `b` then buys for 30 with a's payment receipt in its frame. Returns b's
 * sealed bundle: its ruling names a's use, which b's bundle alone cannot
 * re-derive (the receipt is b's own frame's).
 */
async function secondSessionDay(): Promise<Uint8Array> {
  const store = new MemoryStore();
  const w = await world();
  const mandate = await openPaymentMandate(w, { iat: T0 / 1000 - 60, exp: T0 / 1000 + 86_400, budget: { currency: 'USD', max: 100 } });
  const engine = createEngine({ store, ruler: createAp2Ruler({ store }) });
  const spend = async (name: string, body: Uint8Array, time: number, data?: unknown): Promise<{ sessionId: string; ruled: Record<string, unknown> }> => {
    const o = await engine.open({ name, ap2: ap2Spec(w, mandate) } as never);
    if (!o.ok) throw new Error(o.message);
    const f = await engine.frame({ sessionId: o.sessionId, ordinal: -1, time, ...(data === undefined ? {} : { data }) });
    if (!f.ok) throw new Error(f.message);
    const t = await engine.turn({ sessionId: o.sessionId, ordinal: f.ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: body } });
    if (!t.ok) throw new Error(t.message);
    const fin = await engine.finalize(o.sessionId, { note: 'done' });
    if (!fin.ok) throw new Error(fin.message);
    return { sessionId: o.sessionId, ruled: (t.ruling as { ap2: Record<string, unknown> }).ap2 };
  };
  const first = await paymentTurn(w, mandate, { amount: 4_000, nonce: 'n1', iat: T0 / 1000 });
  expect((await spend('a', first, T0)).ruled).toMatchObject({ admitted: true, use: 0 });
  const receipt = { ap2: { receipts: [{ type: 'payment', jwt: await receiptJwt(w, 'payment', turnParts(first).reference) }] } };
  const b = await spend('b', await paymentTurn(w, mandate, { amount: 3_000, nonce: 'n2', iat: T0 / 1000 + 1 }), T0 + 1000, receipt);
  expect(b.ruled).toMatchObject({ admitted: true, use: 1, spent_before: 4_000 });
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(b.sessionId)) lines.push(l);
  return encodeBundle(lines);
}

/**
 * Two sessions of one store under the Verifiable Intent credential (budget
 * USD 500): `a` buys for 279.99, `b` for 200.00 and then 50.00, refused (over
 * the budget). Returns b's sealed bundle, whose rulings rest on a's use.
 */
async function viSecondSessionDay(): Promise<Uint8Array> {
  const store = new MemoryStore();
  const engine = createEngine({ store, ruler: createAp2Ruler({ store }) });
  const open = async (name: string) => {
    const o = await engine.open({ name, vi: viSpec() } as never);
    if (!o.ok) throw new Error(o.message);
    let ordinal = -1;
    return Object.assign(async (body: Uint8Array, time: number) => {
      const f = await engine.frame({ sessionId: o.sessionId, ordinal, time });
      if (!f.ok) throw new Error(f.message);
      ordinal++;
      const t = await engine.turn({ sessionId: o.sessionId, ordinal: f.ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: body } });
      if (!t.ok) throw new Error(t.message);
      return (t.ruling as { ap2: Record<string, unknown> }).ap2;
    }, { sessionId: o.sessionId });
  };
  const a = await open('vi-a');
  const b = await open('vi-b');
  const s = VI_T0 / 1000;
  expect(await a(await purchase({ amount: 27_999, nonce: 'v1', iat: s }), VI_T0)).toMatchObject({ admitted: true, use: 0 });
  expect(await b(await purchase({ amount: 20_000, nonce: 'v2', iat: s + 1 }), VI_T0 + 1000)).toMatchObject({ admitted: true, use: 1 });
  expect(await b(await purchase({ amount: 5_000, nonce: 'v3', iat: s + 2 }), VI_T0 + 2000)).toMatchObject({ admitted: false, violations: ['payment.budget'] });
  const fin = await engine.finalize(b.sessionId, { note: 'done' });
  if (!fin.ok) throw new Error(fin.message);
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(b.sessionId)) lines.push(l);
  return encodeBundle(lines);
}

describe.skipIf(!CHROMIUM)('an AP2 day in the page', () => {
  let dir: string;
  let ctx: BrowserContext;
  const file = (n: string): string => join(dir, n);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tally-web-ap2-'));
    const demo = tally(['demo', '--ap2', '--out', dir]);
    if (demo.code !== 0) throw new Error(`tally demo --ap2 exited ${demo.code}: ${demo.stderr}`);
    writeFileSync(file('second.jsonl'), await secondSessionDay());
    writeFileSync(file('vi.jsonl'), await viSecondSessionDay());
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
  const cliReplay = (bundle: string): { code: number | null; cli: CliReplay } => {
    const r = tally(['replay', bundle, '--json']);
    return { code: r.code, cli: JSON.parse(r.stdout) as CliReplay };
  };
  const factsShown = (page: Page): Promise<string[]> => page.$$eval('#replay ul.facts > li', (els) => els.map((e) => e.textContent ?? ''));

  it('replays the tally demo --ap2 day with the AP2 ruler, as tally replay does', async () => {
    const { code, cli } = cliReplay(file('bundle.jsonl'));
    expect(code).toBe(0);
    expect(cli).toMatchObject({ ok: true, ruler: 'ap2', externalFacts: [] });
    expect(cli.rulings).toBeGreaterThanOrEqual(5);
    const page = await replayed(file('bundle.jsonl'), true);
    expect(await page.getAttribute('#banner', 'data-state')).toBe('pinned');
    expect(await page.getAttribute('body', 'data-replayed')).toBe('replayed');
    expect(await page.getAttribute('#replay', 'data-ruler')).toBe('ap2');
    expect(await page.textContent('#replay')).toContain(`${cli.turns} turns replayed, ${cli.rulings} rulings identical, 0 divergences`);
    expect(await factsShown(page)).toEqual([]);
    await page.close();
  });

  it("lists another session's use of the mandate as an external fact, in tally replay's words", async () => {
    const { code, cli } = cliReplay(file('second.jsonl'));
    expect(code).toBe(0);
    expect(cli.ruler).toBe('ap2');
    expect(cli.externalFacts.map((f) => [f.kind, f.nonce])).toEqual([['ap2-use', 'use:0']]);
    const page = await replayed(file('second.jsonl'), false);
    expect(await page.getAttribute('body', 'data-replayed')).toBe('replayed');
    expect(await page.textContent('#replay')).toContain(`${cli.turns} turns replayed, ${cli.rulings} rulings identical, 0 divergences`);
    expect(await factsShown(page)).toEqual(cli.externalFacts.map((f) => `entry ${f.index}: ${externalFactText(f)} (trusted, not verified)`));
    await page.close();
  });

  it('replays a Verifiable Intent day with the same ruler, refusal and external fact as tally replay', async () => {
    const { code, cli } = cliReplay(file('vi.jsonl'));
    expect(code).toBe(0);
    expect(cli).toMatchObject({ ok: true, ruler: 'ap2', rulings: 2 });
    expect(cli.externalFacts.map((f) => [f.kind, f.nonce])).toEqual([['ap2-use', 'use:0']]);
    const page = await replayed(file('vi.jsonl'), false);
    expect(await page.getAttribute('body', 'data-replayed')).toBe('replayed');
    expect(await page.getAttribute('#replay', 'data-ruler')).toBe('ap2');
    expect(await page.textContent('#replay')).toContain(`${cli.turns} turns replayed, ${cli.rulings} rulings identical, 0 divergences`);
    expect(await factsShown(page)).toEqual(cli.externalFacts.map((f) => `entry ${f.index}: ${externalFactText(f)} (trusted, not verified)`));
    await page.close();
  });

  it('shows a re-sealed edit of an AP2 ruling at the entries tally replay reports', async () => {
    const entries = readFileSync(file('bundle.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    // The second admitted purchase: its history fact (what was spent before it) edited.
    const k = (entries as Line[]).map((e, i) => (e.ruling?.ap2?.admitted === true ? i : -1)).filter((i) => i >= 0)[1]!;
    expect(k).toBeGreaterThan(0);
    writeFileSync(file('forged.jsonl'), resealedEdit(entries, k, (e) => ((e as Line).ruling!.ap2!.spent_before = 0)));
    expect(tally(['verify', file('forged.jsonl')]).code, 'the forgery is a valid chain').toBe(0);
    const { code, cli } = cliReplay(file('forged.jsonl'));
    expect(code).toBe(1);
    expect(cli.ruler).toBe('ap2');
    expect(cli.divergences![0]).toMatchObject({ index: k, kind: 'ruling-diverged' });
    const page = await replayed(file('forged.jsonl'), false);
    expect(await page.getAttribute('body', 'data-replayed')).toBe('diverged');
    const shown = await page.$$eval('#replay ol.divergences > li', (els) => els.map((e) => `${e.getAttribute('data-index')}:${e.getAttribute('data-kind')}`));
    expect(shown).toEqual(cli.divergences!.map((d) => `${d.index}:${d.kind}`));
    expect(await page.textContent(`#replay li[data-index="${k}"]`)).toContain('ruling.ap2.spent_before');
    await page.close();
  });
});

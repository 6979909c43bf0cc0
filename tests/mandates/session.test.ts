/**
 * Sessions under an AP2 open payment mandate, on the real engine and a real
 * SQLite store: the mandate is recorded verbatim in the genesis spec, each
 * purchase is a closed payment mandate ruled from the transcript, and the
 * budget is spent across sessions of one store (history derived from the
 * store's reservations, not supplied by the agent).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/engine.js';
import { replay } from '../../src/receipt/index.js';
import { openStore, type TranscriptStore } from '../../src/store/index.js';
import { checkAp2Evidence, createAp2Ruler, findAp2Transaction } from '../../src/mandates/index.js';
import { inProcess } from '../cli/in-process.js';
import { ap2Spec, openPaymentMandate, paymentTurn, receiptJwt, turnParts, world, type World } from './fixtures.js';

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const T0 = 1_893_456_000_000; // 2030-01-01T00:00:00Z, ms

async function setup(): Promise<{ store: TranscriptStore; w: World; mandate: string; engine: ReturnType<typeof createEngine> }> {
  const dir = mkdtempSync(join(tmpdir(), 'tally-ap2-'));
  dirs.push(dir);
  const store = await openStore(`sqlite:${join(dir, 'ap2.db')}`);
  const w = await world();
  const mandate = await openPaymentMandate(w, { iat: T0 / 1000 - 60, exp: T0 / 1000 + 86_400 * 30, budget: { currency: 'USD', max: 100 }, extra: [{ type: 'payment.agent_recurrence', frequency: 'ON_DEMAND', max_occurrences: 10 }] });
  const engine = createEngine({ store, ruler: createAp2Ruler({ store }) });
  provider.last = undefined;
  return { store, w, mandate, engine };
}

/**
 * The credential provider's side: it answers every presentation the engine
 * admitted with a payment receipt, which the next frame of whichever session
 * spends next carries (AP2: no subsequent presentation without one).
 */
const provider = { last: undefined as string | undefined };
async function answered(w: World): Promise<unknown> {
  return provider.last === undefined ? undefined : { ap2: { receipts: [{ type: 'payment', jwt: await receiptJwt(w, 'payment', provider.last) }] } };
}

/** Opens a session under the mandate and returns a function that spends one frame+turn (`data`: the frame's data, default the provider's last receipt). */
async function day(e: ReturnType<typeof createEngine>, w: World, mandate: string, name: string) {
  const o = await e.open({ name, ap2: ap2Spec(w, mandate) } as never);
  if (!o.ok) throw new Error(o.message);
  let ordinal = -1;
  return Object.assign(async (body: Uint8Array, time: number, data?: unknown) => {
    const frameData = data === undefined ? await answered(w) : data === null ? undefined : data;
    const f = await e.frame({ sessionId: o.sessionId, ordinal, time, ...(frameData === undefined ? {} : { data: frameData }) });
    if (!f.ok) throw new Error(f.message);
    ordinal++;
    const t = await e.turn({ sessionId: o.sessionId, ordinal: f.ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: body } });
    if (!t.ok) throw new Error(t.message);
    const ruled = (t.ruling as { ap2: Record<string, unknown> }).ap2;
    if (ruled['admitted'] === true) provider.last = turnParts(body).reference;
    return ruled;
  }, { sessionId: o.sessionId });
}

async function bundleOf(e: ReturnType<typeof createEngine>, sid: string): Promise<Uint8Array> {
  const fin = await e.finalize(sid, { note: 'done' });
  if (!fin.ok) throw new Error(fin.message);
  const lines: Uint8Array[] = [];
  for await (const l of e.exportEntries(sid)) lines.push(l);
  return encodeBundle(lines);
}

describe('a day under an AP2 open payment mandate', () => {
  it('admits purchases within the budget, refuses the one that would exceed it, across two sessions of one store', async () => {
    const { store, w, mandate, engine } = await setup();
    const a = await day(engine, w, mandate, 'desk-a');
    const b = await day(engine, w, mandate, 'desk-b');
    const buy = (amount: number, nonce: string, t: number) => paymentTurn(w, mandate, { amount, nonce, iat: Math.floor(t / 1000) });
    expect(await a(await buy(4_000, 'n1', T0), T0)).toMatchObject({ admitted: true, use: 0, spent_before: 0, amount: 4_000 });
    expect(await b(await buy(4_000, 'n2', T0 + 1000), T0 + 1000)).toMatchObject({ admitted: true, use: 1, spent_before: 4_000, external: [{ use: 0, amount: 4_000 }] });
    // 8000 spent of 10000 minor units: 2500 more would exceed the budget; 2000 fits exactly.
    expect(await a(await buy(2_500, 'n3', T0 + 2000), T0 + 2000)).toMatchObject({ admitted: false, code: 'constraint-violated', violations: ['payment.budget'], spent_before: 8_000 });
    expect(await a(await buy(2_000, 'n4', T0 + 3000), T0 + 3000)).toMatchObject({ admitted: true, use: 2, spent_before: 8_000 });
    expect(await b(await buy(1, 'n5', T0 + 4000), T0 + 4000)).toMatchObject({ admitted: false, violations: ['payment.budget'], spent_before: 10_000 });
    await store.close();
  });

  it('replays each day to the same rulings from its bundle alone, listing the other session\'s uses as external facts', async () => {
    const { store, w, mandate, engine } = await setup();
    const a = await day(engine, w, mandate, 'desk-a');
    const b = await day(engine, w, mandate, 'desk-b');
    const buy = (amount: number, nonce: string) => paymentTurn(w, mandate, { amount, nonce, iat: T0 / 1000 });
    await a(await buy(6_000, 'r1'), T0);
    await b(await buy(3_000, 'r2'), T0);
    expect(await b(await buy(2_000, 'r3'), T0)).toMatchObject({ admitted: false, violations: ['payment.budget'] });
    await a(await buy(1_000, 'r4'), T0);
    const rb = await replay([await bundleOf(engine, b.sessionId)], { ruler: (s) => createAp2Ruler({ store: s }) });
    expect(rb.ok, JSON.stringify(rb).slice(0, 2000)).toBe(true);
    if (rb.ok) expect(rb.externalFacts.map((f) => [f.kind, f.nonce])).toEqual([['ap2-use', 'use:0']]);
    const ra = await replay([await bundleOf(engine, a.sessionId)], { ruler: (s) => createAp2Ruler({ store: s }) });
    expect(ra.ok, JSON.stringify(ra).slice(0, 2000)).toBe(true);
    if (ra.ok) expect(ra.externalFacts.map((f) => f.nonce)).toEqual(['use:1']);

    // tally replay picks the AP2 ruler from the genesis spec, agrees, and names the external use.
    const file = join(dirs[dirs.length - 1]!, 'desk-b.bundle');
    writeFileSync(file, await bundleOf(engine, b.sessionId));
    const cli = await inProcess(['replay', file]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/all 2 rulings re-derived/);
    expect(cli.stdout).toMatch(/^ruler +ap2$/m);
    expect(cli.stdout).toMatch(/external +entry \d+: ap2-use "use:0" of "ap2:[A-Za-z0-9_-]+" reserved in session [0-9a-f]{64} entry \d+ \(trusted, not verified\)/);
    // With the intent ruler the same day does not re-derive.
    expect((await inProcess(['replay', file, '--ruler', 'intent'])).code).toBe(1);
    await store.close();
  });

  it('retrieves a transaction by its transaction_id across sessions, and the pack re-verifies offline; edited packs do not', async () => {
    const { store, w, mandate, engine } = await setup();
    const a = await day(engine, w, mandate, 'desk-a');
    const b = await day(engine, w, mandate, 'desk-b');
    const first = await a(await paymentTurn(w, mandate, { amount: 1_000, nonce: 'e1', iat: T0 / 1000 }), T0);
    const ruled = await b(await paymentTurn(w, mandate, { amount: 2_000, nonce: 'e2', iat: T0 / 1000 }), T0 + 5000);
    const packs = await findAp2Transaction(store, ruled['transaction_id'] as string);
    expect(packs.map((p) => [p.sessionId, p.index])).toEqual([[b.sessionId, 2]]);
    const pack = packs[0]!;
    const c = await checkAp2Evidence(pack);
    expect(c.ok && c.value).toMatchObject({ admitted: true, amount: 2_000, currency: 'USD' });
    expect(await findAp2Transaction(store, 'no-such-transaction')).toEqual([]);
    // Another session's frame, a flipped byte in the turn, another transaction id: refused.
    const other = (await findAp2Transaction(store, first['transaction_id'] as string))[0]!;
    expect(other.sessionId).toBe(a.sessionId);
    expect((await checkAp2Evidence({ ...pack, frame: other.frame })).ok).toBe(false);
    const text = new TextDecoder().decode(pack.turn);
    const i = text.indexOf('"bytes":"') + 20;
    const flipped = new TextEncoder().encode(text.slice(0, i) + (text[i] === 'A' ? 'B' : 'A') + text.slice(i + 1));
    expect((await checkAp2Evidence({ ...pack, turn: flipped })).ok).toBe(false);
    expect((await checkAp2Evidence({ ...pack, transactionId: other.transactionId })).ok).toBe(false);
    await store.close();
  });

  it('refuses a replayed KB-JWT, a turn that is not the canonical body, and a mandate past its exp', async () => {
    const { store, w, mandate, engine } = await setup();
    const a = await day(engine, w, mandate, 'desk');
    const body = await paymentTurn(w, mandate, { amount: 100, nonce: 'same', iat: T0 / 1000 });
    expect(await a(body, T0)).toMatchObject({ admitted: true });
    const again = await paymentTurn(w, mandate, { amount: 100, nonce: 'same', iat: T0 / 1000 });
    expect(await a(again, T0 + 1)).toMatchObject({ admitted: false, code: 'kb-replayed' });
    const spaced = new TextEncoder().encode(new TextDecoder().decode(await paymentTurn(w, mandate, { amount: 100, nonce: 'x', iat: T0 / 1000 })).replace('{', '{ '));
    expect(await a(spaced, T0 + 2)).toMatchObject({ admitted: false, code: 'turn-malformed' });
    const late = T0 + 86_400_000 * 31;
    expect(await a(await paymentTurn(w, mandate, { amount: 100, nonce: 'y', iat: late / 1000 }), late)).toMatchObject({ admitted: false, code: 'mandate-expired' });
    await store.close();
  });

  it('refuses a second presentation until the previous one has a receipt; a receipt is a fact any session of the store sees, and replay names it', async () => {
    const { store, w, mandate, engine } = await setup();
    const a = await day(engine, w, mandate, 'desk-a');
    const b = await day(engine, w, mandate, 'desk-b');
    const first = await paymentTurn(w, mandate, { amount: 1_000, nonce: 'q1', iat: T0 / 1000 });
    expect(await a(first, T0, null)).toMatchObject({ admitted: true, use: 0, reference: turnParts(first).reference });
    const ref = turnParts(first).reference;
    // No receipt yet: refused in either session, and nothing is spent.
    expect(await b(await paymentTurn(w, mandate, { amount: 1_000, nonce: 'q2', iat: T0 / 1000 }), T0 + 1000, null)).toMatchObject({ admitted: false, code: 'receipt-missing', uses_before: 1 });
    // Receipts that do not count: the merchant's key on a payment receipt, a wrong iss, an unknown key, another reference.
    const other = await world();
    const bad = [
      { type: 'payment', jwt: await receiptJwt(w, 'payment', ref, { by: w.merchant }) },
      { type: 'payment', jwt: await receiptJwt(w, 'payment', ref, { iss: 'https://someone-else.example' }) },
      { type: 'mandate', jwt: await receiptJwt(w, 'mandate', ref, { by: other.provider }) },
      { type: 'checkout', jwt: await receiptJwt(w, 'checkout', turnParts(first).transactionId) },
    ];
    const r2 = await b(await paymentTurn(w, mandate, { amount: 1_000, nonce: 'q3', iat: T0 / 1000 }), T0 + 2000, { ap2: { receipts: bad } });
    expect(r2).toMatchObject({ admitted: false, code: 'receipt-missing' });
    expect((r2['receipts'] as { code?: string }[]).map((x) => x.code ?? 'ok')).toEqual(['receipt-issuer', 'receipt-issuer', 'receipt-signature', 'ok']);
    // A rejection receipt (the provider's error mandate receipt) arrives in session a's frame; session b may then present.
    const rejection = { ap2: { receipts: [{ type: 'mandate', jwt: await receiptJwt(w, 'mandate', ref, { status: 'error' }) }] } };
    const third = await paymentTurn(w, mandate, { amount: 500, nonce: 'q4', iat: T0 / 1000 });
    expect(await a(await paymentTurn(w, mandate, { amount: 10, nonce: 'q4x', iat: T0 / 1000, sku: 'x' }), T0 + 3000, rejection)).toMatchObject({ admitted: true, use: 1, previous_receipt: { reference: ref, in_frame: true } });
    provider.last = undefined;
    // Use 1's presentation has no receipt: b is refused again; one in b's own frame admits.
    expect(await b(third, T0 + 4000, null)).toMatchObject({ admitted: false, code: 'receipt-missing' });
    const a2 = await a(await paymentTurn(w, mandate, { amount: 20, nonce: 'q5', iat: T0 / 1000 }), T0 + 5000, null);
    expect(a2).toMatchObject({ admitted: false, code: 'receipt-missing' });
    await store.close();
  });

  it('reads a receipt reserved by another session as an external fact on replay, and refuses a checkout JWT the merchant did not sign', async () => {
    const { store, w, mandate, engine } = await setup();
    const a = await day(engine, w, mandate, 'desk-a');
    const b = await day(engine, w, mandate, 'desk-b');
    const first = await paymentTurn(w, mandate, { amount: 1_000, nonce: 'x1', iat: T0 / 1000 });
    await a(first, T0, null);
    const receipt = { ap2: { receipts: [{ type: 'payment', jwt: await receiptJwt(w, 'payment', turnParts(first).reference) }] } };
    // The receipt arrives in a's frame, whose turn is refused (a replayed nonce): it is still recorded and reserved.
    expect(await a(await paymentTurn(w, mandate, { amount: 1_000, nonce: 'x1', iat: T0 / 1000 }), T0 + 1000, receipt)).toMatchObject({ admitted: false, code: 'kb-replayed', receipts: [{ type: 'payment', status: 'Success' }] });
    expect(await b(await paymentTurn(w, mandate, { amount: 2_000, nonce: 'x2', iat: T0 / 1000 }), T0 + 2000, null)).toMatchObject({ admitted: true, use: 1, previous_receipt: { session: a.sessionId, index: 4 } });
    // A checkout JWT signed by someone else than the pinned merchant.
    const forged = await paymentTurn({ ...w, merchant: (await world()).merchant }, mandate, { amount: 1, nonce: 'x3', iat: T0 / 1000 });
    expect(await b(forged, T0 + 3000, null)).toMatchObject({ admitted: false, code: 'checkout-signature' });
    const rb = await replay([await bundleOf(engine, b.sessionId)], { ruler: (s) => createAp2Ruler({ store: s }) });
    expect(rb.ok, JSON.stringify(rb).slice(0, 2000)).toBe(true);
    if (rb.ok) expect(rb.externalFacts.map((f) => [f.kind, f.nonce.split(':')[0]])).toEqual([['ap2-use', 'use'], ['ap2-receipt', 'receipt']]);
    await store.close();
  });

  it('refuses at open a spec whose ap2 member is malformed', async () => {
    const { store, w, mandate, engine } = await setup();
    const r = await engine.open({ name: 'x', ap2: { ...ap2Spec(w, mandate), mandate: mandate + 'j!~' } } as never);
    expect(r.ok).toBe(false);
    // The merchant and provider are pinned by key: a name alone is not an authority.
    const { merchant: _m, ...noMerchant } = ap2Spec(w, mandate);
    expect((await engine.open({ name: 'y', ap2: { ...noMerchant, merchant: 'https://demo-merchant.example' } } as never)).ok).toBe(false);
    await store.close();
  });
});

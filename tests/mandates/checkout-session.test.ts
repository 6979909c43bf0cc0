/**
 * Sessions under an AP2 open checkout mandate (PROTOCOL.md §16.11), on the
 * real engine and a real SQLite store: each purchase is the agent's closed
 * checkout mandate over a merchant-signed cart, ruled against the open
 * mandate's constraints; the mandate's line items are one cart, so a second
 * checkout — in any session of the store — is admitted only once the previous
 * one was rejected by a checkout Error receipt. Replay re-derives every
 * ruling from the day's bundle, another session's receipt as an external fact.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/engine.js';
import { createAp2Ruler } from '../../src/mandates/index.js';
import { replay } from '../../src/receipt/index.js';
import { openStore } from '../../src/store/index.js';
import { MERCHANT_AUDIENCE, ap2Spec, checkoutTurn, openCheckoutMandate, receiptJwt, world, type World } from './fixtures.js';

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const T0 = 1_893_456_000_000; // 2030-01-01T00:00:00Z, ms
const s = T0 / 1000;

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'tally-ap2c-'));
  dirs.push(dir);
  const store = await openStore(`sqlite:${join(dir, 'ap2.db')}`);
  const w = await world();
  const mandate = await openCheckoutMandate(w, { iat: s - 60, exp: s + 86_400 });
  const engine = createEngine({ store, ruler: createAp2Ruler({ store }) });
  const day = async (name: string) => {
    // The closed checkout mandates' KB-JWTs name the merchant, the verifier of a checkout.
    const o = await engine.open({ name, ap2: { ...ap2Spec(w, mandate), audience: MERCHANT_AUDIENCE } } as never);
    if (!o.ok) throw new Error(o.message);
    let ordinal = -1;
    return Object.assign(async (body: Uint8Array, time: number, data?: unknown) => {
      const f = await engine.frame({ sessionId: o.sessionId, ordinal, time, ...(data === undefined ? {} : { data }) });
      if (!f.ok) throw new Error(f.message);
      ordinal++;
      const t = await engine.turn({ sessionId: o.sessionId, ordinal: f.ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: body } });
      if (!t.ok) throw new Error(t.message);
      return (t.ruling as { ap2: Record<string, unknown> }).ap2;
    }, { sessionId: o.sessionId });
  };
  const bundleOf = async (sid: string) => {
    const fin = await engine.finalize(sid, { note: 'done' });
    if (!fin.ok) throw new Error(fin.message);
    const lines: Uint8Array[] = [];
    for await (const l of engine.exportEntries(sid)) lines.push(l);
    return encodeBundle(lines);
  };
  return { store, w, mandate, day, bundleOf };
}
const receipts = async (w: World, reference: string, status: 'ok' | 'error') => ({ ap2: { receipts: [{ type: 'checkout', jwt: await receiptJwt(w, 'checkout', reference, { status }) }] } });

describe('a day under an AP2 open checkout mandate', () => {
  it('admits the cart the mandate describes once; a second checkout waits for a rejection of the first, in any session; replay re-derives both days', async () => {
    const { store, w, mandate, day, bundleOf } = await setup();
    const a = await day('desk-a');
    const b = await day('desk-b');
    const c1 = await checkoutTurn(w, mandate, { nonce: 'c1', iat: s });
    expect(await a(c1.body, T0)).toMatchObject({ admitted: true, use: 0, uses_before: 0, transaction_id: c1.checkoutHash, reference: c1.checkoutHash, merchant: 'merchant_1' });
    // No receipt for c1 yet: AP2 forbids a subsequent presentation.
    const c2 = await checkoutTurn(w, mandate, { nonce: 'c2', iat: s });
    expect(await b(c2.body, T0 + 1000)).toMatchObject({ admitted: false, code: 'receipt-missing', uses_before: 1, external: [{ use: 0, reference: c1.checkoutHash }] });
    // The merchant rejects c1 (an Error receipt, in B's frame; B's turn itself is malformed, the receipt is a fact all the same).
    expect(await b(new TextEncoder().encode('{}'), T0 + 2000, await receipts(w, c1.checkoutHash, 'error'))).toMatchObject({ admitted: false, code: 'turn-malformed', receipts: [{ type: 'checkout', reference: c1.checkoutHash, status: 'Error' }] });
    // A then presents again: the rejection B's session holds lets it through.
    expect(await a(c2.body, T0 + 3000)).toMatchObject({ admitted: true, use: 1, previous_receipt: { reference: c1.checkoutHash, session: b.sessionId, status: 'Error' } });
    // c2 succeeds: its Success receipt (in the frame) closes the mandate, the cart is bought.
    const c3 = await checkoutTurn(w, mandate, { nonce: 'c3', iat: s });
    expect(await b(c3.body, T0 + 4000, await receipts(w, c2.checkoutHash, 'ok'))).toMatchObject({ admitted: false, code: 'checkout-fulfilled', uses_before: 2 });
    expect(await a(c3.body, T0 + 5000)).toMatchObject({ admitted: false, code: 'checkout-fulfilled' });

    const rb = await replay([await bundleOf(b.sessionId)], { ruler: (st) => createAp2Ruler({ store: st }) });
    expect(rb.ok, JSON.stringify(rb).slice(0, 1500)).toBe(true);
    if (rb.ok) expect(rb.externalFacts.map((f) => [f.kind, f.nonce])).toEqual([['ap2-use', 'use:0'], ['ap2-use', 'use:1']]);
    const ra = await replay([await bundleOf(a.sessionId)], { ruler: (st) => createAp2Ruler({ store: st }) });
    expect(ra.ok, JSON.stringify(ra).slice(0, 1500)).toBe(true);
    if (ra.ok) expect(ra.externalFacts.map((f) => [f.kind, f.nonce])).toEqual([['ap2-receipt', `receipt:${c1.checkoutHash}`], ['ap2-receipt', `receipt:${c2.checkoutHash}`]]);
    await store.close();
  });

  it('refuses a cart the mandate does not describe, a cart the merchant did not sign, a replayed KB-JWT and a payment-shaped turn', async () => {
    const { store, w, mandate, day } = await setup();
    const a = await day('desk');
    const other = { id: 'merchant_2', name: 'Other Merchant' };
    expect(await a((await checkoutTurn(w, mandate, { nonce: 'x1', iat: s, merchant: other })).body, T0)).toMatchObject({ admitted: false, code: 'constraint-violated', violations: ['checkout.allowed_merchants'] });
    expect(await a((await checkoutTurn(w, mandate, { nonce: 'x2', iat: s, item: { id: 'hat', title: 'Hat' } })).body, T0 + 1000)).toMatchObject({ admitted: false, code: 'constraint-violated', violations: ['checkout.line_items', 'checkout.line_items'] });
    expect(await a((await checkoutTurn(w, mandate, { nonce: 'x3', iat: s, by: w.provider })).body, T0 + 2000)).toMatchObject({ admitted: false, code: 'checkout-signature' });
    const ok = await checkoutTurn(w, mandate, { nonce: 'x4', iat: s });
    expect(await a(ok.body, T0 + 3000)).toMatchObject({ admitted: true, use: 0 });
    expect(await a(ok.body, T0 + 4000, await receipts(w, ok.checkoutHash, 'error'))).toMatchObject({ admitted: false, code: 'kb-replayed' });
    expect(await a(new TextEncoder().encode(JSON.stringify({ checkout_jwt: 'a.b.c', open_checkout: 'x~', payment: 'y~' })), T0 + 5000)).toMatchObject({ admitted: false, code: 'turn-malformed' });
    await store.close();
  });
});

/**
 * Sessions under a Verifiable Intent v0.1 L2 autonomous credential, on the
 * real engine and a real SQLite store: the L1 and L2 are recorded verbatim in
 * the genesis spec (`vi`), each purchase is the agent's L3a payment mandate,
 * and the budget is spent across sessions of one store through the same
 * history and constraint code as an AP2 session. The credential is the `vi`
 * vector `valid-autonomous` (docs/vectors/ap2.json); the L3a is made with
 * @sd-jwt/core and the agent's test key from that file (./vi-fixtures.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/engine.js';
import { createAp2Ruler } from '../../src/mandates/index.js';
import { replay } from '../../src/receipt/index.js';
import { openStore } from '../../src/store/index.js';
import { inProcess } from '../cli/in-process.js';
import { SDJwtInstance } from '@sd-jwt/core';
import { ES256, digest, generateSalt } from '@sd-jwt/crypto-nodejs';
import { CompactSign, importJWK } from 'jose';
import { AUD, b64sha, cred, keys, PAYEE, paymentDisclosure, purchase, T0 } from './vi-fixtures.js';
import { keyPair } from './fixtures.js';

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'tally-vi-'));
  dirs.push(dir);
  const store = await openStore(`sqlite:${join(dir, 'vi.db')}`);
  const engine = createEngine({ store, ruler: createAp2Ruler({ store }) });
  const day = async (name: string) => {
    const o = await engine.open({ name, vi: { l1: cred.l1, l2: cred.l2, issuer: keys['issuer']!.public, audience: AUD } } as never);
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
  const bundleOf = async (sid: string) => {
    const fin = await engine.finalize(sid, { note: 'done' });
    if (!fin.ok) throw new Error(fin.message);
    const lines: Uint8Array[] = [];
    for await (const l of engine.exportEntries(sid)) lines.push(l);
    return encodeBundle(lines);
  };
  return { store, engine, day, bundleOf };
}

describe('a day under a Verifiable Intent L2 autonomous credential', () => {
  it('spends the budget across two sessions of one store: within admitted, over refused, the exact rest admitted; replay re-derives each day', async () => {
    const { store, day, bundleOf } = await setup();
    const a = await day('desk-a');
    const b = await day('desk-b');
    const s = T0 / 1000;
    expect(await a(await purchase({ amount: 27_999, nonce: 'p1', iat: s }), T0)).toMatchObject({ admitted: true, use: 0, spent_before: 0 });
    expect(await b(await purchase({ amount: 20_000, nonce: 'p2', iat: s + 1 }), T0 + 1000)).toMatchObject({ admitted: true, use: 1, spent_before: 27_999, external: [{ use: 0, amount: 27_999 }] });
    // 47 999 of 50 000 minor units spent: 5 000 more would exceed the budget; 2 001 fits exactly.
    expect(await a(await purchase({ amount: 5_000, nonce: 'p3', iat: s + 2 }), T0 + 2000)).toMatchObject({ admitted: false, code: 'constraint-violated', violations: ['payment.budget'], spent_before: 47_999 });
    expect(await a(await purchase({ amount: 2_001, nonce: 'p4', iat: s + 3 }), T0 + 3000)).toMatchObject({ admitted: true, use: 2, spent_before: 47_999 });
    expect(await b(await purchase({ amount: 30_001, nonce: 'p5', iat: s + 4 }), T0 + 4000)).toMatchObject({ admitted: false, violations: ['payment.amount_range', 'payment.budget'] });

    const rb = await replay([await bundleOf(b.sessionId)], { ruler: (st) => createAp2Ruler({ store: st }) });
    expect(rb.ok, JSON.stringify(rb).slice(0, 1500)).toBe(true);
    if (rb.ok) expect(rb.externalFacts.map((f) => [f.kind, f.nonce])).toEqual([['ap2-use', 'use:0'], ['ap2-use', 'use:2']]);
    const ra = await replay([await bundleOf(a.sessionId)], { ruler: (st) => createAp2Ruler({ store: st }) });
    expect(ra.ok, JSON.stringify(ra).slice(0, 1500)).toBe(true);
    if (ra.ok) expect(ra.externalFacts.map((f) => f.nonce)).toEqual(['use:1']);
    // tally replay picks the AP2 ruler from spec.vi and agrees.
    const file = join(dirs[dirs.length - 1]!, 'desk-a.bundle');
    writeFileSync(file, await bundleOf(a.sessionId));
    const cli = await inProcess(['replay', file]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/all 3 rulings re-derived/);
    expect(cli.stdout).toMatch(/^ruler +ap2$/m);
    await store.close();
  });

  it('refuses an L3a the chain does not authorise, each with its code', async () => {
    const { store, day } = await setup();
    const a = await day('desk');
    const s = T0 / 1000;
    const at = (k: number) => T0 + k * 1000;
    expect(await a(await purchase({ amount: 100, nonce: 'k1', iat: s, key: 'other' }), at(1))).toMatchObject({ admitted: false, code: 'kb-signature' });
    expect(await a(await purchase({ amount: 100, nonce: 'k2', iat: s, kid: 'agent-key-2' }), at(2))).toMatchObject({ admitted: false, code: 'kb-header' });
    expect(await a(await purchase({ amount: 100, nonce: 'k3', iat: s, over: { cnf: { jwk: keys['agent']!.public } } }), at(3))).toMatchObject({ admitted: false, code: 'kb-claims' });
    expect(await a(await purchase({ amount: 100, nonce: 'k4', iat: s, txFor: 'another checkout' }), at(4))).toMatchObject({ admitted: false, code: 'closed-transaction-id' });
    expect(await a(await purchase({ amount: 100, nonce: 'k5', iat: s, sdHash: b64sha(cred.l2) }), at(5))).toMatchObject({ admitted: false, code: 'kb-sd-hash' });
    expect(await a(await purchase({ amount: 100, nonce: 'k6', iat: s, mandate: { vct: 'mandate.payment.open' } }), at(6))).toMatchObject({ admitted: false, code: 'closed-vct' });
    expect(await a(await purchase({ amount: 100, nonce: 'k7', iat: s, over: { exp: s + 3_601 } }), at(7))).toMatchObject({ admitted: false, code: 'kb-claims' });
    expect(await a(await purchase({ amount: 100, nonce: 'k8', iat: s }), at(8))).toMatchObject({ admitted: true });
    expect(await a(await purchase({ amount: 100, nonce: 'k8', iat: s }), at(9))).toMatchObject({ admitted: false, code: 'kb-replayed' });
    // The credential itself at a frame time past the L2's exp.
    const late = T0 + 31 * 86_400_000;
    expect(await a(await purchase({ amount: 100, nonce: 'k9', iat: late / 1000 }), late)).toMatchObject({ admitted: false, code: 'mandate-expired' });
    await store.close();
  });

  it('refuses at open a spec whose vi member is malformed', async () => {
    const { store, engine } = await setup();
    const bad = await engine.open({ name: 'x', vi: { l1: cred.l1, l2: cred.l2, issuer: keys['issuer']!.private, audience: AUD } } as never);
    expect(bad.ok).toBe(false);
    const noAudience = await engine.open({ name: 'y', vi: { l1: cred.l1, l2: cred.l2, issuer: keys['issuer']!.public } } as never);
    expect(noAudience.ok).toBe(false);
    // Parties come as a pair of {iss, key}: one alone, or a bare name, is refused.
    const party = { iss: 'https://audioshop.example.com/checkout', key: keys['merchant']!.public };
    const onlyMerchant = await engine.open({ name: 'z', vi: { l1: cred.l1, l2: cred.l2, issuer: keys['issuer']!.public, audience: AUD, merchant: party } } as never);
    expect(onlyMerchant.ok).toBe(false);
    const bareName = await engine.open({ name: 'w', vi: { l1: cred.l1, l2: cred.l2, issuer: keys['issuer']!.public, audience: AUD, merchant: party, provider: 'https://wallet.example' } } as never);
    expect(bareName.ok).toBe(false);
    const both = await engine.open({ name: 'v', vi: { l1: cred.l1, l2: cred.l2, issuer: keys['issuer']!.public, audience: AUD, merchant: party, provider: { ...party, iss: 'https://wallet.example' } } } as never);
    expect(both.ok).toBe(true);
    await store.close();
  });
});

/**
 * A spec.vi that pins the merchant and the credential provider (§16.10): each
 * turn is the agent's L3b (to the merchant) and L3a (to the network) pair,
 * the L3b's checkout JWT is the merchant's and its cart meets the L2
 * checkout mandate's constraints, and AP2's receipts and its rule "no second
 * presentation without a receipt for the previous one" apply, by the same
 * code as an AP2 session's.
 */
describe('a VI day whose spec pins the merchant and the provider', () => {
  const MERCHANT = { iss: 'https://audioshop.example.com/checkout', key: keys['merchant']! };
  const checkoutDisclosure = cred.l2.split('~').slice(1, -1).find((d) => (JSON.parse(Buffer.from(d, 'base64url').toString()) as [string, { vct: string }])[1].vct === 'mandate.checkout.open')!;
  const ITEM = { id: 'WH-1000XM5', title: 'Sony WH-1000XM5 Wireless Headphones' };

  async function pair(o: { amount: number; nonce: string; iat: number; merchant?: typeof PAYEE; cartBy?: string; l3bBy?: string; txFor?: string }) {
    const checkoutJwt = await new CompactSign(new TextEncoder().encode(JSON.stringify({ id: `checkout-${o.nonce}`, merchant: o.merchant ?? PAYEE, line_items: [{ id: 'li_1', item: ITEM, quantity: 1 }] })))
      .setProtectedHeader({ alg: 'ES256', typ: 'JWT' }).sign(await importJWK(keys[o.cartBy ?? 'merchant']!.private, 'ES256'));
    const agentInst = async (k: string) => new SDJwtInstance<Record<string, unknown>>({ signer: await ES256.getSigner(keys[k]!.private), signAlg: 'ES256', hasher: (d, a) => digest(d, a ?? 'sha-256'), hashAlg: 'sha-256', saltGenerator: generateSalt });
    const finalCheckout = { vct: 'mandate.checkout', checkout_jwt: checkoutJwt, checkout_hash: b64sha(checkoutJwt) };
    const l3b = await (await agentInst(o.l3bBy ?? 'agent')).issue({ nonce: `b-${o.nonce}`, aud: MERCHANT.iss, iat: o.iat, exp: o.iat + 300, sd_hash: b64sha(`${cred.l2.split('~')[0]}~${checkoutDisclosure}~`), delegate_payload: [finalCheckout] }, { delegate_payload: { _sd: [0] } } as never, { header: { typ: 'kb-sd-jwt', kid: 'agent-key-1' } });
    const finalPayment = { vct: 'mandate.payment', payment_instrument: { type: 'mastercard.srcDigitalCard', id: 'f199c3dd' }, payment_amount: { amount: o.amount, currency: 'USD' }, payee: PAYEE, transaction_id: b64sha(o.txFor ?? checkoutJwt) };
    const l3a = await (await agentInst('agent')).issue({ nonce: o.nonce, aud: AUD, iat: o.iat, exp: o.iat + 300, sd_hash: b64sha(`${cred.l2.split('~')[0]}~${paymentDisclosure}~`), delegate_payload: [finalPayment] }, { delegate_payload: { _sd: [0] } } as never, { header: { typ: 'kb-sd-jwt', kid: 'agent-key-1' } });
    return { body: new TextEncoder().encode(JSON.stringify({ checkout: l3b, payment: l3a })), reference: b64sha(l3a) };
  }

  it('rules L3b + L3a pairs under the receipt rule, refuses what the L3b does not authorise, and replays', async () => {
    const { store, engine, bundleOf } = await setup();
    const provider = await keyPair();
    const PROVIDER_ISS = 'https://wallet.example/receipts';
    const o = await engine.open({ name: 'desk', vi: { l1: cred.l1, l2: cred.l2, issuer: keys['issuer']!.public, audience: AUD, merchant: { iss: MERCHANT.iss, key: MERCHANT.key.public }, provider: { iss: PROVIDER_ISS, key: provider.publicKey } } } as never);
    if (!o.ok) throw new Error(o.message);
    let ordinal = -1;
    const turn = async (body: Uint8Array, time: number, receiptFor?: string) => {
      const data = receiptFor === undefined ? undefined : { ap2: { receipts: [{ type: 'payment', jwt: await new CompactSign(new TextEncoder().encode(JSON.stringify({ iss: PROVIDER_ISS, iat: time / 1000, reference: receiptFor, status: 'Success', payment_id: 'pay-1', psp_confirmation_id: 'psp-1', network_confirmation_id: 'net-1' }))).setProtectedHeader({ alg: 'ES256', typ: 'JWT' }).sign(await importJWK(provider.privateKey, 'ES256')) }] } };
      const f = await engine.frame({ sessionId: o.sessionId, ordinal, time, ...(data ? { data } : {}) });
      if (!f.ok) throw new Error(f.message);
      ordinal++;
      const t = await engine.turn({ sessionId: o.sessionId, ordinal: f.ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: body } });
      if (!t.ok) throw new Error(t.message);
      return (t.ruling as { ap2: Record<string, unknown> }).ap2;
    };
    const s = T0 / 1000;
    const p1 = await pair({ amount: 10_000, nonce: 'q1', iat: s });
    expect(await turn(p1.body, T0)).toMatchObject({ admitted: true, use: 0, reference: p1.reference });
    const p2 = await pair({ amount: 10_000, nonce: 'q2', iat: s });
    expect(await turn(p2.body, T0 + 1000)).toMatchObject({ admitted: false, code: 'receipt-missing' });
    expect(await turn(p2.body, T0 + 2000, p1.reference)).toMatchObject({ admitted: true, use: 1, previous_receipt: { reference: p1.reference, in_frame: true }, receipts: [{ type: 'payment', reference: p1.reference, status: 'Success' }] });
    const soundstore = { id: 'soundstore', name: 'SoundStore', website: 'https://soundstore.example.com' };
    expect(await turn((await pair({ amount: 100, nonce: 'q3', iat: s, merchant: soundstore })).body, T0 + 3000, p2.reference)).toMatchObject({ admitted: false, code: 'constraint-violated', violations: ['checkout.allowed_merchants'] });
    expect(await turn((await pair({ amount: 100, nonce: 'q4', iat: s, l3bBy: 'other' })).body, T0 + 4000)).toMatchObject({ admitted: false, code: 'kb-signature' });
    expect(await turn((await pair({ amount: 100, nonce: 'q5', iat: s, cartBy: 'other' })).body, T0 + 5000)).toMatchObject({ admitted: false, code: 'checkout-signature' });
    expect(await turn((await pair({ amount: 100, nonce: 'q6', iat: s, txFor: 'another checkout' })).body, T0 + 6000)).toMatchObject({ admitted: false, code: 'closed-transaction-id' });
    // The payment side alone is not a turn of this session.
    expect(await turn(await purchase({ amount: 100, nonce: 'q7', iat: s }), T0 + 7000)).toMatchObject({ admitted: false, code: 'turn-malformed' });

    const r = await replay([await bundleOf(o.sessionId)], { ruler: (st) => createAp2Ruler({ store: st }) });
    expect(r.ok, JSON.stringify(r).slice(0, 1500)).toBe(true);
    await store.close();
  });
});

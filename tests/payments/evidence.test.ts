/**
 * Dispute evidence packs: built from a day with the engine's notary, verified offline with only
 * the verifier key. A settled-after-UNKNOWN payment proves its offer, payload, ruling, the
 * UNKNOWN and the receipt that reconciled it; an offer_drift refusal names `offer_drift`; an
 * UNKNOWN never reconciled names `settlement_unknown`. Mutations of a pack are refused.
 */
import { describe, expect, it } from 'vitest';
import { buildPaymentEvidence, verifyPaymentEvidence, type EvidencePack } from '../../src/payments/index.js';
import { createNotary, generateEngineKey } from '../../src/receipt/index.js';
import { PayDesk, paymentRequired, receiptOf, requirement, signPayment } from './fixtures.js';
import { principal } from '../referee/fixtures.js';

const key = generateEngineKey('tally.example/x402');
const notary = createNotary({ key });
const verifiers = [key.verifierKey];

async function day() {
  const desk = await PayDesk.open();
  const a = await signPayment({ seq: 1 });
  await desk.pay(a); // ticket 1
  await desk.pay(await signPayment({ seq: 2 }), { settlements: [{ ticket: 1, unknown: 'timeout' }] }); // ticket 2
  await desk.pay(await signPayment({ seq: 3, accepted: requirement({ maxTimeoutSeconds: 121 }) }), { required: paymentRequired([requirement()]) }); // offer_drift
  await desk.wake({ settlements: [{ ticket: 1, receipt: receiptOf(a) as never }] });
  const sealed = await notary.sealWithReceipt(desk.engine, desk.sid);
  if (!sealed.ok) throw new Error('seal');
  return { desk, signedCheckpoint: sealed.signedCheckpoint };
}

describe('x402 evidence packs', async () => {
  const { desk, signedCheckpoint } = await day();
  const build = async (select: Parameters<typeof buildPaymentEvidence>[0]['select']) => {
    const r = await buildPaymentEvidence({ engine: desk.engine, notary, sessionId: desk.sid, select, signedCheckpoint });
    if (!r.ok) throw new Error(r.message);
    return r.pack;
  };

  it('a payment settled after UNKNOWN: mandate, offer, payload, ruling, the UNKNOWN and the reconciling receipt, under the sealed checkpoint', async () => {
    const pack = await build({ ticket: 1 });
    expect(pack.entries.map((e) => e.role)).toEqual(['genesis', 'offer', 'payment', 'settlement-frame', 'settlement-turn', 'settlement-frame', 'settlement-turn']);
    const v = await verifyPaymentEvidence(JSON.parse(JSON.stringify(pack)), { verifiers });
    expect(v).toMatchObject({ ok: true, session: desk.sid, principal: principal.address.toLowerCase(), rederived: true, state: 'SETTLED', transaction: `0x${'ab'.repeat(32)}`, reasons: [] });
    expect(v.ok && v.settlements.map((s) => (s.ok ? s.state : s.code))).toEqual(['UNKNOWN', 'SETTLED']);
  });

  it('selects a payment by its transaction key (payer, payTo, value, nonce) too', async () => {
    const byTicket = await build({ ticket: 1 });
    const v = await verifyPaymentEvidence(byTicket, { verifiers });
    if (!v.ok || !v.payment.admitted) throw new Error('setup');
    const byKey = await build({ payer: v.payment.payer, payTo: v.payment.pay_to, value: v.payment.value, nonce: v.payment.nonce });
    expect(byKey).toEqual(byTicket);
  });

  it('a payment with no settlement fact names settlement_unknown; an offer_drift refusal names offer_drift', async () => {
    expect(await verifyPaymentEvidence(await build({ ticket: 2 }), { verifiers })).toMatchObject({ ok: true, state: 'RESERVED', reasons: ['settlement_unknown'] });
    const entries = await (async () => {
      const out: { ruling?: { x402?: { payment?: { admitted: boolean; code?: string; payment_hash: string } } } }[] = [];
      for await (const l of desk.engine.exportEntries(desk.sid)) out.push(JSON.parse(new TextDecoder().decode(l)));
      return out;
    })();
    const drift = entries.find((e) => e.ruling?.x402?.payment?.code === 'offer_drift')!.ruling!.x402!.payment!;
    expect(await verifyPaymentEvidence(await build({ paymentHash: drift.payment_hash }), { verifiers })).toMatchObject({ ok: true, rederived: true, state: undefined, reasons: ['offer_drift'] });
  });

  it('refuses a pack under another key, with a receipt edited, a role swapped or an entry removed', async () => {
    const pack = await build({ ticket: 1 });
    expect(await verifyPaymentEvidence(pack, { verifiers: [generateEngineKey('tally.example/x402').verifierKey] })).toMatchObject({ ok: false, code: 'receipt_invalid' });
    const edit = (f: (p: { -readonly [K in keyof EvidencePack]: EvidencePack[K] } & { entries: { role: string; receipt: string }[] }) => void): unknown => {
      const p = structuredClone(pack) as never;
      f(p);
      return p;
    };
    const flipped = edit((p) => {
      const r = p.entries[2]!.receipt;
      const at = r.indexOf('extra ') + 20;
      p.entries[2]!.receipt = r.slice(0, at) + (r[at] === 'A' ? 'B' : 'A') + r.slice(at + 1);
    });
    expect(await verifyPaymentEvidence(flipped, { verifiers })).toMatchObject({ ok: false, code: 'receipt_invalid' });
    expect(await verifyPaymentEvidence(edit((p) => { p.entries[1]!.role = 'settlement-frame'; }), { verifiers })).toMatchObject({ ok: false, code: 'evidence_malformed' });
    expect(await verifyPaymentEvidence(edit((p) => { p.entries.splice(0, 1); }), { verifiers })).toMatchObject({ ok: false, code: 'evidence_malformed' });
    expect(await verifyPaymentEvidence(edit((p) => { p.payment_hash = '0'.repeat(64); }), { verifiers })).toMatchObject({ ok: false, code: 'evidence_malformed' });
    expect(await verifyPaymentEvidence({ ...pack, format: 'x' }, { verifiers })).toMatchObject({ ok: false, code: 'evidence_malformed' });
  });
});

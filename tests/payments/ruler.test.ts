/**
 * The payment referee offline: one admitted payment, then every refusal code made by mutating
 * that one good payment (or its offer, or the policy) in exactly one way. Each refusal leaves the
 * nonce free and the budget untouched; an admission reserves the nonce store-wide.
 */
import { describe, expect, it } from 'vitest';
import { PAYMENT_REFUSAL_CODES, PAYMENT_JUDGE_CODES, paymentNonceKey, type PaymentRefusalCode } from '../../src/payments/index.js';
import { utf8, type CanonicalObject } from '../../src/protocol/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { ASSET, KEY_STRANGER, NETWORK, PAYEE, PayDesk, STRANGER, agent, frameAt, nonceOf, paySpec, paymentRequired, policy, requirement, secs, signPayment } from './fixtures.js';

describe('payment referee: admission', () => {
  it('admits a payment that matches its offer and the policy, reserves the nonce, and locks the value', async () => {
    const desk = await PayDesk.open();
    const payload = await signPayment();
    const t = await desk.pay(payload);
    expect(t.x402.payment).toMatchObject({
      admitted: true,
      agent_id: 'payer',
      payer: agent.address.toLowerCase(),
      pay_to: PAYEE.toLowerCase(),
      network: NETWORK,
      asset: ASSET.toLowerCase(),
      value: '10000',
      nonce: nonceOf(1),
      ticket: 1,
      state: 'RESERVED',
    });
    expect(t.x402.budgets).toEqual([{ network: NETWORK, asset: ASSET.toLowerCase(), budget: '50000', used: '0', locked: '10000', free: '40000' }]);
    const owner = await desk.engine.store.nonceOwner(paymentNonceKey(NETWORK, ASSET, agent.address), nonceOf(1));
    expect(owner).toMatchObject({ sessionId: desk.sid, index: t.index });
  });

  it('a payment turn must be canonical JSON: the same payload re-encoded with other whitespace is refused', async () => {
    const desk = await PayDesk.open();
    const payload = await signPayment();
    const loose = utf8(JSON.stringify({ x402: { agent_id: 'payer', offer: 'o--1', payload } }, null, 1));
    const t = await desk.wake({ offers: [paymentRequired()], body: loose });
    expect(t.x402.payment).toMatchObject({ admitted: false, code: 'payment_malformed' });
  });
});

type Case = [PaymentRefusalCode, string, (desk: PayDesk) => Promise<{ x402: { payment?: unknown } }>];

const req = requirement();
const cases: Case[] = [
  ['payment_malformed', 'signature of 64 bytes', async (d) => {
    const p = await signPayment();
    const inner = p['payload'] as { signature: string };
    return d.pay({ ...p, payload: { ...(p['payload'] as CanonicalObject), signature: inner.signature.slice(0, 130) } });
  }],
  ['payment_malformed', 'an unknown member in the authorization', async (d) => {
    const p = await signPayment();
    const inner = p['payload'] as { authorization: CanonicalObject; signature: string };
    return d.pay({ ...p, payload: { signature: inner.signature, authorization: { ...inner.authorization, memo: 'x' } } });
  }],
  ['scheme_unsupported', 'x402 version 1', async (d) => d.pay({ ...(await signPayment()), x402Version: 1 })],
  ['scheme_unsupported', 'scheme upto', async (d) => d.pay(await signPayment({ accepted: requirement({ scheme: 'upto' }) }))],
  ['unknown_agent', 'an agent id the session does not register', async (d) => d.pay(await signPayment(), { agentId: 'ghost' })],
  ['offer_drift', 'accepted differs from the offered requirement in one member', async (d) => d.pay(await signPayment({ accepted: requirement({ maxTimeoutSeconds: 121 }) }), { required: paymentRequired([req]) })],
  ['offer_drift', 'the offer id names no offer of the answered frame', async (d) => d.pay(await signPayment(), { offer: 'o-99' })],
  ['signature_invalid', 'signed by another key for the same from', async (d) => d.pay(await signPayment({ key: KEY_STRANGER, from: agent.address }))],
  ['signature_invalid', 'signed under another token domain', async (d) => d.pay(await signPayment({ domain: { name: 'USD Coin', version: '2', chainId: 31337, verifyingContract: ASSET } }))],
  ['payer_not_signer', 'a valid authorization from another wallet', async (d) => d.pay(await signPayment({ key: KEY_STRANGER }))],
  ['network_not_allowed', 'an offer on another chain', async (d) => d.pay(await signPayment({ accepted: requirement({ network: 'eip155:8453' }) }))],
  ['asset_not_allowed', 'another token', async (d) => d.pay(await signPayment({ accepted: requirement({ asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e' }) }))],
  ['counterparty_mismatch', 'authorization.to is not the offered payTo', async (d) => d.pay(await signPayment({ to: STRANGER }))],
  ['payee_not_allowed', 'the offer pays a payee off the allowlist', async (d) => d.pay(await signPayment({ accepted: requirement({ payTo: STRANGER }) }))],
  ['amount_mismatch', 'value one unit below the offered amount', async (d) => d.pay(await signPayment({ value: '9999' }))],
  ['over_payment_cap', 'an offer above the per-payment cap', async (d) => d.pay(await signPayment({ accepted: requirement({ amount: '20001' }) }))],
  ['not_yet_valid', 'validAfter at the frame time', async (d) => d.pay(await signPayment({ validAfter: secs(frameAt(-1)) }))],
  ['expired', 'validBefore at the frame time', async (d) => d.pay(await signPayment({ validBefore: secs(frameAt(-1)) }))],
  ['retry_not_allowed', 'retry_of names no earlier payment', async (d) => d.pay(await signPayment(), { retryOf: 3 })],
];

describe('payment referee: every refusal, by one mutation of a good payment', () => {
  it.each(cases)('%s: %s', async (code, _what, run) => {
    const desk = await PayDesk.open(paySpec(`refuse-${code}-${_what}`));
    const t = await run(desk);
    expect(t.x402.payment).toMatchObject({ admitted: false, code });
    // Nothing reserved, nothing locked.
    expect(await desk.engine.store.nonceOwner(paymentNonceKey(NETWORK, ASSET, agent.address), nonceOf(1))).toBeUndefined();
    // The same desk still admits the unmutated payment afterwards.
    expect((await desk.pay(await signPayment())).x402.payment).toMatchObject({ admitted: true, ticket: 1 });
  });

  it('over_budget: used + locked + value above the budget', async () => {
    const desk = await PayDesk.open(paySpec('budget', policy({ budget: '15000' })));
    expect((await desk.pay(await signPayment({ seq: 1 }))).x402.payment).toMatchObject({ admitted: true });
    expect((await desk.pay(await signPayment({ seq: 2 }))).x402.payment).toMatchObject({ admitted: false, code: 'over_budget', message: 'used 0 + locked 10000 + 10000 > budget 15000' });
  });

  it('settlement_unknown: a retry while the first attempt may still settle', async () => {
    const desk = await PayDesk.open(paySpec('retry-unknown'));
    await desk.pay(await signPayment({ seq: 1 }));
    const t = await desk.pay(await signPayment({ seq: 2 }), { retryOf: 1, settlements: [{ ticket: 1, unknown: 'timeout' }] });
    expect(t.x402.settlements).toEqual([{ ticket: 1, ok: true, state: 'UNKNOWN' }]);
    expect(t.x402.payment).toMatchObject({ admitted: false, code: 'settlement_unknown' });
  });

  it('duplicate_execution: the same authorization again, in this session or another of the store, names its first owner', async () => {
    const store = new MemoryStore();
    const desk = await PayDesk.open(paySpec('dup-a'), store);
    const payload = await signPayment();
    const first = await desk.pay(payload);
    const again = await desk.pay(payload);
    expect(again.x402.payment).toMatchObject({ admitted: false, code: 'duplicate_execution', first: { payment_hash: (first.x402.payment as { payment_hash: string }).payment_hash, session: desk.sid, index: first.index } });
    const other = await PayDesk.open(paySpec('dup-b'), store);
    expect((await other.pay(payload)).x402.payment).toMatchObject({ admitted: false, code: 'duplicate_execution', first: { session: desk.sid } });
  });

  it('payment-identifier: the same id with the same payload gets the recorded answer (first), with another payload payment_id_conflict', async () => {
    const desk = await PayDesk.open(paySpec('payment-id'));
    const withId = (p: CanonicalObject, id: string): CanonicalObject => ({ ...p, extensions: { 'payment-identifier': { info: { required: true, id } } } });
    const a = withId(await signPayment({ seq: 1 }), 'pay_0123456789abcdef');
    const first = await desk.pay(a);
    expect(first.x402.payment).toMatchObject({ admitted: true, ticket: 1 });
    const hash = (first.x402.payment as { payment_hash: string }).payment_hash;
    expect((await desk.pay(a)).x402.payment).toMatchObject({ admitted: false, code: 'duplicate_execution', first: { payment_hash: hash, session: desk.sid, index: first.index } });
    const b = withId(await signPayment({ seq: 2 }), 'pay_0123456789abcdef');
    expect((await desk.pay(b)).x402.payment).toMatchObject({ admitted: false, code: 'payment_id_conflict', first: { payment_hash: hash, nonce: 'pay_0123456789abcdef' } });
    // Another id for the same new authorization is a new payment.
    expect((await desk.pay(withId(b, 'pay_fedcba9876543210'))).x402.payment).toMatchObject({ admitted: true, ticket: 2 });
    // An id outside x402's rule (16–128 of [A-Za-z0-9_-]) is malformed.
    expect((await desk.pay(withId(await signPayment({ seq: 3 }), 'short'))).x402.payment).toMatchObject({ admitted: false, code: 'payment_malformed' });
  });

  it('covers every refusal code', () => {
    // The judges' codes (§17.10) are ruled in tests/payments/judges.test.ts and by the judged x402 vectors.
    const seen = new Set([...cases.map((c) => c[0]), 'over_budget', 'settlement_unknown', 'duplicate_execution', 'payment_id_conflict', ...PAYMENT_JUDGE_CODES]);
    expect([...seen].sort()).toEqual([...PAYMENT_REFUSAL_CODES].sort());
  });
});

describe('payment referee: the spec', () => {
  it.each([
    [{ ...policy(), version: 2 }, /version must be 1/],
    [policy({ per_payment_cap: '1.5' }), /per_payment_cap/],
    [policy({ budget: 50000 }), /budget/],
    [policy({ network: 'base' }), /CAIP-2/],
    [policy({ decimals: 37 }), /decimals/],
    [policy({}, []), /payees/],
    [{ ...policy(), extra: 1 }, /unknown member/],
  ])('refuses a malformed policy at open (%#)', async (p, message) => {
    const desk = PayDesk.open(paySpec(`spec-${String(message)}`, p as CanonicalObject));
    await expect(desk).rejects.toThrow(message);
  });

  it('turns that carry no x402 member are ruled by the inner ruler as before', async () => {
    const desk = await PayDesk.open();
    const t = await desk.wake({ body: utf8('plain words') });
    expect(t.ruling).toBeUndefined();
  });
});

describe('payment codes catalogue', () => {
  it('has one row per payment refusal and settlement fact code, in check order, each with when and fix', async () => {
    const { PAYMENT_RULING_CATALOGUE, SETTLEMENT_FACT_CODES } = await import('../../src/payments/index.js');
    expect(PAYMENT_RULING_CATALOGUE.map((r) => r.code)).toEqual([...PAYMENT_REFUSAL_CODES, ...SETTLEMENT_FACT_CODES]);
    for (const r of PAYMENT_RULING_CATALOGUE) expect(r.when.length > 20 && r.fix.length > 10, r.code).toBe(true);
  });
});

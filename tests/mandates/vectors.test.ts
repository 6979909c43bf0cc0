/**
 * docs/vectors/ap2.json against Tally's verifier (src/mandates) and against
 * the independent RFC 9901 verifier in ./rfc9901.ts: every valid vector is
 * accepted by both, every invalid one refused with the code it names, and
 * wherever the RFC alone decides (signature, disclosure digests, KB-JWT
 * signature and sd_hash) the two agree.
 */
import { readFileSync } from 'node:fs';
import type { JsonWebKey } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JWK } from 'jose';
import { evaluatePayment, readParty, signerOf, verifyCheckoutJwt, verifyClosedMandate, verifyOpenMandate, verifyReceipt, type OpenMandate, type Parties, type ReceiptType } from '../../src/mandates/index.js';
import { es256, independentVerify } from './rfc9901.js';

interface Vectors {
  keys: Record<string, { public: JWK; private: JWK }>;
  open: { name: string; presentation: string; now: number; issuer: string; agent?: string; expect: string }[];
  parties: Record<'merchant' | 'provider', { iss: string; key: string }>;
  receipts: { name: string; type: ReceiptType; jwt: string; expect: string; reference?: string }[];
  checkouts: { name: string; jwt: string; expect: string }[];
  closed: { name: string; open: string; presentation: string; now: number; aud: string; nonce: string; checkoutHashes: string[]; openCheckoutHash: string; expect: string; history?: { spent: number; uses: number }; violations?: string[] }[];
}
const V = JSON.parse(readFileSync(new URL('../../docs/vectors/ap2.json', import.meta.url), 'utf8')) as Vectors;
const pub = (k: string): JWK => V.keys[k]!.public;

const RFC_DECIDES: Record<string, keyof ReturnType<typeof independentVerify>> = {
  'sdjwt-signature': 'signature',
  'sdjwt-disclosure-digest': 'disclosuresReferenced',
  'kb-signature': 'kbSignature',
  'kb-sd-hash': 'sdHash',
};

async function openOf(name: string): Promise<OpenMandate> {
  const v = V.open.find((o) => o.name === name)!;
  const r = await verifyOpenMandate(v.presentation, { issuerKey: pub(v.issuer), now: v.now });
  if (!r.ok) throw new Error(`${name}: ${r.code}`);
  return r.value;
}

describe('AP2 open mandate vectors', () => {
  it('cover valid and each kind of invalid', () => {
    const codes = new Set(V.open.map((v) => v.expect));
    for (const c of ['ok', 'sdjwt-disclosure-digest', 'mandate-vct', 'mandate-expired', 'mandate-cnf-mismatch', 'constraint-unknown', 'budget-inexact']) expect(codes).toContain(c);
  });
  it.each(V.open.map((v) => [v.name, v] as const))('%s', async (_n, v) => {
    const r = await verifyOpenMandate(v.presentation, { issuerKey: pub(v.issuer), now: v.now, ...(v.agent ? { agentKey: pub(v.agent) } : {}) });
    expect(r.ok ? 'ok' : r.code, r.ok ? '' : r.message).toBe(v.expect);
    const ind = independentVerify(v.presentation, pub(v.issuer) as JsonWebKey);
    if (v.expect === 'ok') expect(ind).toMatchObject({ signature: true, disclosuresReferenced: true });
    const aspect = RFC_DECIDES[v.expect];
    if (aspect) expect(ind[aspect], `independent verifier on ${aspect}`).toBe(false);
  });
  it('turns the budget into exact minor units (500.5 USD is 50050, 30000 JPY is 30000)', async () => {
    const usd = (await openOf('valid-payment')).constraints.find((c) => c.type === 'payment.budget');
    const jpy = (await openOf('valid-jpy-budget')).constraints.find((c) => c.type === 'payment.budget');
    expect(usd).toMatchObject({ currency: 'USD', maxMinor: 50_050 });
    expect(jpy).toMatchObject({ currency: 'JPY', maxMinor: 30_000 });
  });
});

describe('AP2 closed payment mandate vectors', () => {
  it.each(V.closed.map((v) => [v.name, v] as const))('%s', async (_n, v) => {
    const open = await openOf(v.open);
    const r = await verifyClosedMandate(v.presentation, open, { now: v.now, aud: v.aud, nonce: v.nonce, checkoutHashes: new Set(v.checkoutHashes), openCheckoutHash: v.openCheckoutHash });
    expect(r.ok ? 'ok' : r.code, r.ok ? '' : r.message).toBe(v.expect);
    const ind = independentVerify(v.presentation, pub('user') as JsonWebKey, pub('agent') as JsonWebKey);
    if (v.expect === 'ok') expect(ind).toMatchObject({ signature: true, disclosuresReferenced: true, kbSignature: true, sdHash: true });
    const aspect = RFC_DECIDES[v.expect];
    if (aspect) expect(ind[aspect], `independent verifier on ${aspect}`).toBe(false);
    if (r.ok && r.value.kind === 'payment') {
      const violations = evaluatePayment(open.constraints, r.value.request, v.history ?? { spent: 0, uses: 0 }, v.now);
      expect(violations.map((x) => x.constraint)).toEqual(v.violations);
    }
  });
});

const FUZZ_SEED = 0xa9f2;
describe(`mutations of a valid open mandate are refused (seed ${FUZZ_SEED.toString(16)})`, () => {
  it('any one character replaced — in the JWT, a disclosure or a separator — is refused, never accepted', async () => {
    const v = V.open.find((o) => o.name === 'valid-payment')!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_~.='.split('');
    await fc.assert(fc.asyncProperty(fc.nat({ max: v.presentation.length - 1 }), fc.constantFrom(...alphabet), async (i, c) => {
      fc.pre(v.presentation[i] !== c);
      const mutated = v.presentation.slice(0, i) + c + v.presentation.slice(i + 1);
      const r = await verifyOpenMandate(mutated, { issuerKey: pub('user'), now: v.now });
      expect(r.ok).toBe(false);
    }), { seed: FUZZ_SEED, numRuns: 300 });
  });
});

describe('AP2 receipt and checkout JWT vectors (§16.8)', () => {
  const parties: Parties = {
    merchant: readParty({ iss: V.parties.merchant.iss, key: pub(V.parties.merchant.key) })!,
    provider: readParty({ iss: V.parties.provider.iss, key: pub(V.parties.provider.key) })!,
  };
  it('cover valid receipts of each type and each refusal code', () => {
    const seen = new Set(V.receipts.map((r) => `${r.expect === 'ok' ? r.type : r.expect}`));
    for (const c of ['checkout', 'payment', 'mandate', 'receipt-issuer', 'receipt-signature', 'receipt-malformed']) expect(seen).toContain(c);
  });
  it.each(V.receipts.map((v) => [v.name, v] as const))('%s', async (_n, v) => {
    const r = await verifyReceipt(v.type, v.jwt, parties);
    expect(r.ok ? 'ok' : r.code, r.ok ? '' : r.message).toBe(v.expect);
    if (r.ok) expect(r.value.reference).toBe(v.reference);
    // The independent ES256 check (node:crypto, not jose) agrees on whose key signed it.
    const own = pub(V.parties[signerOf(v.type)].key) as JsonWebKey;
    const other = pub(V.parties[signerOf(v.type) === 'merchant' ? 'provider' : 'merchant'].key) as JsonWebKey;
    if (v.expect === 'ok') expect(es256(v.jwt, own)).toBe(true);
    if (v.expect === 'receipt-signature') expect([es256(v.jwt, own), es256(v.jwt, other)]).toEqual([false, false]);
    if (v.name === 'payment-signed-by-merchant') expect([es256(v.jwt, own), es256(v.jwt, other)]).toEqual([false, true]);
  });
  it.each(V.checkouts.map((v) => [v.name, v] as const))('checkout JWT %s', async (_n, v) => {
    const r = await verifyCheckoutJwt(v.jwt, parties.merchant);
    expect(r.ok ? 'ok' : r.code).toBe(v.expect);
    if (v.name === 'merchant-signed' || v.name === 'signed-by-provider') expect(es256(v.jwt, pub('merchant') as JsonWebKey)).toBe(v.expect === 'ok');
  });
});

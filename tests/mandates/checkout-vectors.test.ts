/**
 * The checkout side of docs/vectors/ap2.json: AP2 closed checkout mandates
 * (`closedCheckout`, §16.11) against the open checkout mandate
 * `valid-checkout`, and VI L3b checkout mandates (`vi.l3b`, §16.10) over the
 * credential `valid-autonomous` — each valid one accepted with the checkout
 * constraints its cart breaks, each invalid one refused with its code. The
 * independent verifier (./rfc9901.ts, node:crypto only) agrees wherever the
 * RFC decides (signatures, disclosure digests, KB-JWT sd_hash), and checks
 * VI's selective sd_hash (credential-format.md §5.4) and the checkout hash
 * (§6.2) from the spec's formulas, not from Tally's code.
 */
import { createHash, type JsonWebKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { evaluateCheckout, readParty, verifyCheckoutMandate, verifyOpenMandate, verifyViCheckout, verifyViCredential } from '../../src/mandates/index.js';
import { es256, independentVerify } from './rfc9901.js';

interface Vectors {
  keys: Record<string, { public: JWK }>;
  parties: Record<'merchant' | 'provider', { iss: string; key: string }>;
  open: { name: string; presentation: string; now: number; issuer: string }[];
  closedCheckout: { name: string; open: string; presentation: string; now: number; aud: string; merchant: 'merchant'; expect: string; violations?: string[] }[];
  vi: {
    keys: Record<string, { public: JWK }>;
    vectors: { name: string; l1: string; l2: string; now: number; issuer: string }[];
    l3b: { name: string; credential: string; l3b: string; now: number; merchant: { iss: string; key: string }; expect: string; violations?: string[] }[];
  };
}
const V = JSON.parse(readFileSync(new URL('../../docs/vectors/ap2.json', import.meta.url), 'utf8')) as Vectors;
const b64sha = (s: string) => createHash('sha256').update(s, 'ascii').digest('base64url');
const payloadOf = (jws: string) => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
const RFC_DECIDES: Record<string, 'signature' | 'disclosuresReferenced' | 'kbSignature' | 'sdHash'> = { 'kb-signature': 'kbSignature', 'kb-sd-hash': 'sdHash' };

describe('AP2 closed checkout mandate vectors (§16.11)', () => {
  const merchant = readParty({ iss: V.parties.merchant.iss, key: V.keys[V.parties.merchant.key]!.public })!;
  it('cover a valid cart, each constraint broken, and each refusal', () => {
    const seen = new Set(V.closedCheckout.flatMap((v) => [v.expect, ...(v.violations ?? [])]));
    for (const c of ['ok', 'checkout.allowed_merchants', 'checkout.line_items', 'kb-signature', 'kb-claims', 'kb-sd-hash', 'closed-vct', 'closed-transaction-id', 'checkout-signature', 'checkout-malformed']) expect(seen).toContain(c);
  });
  it.each(V.closedCheckout.map((v) => [v.name, v] as const))('%s', async (_n, v) => {
    const o = V.open.find((x) => x.name === v.open)!;
    const open = await verifyOpenMandate(o.presentation, { issuerKey: V.keys[o.issuer]!.public, now: o.now });
    if (!open.ok) throw new Error(open.code);
    const r = await verifyCheckoutMandate(v.presentation, open.value, { now: v.now, aud: v.aud, merchant });
    expect(r.ok ? 'ok' : r.code, r.ok ? '' : r.message).toBe(v.expect);
    if (r.ok) expect(evaluateCheckout(open.value.constraints, r.value.cart).map((x) => x.constraint)).toEqual(v.violations);

    const ind = independentVerify(v.presentation, V.keys['user']!.public as JsonWebKey, V.keys['agent']!.public as JsonWebKey);
    const kb = payloadOf(v.presentation.split('~').pop()!);
    if (v.expect === 'ok') {
      expect(ind).toMatchObject({ signature: true, disclosuresReferenced: true, kbSignature: true, sdHash: true });
      // AP2 checkout_mandate.md: checkout_hash is base64url SHA-256 of checkout_jwt; the JWT is the merchant's.
      expect(kb['checkout_hash']).toBe(b64sha(kb['checkout_jwt'] as string));
      expect(es256(kb['checkout_jwt'] as string, V.keys['merchant']!.public as JsonWebKey)).toBe(true);
    }
    const aspect = RFC_DECIDES[v.expect];
    if (aspect) expect(ind[aspect], `independent verifier on ${aspect}`).toBe(false);
    if (v.expect === 'checkout-signature') expect(es256(kb['checkout_jwt'] as string, V.keys['merchant']!.public as JsonWebKey)).toBe(false);
  });
});

describe('Verifiable Intent L3b vectors (§16.10)', () => {
  it('cover a valid L3b, a merchant not allowed, and each refusal', () => {
    const seen = new Set(V.vi.l3b.flatMap((v) => [v.expect, ...(v.violations ?? [])]));
    for (const c of ['ok', 'checkout.allowed_merchants', 'kb-signature', 'kb-header', 'kb-claims', 'kb-sd-hash', 'closed-vct', 'closed-transaction-id', 'checkout-signature']) expect(seen).toContain(c);
  });
  it.each(V.vi.l3b.map((v) => [v.name, v] as const))('%s', async (_n, v) => {
    const c = V.vi.vectors.find((x) => x.name === v.credential)!;
    const cred = await verifyViCredential(c.l1, c.l2, { issuerKey: V.vi.keys[c.issuer]!.public, now: c.now });
    if (!cred.ok) throw new Error(cred.code);
    const merchant = readParty({ iss: v.merchant.iss, key: V.vi.keys[v.merchant.key]!.public })!;
    const r = await verifyViCheckout(v.l3b, cred.value, { now: v.now, merchant });
    expect(r.ok ? 'ok' : r.code, r.ok ? '' : r.message).toBe(v.expect);
    if (r.ok) expect(evaluateCheckout(r.value.constraints, r.value.cart).map((x) => x.constraint)).toEqual(v.violations);

    // Independently: the L3b is an SD-JWT under the agent key the L2 mandates name (RFC 9901 signature and digests),
    // its sd_hash is VI §5.4's selective one over the L2 base JWT and its checkout mandate disclosure.
    const agent = V.vi.keys['agent']!.public as JsonWebKey;
    const ind = independentVerify(v.l3b, agent);
    const [l2Jwt, ...l2Ds] = c.l2.split('~');
    const checkoutDisclosure = l2Ds.find((d) => d !== '' && (JSON.parse(Buffer.from(d, 'base64url').toString()) as [string, { vct?: string }])[1].vct === 'mandate.checkout.open')!;
    const sdHashOk = payloadOf(v.l3b)['sd_hash'] === b64sha(`${l2Jwt}~${checkoutDisclosure}~`);
    if (v.expect === 'ok') expect([ind.signature, ind.disclosuresReferenced, sdHashOk]).toEqual([true, true, true]);
    if (v.expect === 'kb-signature') expect(ind.signature).toBe(false);
    if (v.expect === 'kb-sd-hash') expect([ind.signature, sdHashOk]).toEqual([true, false]);
  });
});

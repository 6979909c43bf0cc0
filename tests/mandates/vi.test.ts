/**
 * The `vi` group of docs/vectors/ap2.json — Verifiable Intent v0.1 L1 and L2
 * autonomous credentials — against Tally's verifier (src/mandates/vi.ts) and
 * the independent RFC 9901 verifier (./rfc9901.ts, node:crypto only): every
 * valid vector is accepted by both, each invalid one refused with its code;
 * where the RFC alone decides (a layer's signature under the key the chain
 * names, its disclosure digests, L2's sd_hash over L1) the two agree. The
 * mapped constraints rule payments through the one AP2 evaluator, and any one
 * character changed in either layer is refused.
 */
import { createHash, type JsonWebKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import type { JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { AP2_CODES, evaluatePayment, verifyViCredential } from '../../src/mandates/index.js';
import { independentVerify } from './rfc9901.js';

interface ViVector {
  name: string; l1: string; l2: string; now: number; issuer: string; agent?: string; expect: string;
  payments?: { payee: { id: string; name: string; website?: string }; amount: number; currency: string; history: { spent: number; uses: number }; violations: string[] }[];
}
const V = (JSON.parse(readFileSync(new URL('../../docs/vectors/ap2.json', import.meta.url), 'utf8')) as { vi: { keys: Record<string, { public: JWK }>; vectors: ViVector[] } }).vi;
const pub = (k: string): JWK => V.keys[k]!.public;
const payloadOf = (compact: string) => JSON.parse(Buffer.from(compact.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

describe('Verifiable Intent L2 autonomous credential vectors', () => {
  it('cover valid and each kind of invalid, with codes of the one catalogue', () => {
    const codes = new Set(V.vectors.map((v) => v.expect));
    for (const c of ['ok', 'sdjwt-signature', 'sdjwt-disclosure-digest', 'sdjwt-header', 'mandate-vct', 'mandate-expired', 'mandate-cnf-mismatch', 'constraint-unknown', 'budget-inexact', 'vi-l1', 'vi-sd-hash', 'vi-claims', 'vi-mandates']) expect(codes).toContain(c);
    for (const c of codes) if (c !== 'ok') expect(AP2_CODES as readonly string[]).toContain(c);
  });

  it.each(V.vectors.map((v) => [v.name, v] as const))('%s', async (_n, v) => {
    const r = await verifyViCredential(v.l1, v.l2, { issuerKey: pub(v.issuer), now: v.now, ...(v.agent ? { agentKey: pub(v.agent) } : {}) });
    expect(r.ok ? 'ok' : r.code, r.ok ? '' : r.message).toBe(v.expect);

    // The independent verifier, given the key chain the L1 names (not Tally's reading of it).
    const userKey = (payloadOf(v.l1)['cnf'] as { jwk: JsonWebKey } | undefined)?.jwk;
    const l1 = independentVerify(v.l1, pub(v.issuer) as JsonWebKey);
    const l2 = userKey ? independentVerify(v.l2, userKey) : undefined;
    const sdHash = payloadOf(v.l2)['sd_hash'] === createHash('sha256').update(v.l1, 'ascii').digest('base64url');
    if (v.expect === 'ok') {
      expect(l1).toMatchObject({ signature: true, disclosuresReferenced: true });
      expect(l2).toMatchObject({ signature: true, disclosuresReferenced: true });
      expect(sdHash).toBe(true);
    }
    if (v.expect === 'vi-sd-hash') expect(sdHash).toBe(false);
    if (v.expect === 'sdjwt-signature') expect(l1.signature && l2?.signature).toBe(false);
    if (v.expect === 'sdjwt-disclosure-digest') expect(l1.disclosuresReferenced && l2?.disclosuresReferenced).toBe(false);

    if (r.ok) {
      // The chain: the agent's key is the mandates' cnf; the checkout disclosure is the pair payment.reference names.
      expect(r.value.agentKid).toBe('agent-key-1');
      expect(r.value.constraints.map((c) => c.type).sort()).toEqual(['payment.allowed_payees', 'payment.amount_range', 'payment.budget', 'payment.reference']);
      const ref = createHash('sha256').update(r.value.checkoutDisclosure, 'ascii').digest('base64url');
      for (const p of v.payments ?? []) {
        const request = { payee: p.payee, amount: p.amount, currency: p.currency, openCheckoutHash: ref };
        expect(evaluatePayment(r.value.constraints, request, p.history, v.now).map((x) => x.constraint), `${p.amount} after ${p.history.spent}`).toEqual(p.violations);
      }
    }
  });

  it('turns the budget into exact minor units (500 USD is 50000)', async () => {
    const v = V.vectors.find((x) => x.name === 'valid-autonomous')!;
    const r = await verifyViCredential(v.l1, v.l2, { issuerKey: pub('issuer'), now: v.now });
    expect(r.ok && r.value.constraints.find((c) => c.type === 'payment.budget')).toMatchObject({ currency: 'USD', maxMinor: 50_000 });
  });
});

const FUZZ_SEED = 0x51f1;
describe(`mutations of a valid VI credential are refused (seed ${FUZZ_SEED.toString(16)})`, () => {
  it('any one character replaced in L1 or L2 is refused, never accepted', async () => {
    const v = V.vectors.find((x) => x.name === 'valid-autonomous')!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_~.='.split('');
    await fc.assert(fc.asyncProperty(fc.boolean(), fc.nat({ max: 1_000_000 }), fc.constantFrom(...alphabet), async (inL1, n, c) => {
      const text = inL1 ? v.l1 : v.l2;
      const i = n % text.length;
      fc.pre(text[i] !== c);
      const mutated = text.slice(0, i) + c + text.slice(i + 1);
      const r = await verifyViCredential(inL1 ? mutated : v.l1, inL1 ? v.l2 : mutated, { issuerKey: pub('issuer'), now: v.now });
      expect(r.ok).toBe(false);
    }), { seed: FUZZ_SEED, numRuns: 300 });
  });
});

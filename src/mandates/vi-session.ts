/**
 * A session whose authority is a Verifiable Intent v0.1 L2 autonomous
 * credential (PROTOCOL.md §16.10): the genesis spec carries `vi = {l1, l2,
 * issuer, audience, merchant?, provider?}` byte for byte, and each authored
 * turn is the agent's L3a payment mandate with, when the spec pins the
 * parties, its L3b checkout mandate (vi-checkout.ts), else the merchant's
 * checkout JWT. This module reads the spec and the turn, and verifies the
 * L3a against the credential (which
 * `verifyViCredential` checks at the frame's time); `createAp2Ruler` rules the
 * result with the same history and constraint code as an AP2 session.
 */
import type { JWK } from 'jose';
import type { SessionSpec } from '../protocol/index.js';
import { readCompactTurn } from './turn-body.js';
import { refuse, type MandateResult } from './codes.js';
import type { ClosedMandate } from './closed.js';
import type { Merchant, PaymentRequest } from './constraints.js';
import { b64sha256, publicP256 } from './open.js';
import { readParty, type Parties } from './receipts.js';
import { disclosureDigest, splitCompact, verifySdJwt, type VerifiedSdJwt } from './sdjwt.js';
import type { ViCredential } from './vi.js';

import { VI_SPEC_KEY } from './spec-keys.js';
export { VI_SPEC_KEY } from './spec-keys.js';
/** L3's `typ` (VI §5.2) and its longest lifetime (§5.3: at most one hour). */
export const VI_L3_TYP = 'kb-sd-jwt';
const L3_MAX_LIFETIME = 3_600;

/**
 * What every L3 is, the L3a (to the network) and the L3b (to the merchant)
 * alike, checked in this order (VI §5.2–§5.3, PROTOCOL.md §16.10): `typ`
 * kb-sd-jwt and ES256 under the mandates' `cnf.jwk`, `kid` = their
 * `cnf.kid`, no `cnf` (terminal delegation), and integer `iat`/`exp` with
 * L2 iat ≤ iat ≤ `now` < exp ≤ iat + 3600. The one copy of those checks.
 */
export async function verifyL3Envelope(l3: string, cred: ViCredential, now: number, which: 'L3a' | 'L3b'): Promise<MandateResult<VerifiedSdJwt>> {
  const sd = await verifySdJwt(l3, cred.agentKey, { typ: VI_L3_TYP });
  if (!sd.ok) {
    if (sd.code === 'sdjwt-signature') return refuse('kb-signature', `the ${which} is not signed by the mandates' cnf key`);
    if (sd.code === 'sdjwt-header') return refuse('kb-header', sd.message);
    return sd;
  }
  if (sd.value.header.kid !== cred.agentKid) return refuse('kb-header', `the ${which} kid must be the mandates' cnf.kid ${JSON.stringify(cred.agentKid)}`);
  const c = sd.value.claims;
  if (c.cnf !== undefined) return refuse('kb-claims', 'an L3 carries no cnf (terminal delegation)');
  const { iat, exp } = c;
  if (!Number.isSafeInteger(iat) || !Number.isSafeInteger(exp) || (iat as number) > now || now >= (exp as number) || (iat as number) < cred.iat || (exp as number) - (iat as number) > L3_MAX_LIFETIME) {
    return refuse('kb-claims', `${which} iat and exp must be integers with L2 iat ≤ iat ≤ frame time < exp ≤ iat + 3600`);
  }
  return sd;
}

export interface ViSpec {
  readonly l1: string;
  readonly l2: string;
  /** The L1 issuer's public key. */
  readonly issuer: JWK;
  /** The `aud` every L3a names (the payment network). */
  readonly audience: string;
  /**
   * The merchant (signs checkout JWTs and checkout receipts; an L3b's `aud`
   * is its `iss`) and the credential provider (payment and mandate
   * receipts), when the spec pins them (§16.10): then each turn is an L3b +
   * L3a pair and AP2's receipt rule applies. Absent in a spec of the
   * payment side only.
   */
  readonly parties?: Parties;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The spec's vi member, checked for shape (the chain is verified at each turn, against that frame's time). */
export function readViSpec(spec: SessionSpec): MandateResult<ViSpec> {
  const a = spec[VI_SPEC_KEY];
  const bad = refuse('ap2-spec', 'spec.vi must be {l1: "<jwt>~<d>~…~", l2: "<jwt>~<d>~…~", issuer: <EC P-256 JWK>, audience: "<string>"} or that with merchant and provider {iss, key}');
  if (!isObject(a) || typeof a.l1 !== 'string' || typeof a.l2 !== 'string' || typeof a.audience !== 'string' || a.audience === '') return bad;
  const n = Object.keys(a).length;
  if (n !== 4 && !(n === 6 && a.merchant !== undefined && a.provider !== undefined)) return bad;
  for (const t of [a.l1, a.l2]) {
    const s = splitCompact(t);
    if (!s.ok || s.value.kb !== '') return bad;
  }
  const issuer = publicP256(a.issuer);
  if (!issuer) return bad;
  const base = { l1: a.l1, l2: a.l2, issuer, audience: a.audience };
  if (n === 4) return { ok: true, value: base };
  const merchant = readParty(a.merchant), provider = readParty(a.provider);
  if (!merchant || !provider) return bad;
  return { ok: true, value: { ...base, parties: { merchant, provider } } };
}

/** The turn body of a spec with parties: canonical JSON {checkout, payment} (the L3b and the L3a, each `<jwt>~<final mandate disclosure>~`). */
export function readViPairTurn(bytes: Uint8Array): { checkout: string; payment: string } | undefined {
  const v = readCompactTurn(bytes, ['checkout', 'payment']);
  return v && { checkout: v.checkout, payment: v.payment };
}

/** The turn body: canonical JSON {checkout_jwt, payment} (payment = `<l3a-jwt>~<final payment mandate disclosure>~`). */
export function readViTurn(bytes: Uint8Array): { checkoutJwt: string; payment: string } | undefined {
  const v = readCompactTurn(bytes, ['checkout_jwt', 'payment']);
  return v && { checkoutJwt: v.checkout_jwt, payment: v.payment };
}

function merchant(v: unknown): Merchant | undefined {
  if (!isObject(v) || typeof v.id !== 'string' || typeof v.name !== 'string' || (v.website !== undefined && typeof v.website !== 'string')) return undefined;
  return v.website === undefined ? { id: v.id, name: v.name } : { id: v.id, name: v.name, website: v.website as string };
}

/**
 * Verifies an L3a payment mandate against a verified credential (VI §5.7):
 * `typ` kb-sd-jwt and `kid` = the mandates' `cnf.kid`, ES256 under `cnf.jwk`,
 * no `cnf`, lifetime, `aud`, `nonce`, the selective `sd_hash` over the L2 base
 * JWT and its payment mandate disclosure, one final `mandate.payment`, and
 * `transaction_id` = base64url(SHA-256(checkout_jwt)).
 */
export async function verifyViPayment(l3: string, cred: ViCredential, opts: { now: number; aud: string; checkoutJwt: string }): Promise<MandateResult<ClosedMandate & { kind: 'payment' }>> {
  const sd = await verifyL3Envelope(l3, cred, opts.now, 'L3a');
  if (!sd.ok) return sd;
  const c = sd.value.claims;
  if (c.aud !== opts.aud) return refuse('kb-claims', `L3a aud must be ${JSON.stringify(opts.aud)}`);
  if (typeof c.nonce !== 'string' || c.nonce === '') return refuse('kb-claims', 'L3a must carry a nonce');
  if (c.sd_hash !== b64sha256(`${cred.sdjwt.jwt}~${cred.paymentDisclosure}~`)) return refuse('kb-sd-hash', "L3a sd_hash is not the SHA-256 of the L2 base JWT and its payment mandate disclosure (VI §5.4)");
  const dp = c.delegate_payload;
  const p = Array.isArray(dp) && dp.length === 1 && isObject(dp[0]) ? dp[0] : undefined;
  if (!p || p.vct !== 'mandate.payment') return refuse('closed-vct', 'an L3a delegates exactly one final mandate.payment');
  const payee = merchant(p.payee);
  const amt = p.payment_amount;
  if (typeof p.transaction_id !== 'string' || !payee || !isObject(amt) || !Number.isSafeInteger(amt.amount) || (amt.amount as number) <= 0 || typeof amt.currency !== 'string' || !isObject(p.payment_instrument) || p.cnf !== undefined) {
    return refuse('kb-claims', 'a final payment mandate carries transaction_id, payee {id, name, website?}, payment_amount {amount > 0 minor units, currency}, payment_instrument, and no cnf');
  }
  if (p.transaction_id !== b64sha256(opts.checkoutJwt)) return refuse('closed-transaction-id', 'transaction_id is not the SHA-256 of the turn\'s checkout JWT');
  const request: PaymentRequest = { payee, amount: amt.amount as number, currency: amt.currency, openCheckoutHash: disclosureDigest(cred.checkoutDisclosure) };
  return { ok: true, value: { kind: 'payment', transactionId: p.transaction_id, request, claims: { ...c, nonce: c.nonce } } };
}

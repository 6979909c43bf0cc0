/**
 * Verifiable Intent v0.1 **L3b**, the agent's final checkout mandate for the
 * merchant (spec/credential-format.md §5.2–§5.5, §5.7, §6.2; PROTOCOL.md
 * §16.10): a KB-SD-JWT (`typ` kb-sd-jwt, `kid` = the mandates' `cnf.kid`)
 * signed by the L2 mandates' `cnf.jwk`, no `cnf`, a lifetime of at most an
 * hour inside the L2's, `aud` the merchant, a `nonce` other than the L2's,
 * the selective `sd_hash` over the L2 base JWT and its checkout mandate
 * disclosure, and one final `mandate.checkout` whose `checkout_hash` is
 * SHA-256 of its `checkout_jwt`. The `checkout_jwt` must verify under the
 * merchant key the session pins, and its cart is then checked against the
 * L2 checkout mandate's constraints (renamed to AP2's, one evaluator).
 */
import { refuse, type MandateResult } from './codes.js';
import { readCart, type VerifiedCheckout } from './checkout.js';
import { parseConstraints, type Constraint } from './constraints.js';
import { b64sha256 } from './open.js';
import { verifyCheckoutJwt, type Party } from './receipts.js';
import { asAp2, type ViCredential } from './vi.js';
import { verifyL3Envelope } from './vi-session.js';

const JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A verified L3b: the checkout (as an AP2 closed checkout would give it) and the L2 checkout mandate's constraints. */
export interface VerifiedViCheckout extends VerifiedCheckout {
  readonly constraints: readonly Constraint[];
}

/** The L2 checkout mandate's constraints in AP2's vocabulary (VI requires no line items there). */
export function viCheckoutConstraints(cred: ViCredential): MandateResult<Constraint[]> {
  return parseConstraints(asAp2(cred.checkoutMandate['constraints']), 'checkout', false);
}

/** Verifies an L3b (`<l3b-jwt>~<final checkout mandate disclosure>~`) against a verified credential at `now`, for `merchant`. */
export async function verifyViCheckout(l3b: string, cred: ViCredential, opts: { now: number; merchant: Party }): Promise<MandateResult<VerifiedViCheckout>> {
  const constraints = viCheckoutConstraints(cred);
  if (!constraints.ok) return constraints;
  const sd = await verifyL3Envelope(l3b, cred, opts.now, 'L3b');
  if (!sd.ok) return sd;
  const c = sd.value.claims;
  if (c.aud !== opts.merchant.iss) return refuse('kb-claims', `L3b aud must be the merchant ${JSON.stringify(opts.merchant.iss)}`);
  if (typeof c.nonce !== 'string' || c.nonce === '' || c.nonce === cred.sdjwt.claims['nonce']) return refuse('kb-claims', "L3b must carry a nonce other than the L2's");
  if (c.sd_hash !== b64sha256(`${cred.sdjwt.jwt}~${cred.checkoutDisclosure}~`)) return refuse('kb-sd-hash', 'L3b sd_hash is not the SHA-256 of the L2 base JWT and its checkout mandate disclosure (VI §5.4)');
  const dp = c.delegate_payload;
  const m = Array.isArray(dp) && dp.length === 1 && isObject(dp[0]) ? dp[0] : undefined;
  if (!m || m.vct !== 'mandate.checkout') return refuse('closed-vct', 'an L3b delegates exactly one final mandate.checkout');
  if (typeof m.checkout_jwt !== 'string' || !JWS.test(m.checkout_jwt) || typeof m.checkout_hash !== 'string' || m.cnf !== undefined || m.constraints !== undefined || (m.line_items !== undefined && !Array.isArray(m.line_items))) {
    return refuse('kb-claims', 'a final checkout mandate carries checkout_jwt and checkout_hash, line_items only as an array, and no cnf or constraints');
  }
  if (m.checkout_hash !== b64sha256(m.checkout_jwt)) return refuse('closed-transaction-id', 'checkout_hash is not the SHA-256 of checkout_jwt');
  const signed = await verifyCheckoutJwt(m.checkout_jwt, opts.merchant);
  if (!signed.ok) return signed;
  const cart = readCart(signed.value);
  if (!cart.ok) return cart;
  return { ok: true, value: { checkoutHash: m.checkout_hash, checkoutJwt: m.checkout_jwt, nonce: c.nonce, cart: cart.value, constraints: constraints.value } };
}

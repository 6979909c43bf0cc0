/**
 * Why an AP2 mandate (an RFC 9901 SD-JWT credential) or a closed mandate
 * against it was refused. Stable codes: tests, vectors and PROTOCOL.md §16
 * name them. Expected refusals are results ({@link MandateResult}), never
 * exceptions.
 */
export const AP2_CODES = [
  // ---- the SD-JWT itself (RFC 9901), in the order they are checked
  'sdjwt-encoding', // not the one canonical compact form (`<jwt>~<disclosure>~…~`, unpadded canonical base64url)
  'sdjwt-header', // header not strict JSON, alg not ES256, typ not dc+sd-jwt, crit present, or an unknown member
  'sdjwt-signature', // ES256 signature does not verify under the issuer's (the user's) key
  'sdjwt-json', // payload or a disclosure is not strict JSON (duplicate key, bad UTF-8, …)
  'sdjwt-number', // a number whose text is not exactly its value (1e2, 10.100000000000000001, beyond 2^53)
  'sdjwt-sd-alg', // `_sd_alg` present and not "sha-256"
  'sdjwt-disclosure', // a disclosure that is not [salt, name, value] / [salt, value], or names _sd / ... / an existing claim
  'sdjwt-disclosure-digest', // a released disclosure whose digest no `_sd` / `...` entry references
  'sdjwt-duplicate-digest', // one digest referenced twice, or one disclosure released twice
  // ---- the open mandate
  'mandate-vct', // vct is not exactly mandate.payment.open.1 / mandate.checkout.open.1
  'mandate-time-missing', // iat or exp absent or not an integer
  'mandate-not-yet-valid', // frame time before iat
  'mandate-expired', // frame time at or after exp
  'mandate-cnf', // cnf is not {jwk: <EC P-256 public key>}
  'mandate-cnf-mismatch', // cnf names another key than the agent's
  'constraint-malformed', // constraints not an array of objects, or a constraint missing/with wrong members
  'constraint-unknown', // a constraint type this verifier does not know (fail closed, AP2's MUST)
  'constraint-unsupported', // a constraint type AP2 defines that Tally does not enforce yet (fail closed)
  'constraint-missing', // a constraint the mandate type requires (payment.reference, checkout.line_items)
  'currency-unknown', // not an ISO 4217 code in the exponent table
  'budget-inexact', // a budget that is not a whole number of minor units of its currency
  // ---- the closed mandate (KB-JWT) against the open one
  'kb-encoding', // KB-JWT missing or not canonical
  'kb-header', // typ not kb+jwt, alg not ES256
  'kb-signature', // not signed by the cnf key
  'kb-sd-hash', // sd_hash is not the digest of the presented SD-JWT
  'kb-claims', // iat/aud/nonce missing or wrong, or the closed mandate fields malformed
  'closed-vct', // closed vct not mandate.payment.1 / mandate.checkout.1 (or not matching the open type)
  'closed-transaction-id', // payment transaction_id is not the checkout_hash of its checkout
  // ---- a session under an open mandate (src/mandates/ruler.ts)
  'ap2-spec', // the session spec's ap2 member is not {mandate, issuer, audience, merchant, provider} (or vi not its shape)
  'turn-malformed', // an authored turn that is not the canonical JSON its session takes (§16.1, §16.10, §16.11)
  'kb-replayed', // this KB-JWT nonce was already admitted under the mandate (in any session)
  'constraint-violated', // the payment breaks a constraint given the mandate's history
  // ---- a Verifiable Intent v0.1 L2 autonomous credential (src/mandates/vi.ts, PROTOCOL.md §16.10)
  'vi-l1', // the L1 credential's claims: vct not the registry's, iss/sub missing, sd_hash present, cnf not the user's key
  'vi-sd-hash', // the L2 sd_hash is not the SHA-256 of the L1 as recorded
  'vi-claims', // L2 nonce/iss/aud/delegate_payload missing or malformed, or its exp beyond the L1's
  'vi-mandates', // not one open payment and one open checkout mandate, paired by payment.reference, with one cnf
  // ---- the other parties' signed answers (src/mandates/receipts.ts, PROTOCOL.md §16.8)
  'checkout-signature', // checkout_jwt is not an ES256 JWS under the merchant's pinned key
  'checkout-malformed', // a checkout JWT payload without merchant {id, name, website?} and line_items [{item: {id}, quantity ≥ 1}] (a checkout session, VI L3b)
  'checkout-fulfilled', // a second checkout under one open checkout mandate whose previous checkout was not rejected (line items are not split, §16.11)
  'receipt-malformed', // a receipt that is not a compact ES256 JWS of a strict JSON object with its type's members
  'receipt-signature', // a receipt whose signature verifies under neither pinned key
  'receipt-issuer', // signed by the other party's key, or iss is not the name pinned beside the key
  'receipt-reference', // a receipt that answers another closed mandate or checkout than the one it is shown for
  'receipt-missing', // a second presentation under one open mandate while the previous one has no receipt (AP2's rule)
  // ---- evidence packs (src/mandates/pack.ts, PROTOCOL.md §16.9)
  'evidence-malformed', // not a tally/ap2-evidence/1 pack, or entries missing / of another session or transaction
  'evidence-inclusion', // an entry's receipt does not verify under the pack's signed checkpoint and the pinned key
] as const;

/** One of {@link AP2_CODES}. */
export type Ap2Code = (typeof AP2_CODES)[number];

/** A refusal: the code and a sentence for people. */
export interface Ap2Refusal {
  readonly ok: false;
  readonly code: Ap2Code;
  readonly message: string;
}

/** Outcome of a check: its value, or a typed refusal. */
export type MandateResult<T> = { readonly ok: true; readonly value: T } | Ap2Refusal;

/** Builds a refusal. */
export function refuse(code: Ap2Code, message: string): Ap2Refusal {
  return { ok: false, code, message };
}

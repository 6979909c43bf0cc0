/**
 * AP2 v0.2 mandates (RFC 9901 SD-JWT credentials) as the authority of a day:
 * open mandates verified offline, closed mandates (KB-JWT) against them,
 * constraints evaluated against a history derived from the store, and the
 * ruler of a session under an open payment or checkout mandate or a VI
 * credential. See PROTOCOL.md §16.
 *
 * @example
 * const r = await verifyOpenMandate(presentation, { issuerKey: userJwk, now: 1_893_456_000 });
 * if (!r.ok) console.log(r.code); // 'mandate-expired', 'constraint-unknown', …
 */
export { AP2_CODES, refuse } from './codes.js';
export type { Ap2Code, Ap2Refusal, MandateResult } from './codes.js';
export { parseConstraints, evaluatePayment, evaluateCheckout, utcDate } from './constraints.js';
export type { Constraint, Merchant, LineItemRequirement, PaymentRequest, CheckoutRequest, MandateHistory, Violation } from './constraints.js';
export { currencyExponent, minorUnits } from './currency.js';
export { FREQUENCIES, bucketOf } from './buckets.js';
export type { Frequency } from './buckets.js';
export { canonicalB64url, disclosureDigest, exactNumbers, splitCompact, verifySdJwt } from './sdjwt.js';
export type { SdJwtHeaderRule, VerifiedSdJwt } from './sdjwt.js';
export { OPEN_VCT, b64sha256, publicP256, verifyOpenMandate } from './open.js';
export type { OpenMandate, OpenMandateOptions } from './open.js';
export { CLOSED_VCT, verifyClosedMandate } from './closed.js';
export type { ClosedMandate, ClosedOptions } from './closed.js';
export { readCart, readCheckoutTurn, verifyCheckoutMandate } from './checkout.js';
export type { VerifiedCheckout } from './checkout.js';
export { AP2_SPEC_KEY, createAp2Ruler, readAp2Spec } from './ruler.js';
export type { Ap2Spec, Ap2RulerOptions } from './ruler.js';
export { findAp2Transaction, checkAp2Evidence } from './evidence.js';
export type { Ap2Evidence, Ap2EvidenceCheck } from './evidence.js';
export { VI_TYP, VI_VCT, verifyViCredential } from './vi.js';
export type { ViCredential, ViOptions } from './vi.js';
export { VI_L3_TYP, VI_SPEC_KEY, readViPairTurn, readViSpec, readViTurn, verifyViPayment } from './vi-session.js';
export { verifyViCheckout, viCheckoutConstraints } from './vi-checkout.js';
export type { VerifiedViCheckout } from './vi-checkout.js';
export type { ViSpec } from './vi-session.js';
export { RECEIPT_TYPES, carriedReceipts, readParty, signerOf, verifyCheckoutJwt, verifyReceipt } from './receipts.js';
export type { CarriedReceipt, Parties, Party, ReceiptType, VerifiedReceipt } from './receipts.js';
export { DISPUTE_STEPS, runDisputeSteps } from './dispute.js';
export type { DisputeInput, DisputeResult, DisputeStep, Purchase, StepOutcome } from './dispute.js';
export { AP2_EVIDENCE_FORMAT, assembleAp2Evidence, verifyAp2Evidence } from './pack.js';
export type { Ap2EvidencePack, Ap2PackFacts } from './pack.js';

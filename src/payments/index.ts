/** `agent-tally/payments`: x402 payments refereed before money moves, and their settlement as facts. */
export { PAYMENT_REFUSAL_CODES, SETTLEMENT_FACT_CODES, PAYMENT_STATES } from './codes.js';
export type { PaymentRefusalCode, SettlementFactCode, PaymentState } from './codes.js';
export { parsePaymentPolicy, paymentPolicyOf, PAYMENT_POLICY_LIMITS } from './spec.js';
export type { PaymentPolicy, PaymentAsset } from './spec.js';
export { parsePaymentTurn, offersOf } from './payload.js';
export type { PaymentTurn, Authorization, Requirement, Offer } from './payload.js';
export { authorizationDigest, recoverAuthorizer, TRANSFER_WITH_AUTHORIZATION_TYPES } from './eip712.js';
export { paymentHash, paymentIdKey, paymentNonceKey, PAYMENT_TAGS } from './bytes.js';
export { AUTHORIZATION_USED_TOPIC, TRANSFER_TOPIC, readReceipt, receiptSettles, receiptEvidence } from './evidence.js';
export type { ReceiptEvidence } from './evidence.js';
export { applySettlements, budgetsOf, emptyPaymentsFold, reserve, MAX_SETTLEMENTS_PER_FRAME } from './fold.js';
export type { PaymentTicket, PaymentsFold, SettlementOutcome, BudgetFigures } from './fold.js';
export { PaymentsHistory } from './history.js';
export { createPaymentsRuler, rulePayment } from './ruler.js';
export type { PaymentsRuler, PaymentsRulerOptions, PaymentRuling, PaymentsRuling } from './ruler.js';
export { X402Runtime, PaymentRefusedError } from './runtime.js';
export type { X402RuntimeOptions, SentPayment } from './runtime.js';

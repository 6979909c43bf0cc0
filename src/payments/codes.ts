/**
 * The payment referee's vocabulary: every refusal of a payment turn and every rejected
 * settlement fact has one stable code (docs/PROTOCOL.md, "x402 payments").
 */

/** Why a payment turn is refused, in the order the checks run (the first failure is reported). */
export const PAYMENT_REFUSAL_CODES = [
  /** The turn's `x402` member, or its PaymentPayload, is not of the one accepted shape, or not canonical JSON. */
  'payment_malformed',
  /** Not x402 version 2, scheme `exact`, EIP-3009 authorization on an `eip155:` network. */
  'scheme_unsupported',
  /** The turn's `agent_id` is not in the session's signer registry. */
  'unknown_agent',
  /** `accepted` is not byte for byte (canonical JSON) a requirement the answered frame offered. */
  'offer_drift',
  /** The EIP-712 signature does not recover to `authorization.from` (or is not a canonical low-s signature). */
  'signature_invalid',
  /** `authorization.from` is not the agent's registered signer. */
  'payer_not_signer',
  /** The network is not one the session allows. */
  'network_not_allowed',
  /** The asset is not one the session allows on that network. */
  'asset_not_allowed',
  /** `authorization.to` is not the offered `payTo`. */
  'counterparty_mismatch',
  /** `authorization.to` is not on the payee allowlist. */
  'payee_not_allowed',
  /** `authorization.value` is not the offered `amount` (the exact scheme pays exactly). */
  'amount_mismatch',
  /** `value` exceeds the asset's per-payment cap. */
  'over_payment_cap',
  /** `used + locked + value` exceeds the asset's budget. */
  'over_budget',
  /** `validAfter` is not before the frame time (seconds). */
  'not_yet_valid',
  /** `validBefore` is not after the frame time (seconds). */
  'expired',
  /** `retry_of` names no earlier payment of the same requirement, or one that is not FAILED. */
  'retry_not_allowed',
  /** A retry while the first attempt's settlement is UNKNOWN (it may still have settled). */
  'settlement_unknown',
  /** The x402 `payment-identifier` was already admitted for this payer with another payload (HTTP 409 on the wire). */
  'payment_id_conflict',
  /** The EIP-3009 nonce was already admitted for this payer and asset (in any session of the store); with the same payment id, `first` is the recorded answer. */
  'duplicate_execution',
  // The judges the policy names (§17.10), asked only when every check above admits; the referee's own judge codes.
  /** A judge's answer is not signed by a judge the policy names (or, with judges_independent, is operator-signed). */
  'judge_untrusted_signer',
  /** A judge's answer is not the one strict verdict (or assessment) shape. */
  'judge_unparsable',
  /** A judge's verdict echoes another action line than this payment's. */
  'judge_action_mismatch',
  /** The judge denied the payment. */
  'judge_denied',
  /** The judge gave no usable answer (timeout, HTTP status, network, oversize, no signature, no judge configured). */
  'judge_unavailable',
  /** Fewer than the panel's quorum of judges gave a valid signed ALLOW. */
  'judge_quorum_not_met',
  /** Replay or evidence: the recorded judge answers do not answer this payment's request. */
  'judge_evidence_invalid',
] as const;

/** One of {@link PAYMENT_REFUSAL_CODES}. */
export type PaymentRefusalCode = (typeof PAYMENT_REFUSAL_CODES)[number];

/** Why a settlement fact a frame carries changes nothing. */
export const SETTLEMENT_FACT_CODES = [
  /** Not one of the accepted shapes (docs/PROTOCOL.md). */
  'settlement_malformed',
  /** No payment ticket with that id in this session. */
  'ticket_unknown',
  /** The ticket is already SETTLED or FAILED, or the fact does not apply from its state. */
  'ticket_not_open',
  /** A FAILED answer for an UNKNOWN settlement: only chain evidence decides it. */
  'settlement_unknown',
  /** The facilitator's answer names another network or payer than the ticket. */
  'settlement_mismatch',
  /** The chain evidence does not show this authorization's AuthorizationUsed and Transfer. */
  'evidence_mismatch',
  /** A lapse reported before `validBefore`, or without the authorization unused on chain. */
  'evidence_insufficient',
] as const;

/** One of {@link SETTLEMENT_FACT_CODES}. */
export type SettlementFactCode = (typeof SETTLEMENT_FACT_CODES)[number];

/** States of a payment ticket. RESERVED and UNKNOWN hold the amount; SETTLED uses it; FAILED frees it. */
export const PAYMENT_STATES = ['RESERVED', 'SETTLED', 'FAILED', 'UNKNOWN'] as const;

/** One of {@link PAYMENT_STATES}. */
export type PaymentState = (typeof PAYMENT_STATES)[number];

/**
 * Every payment ruling code and settlement fact code: its stage, when it happens and how to get
 * past it. `tally codes` prints it beside the intent and referee catalogues (source `x402`).
 */
import type { PaymentRefusalCode, SettlementFactCode } from './codes.js';

export interface PaymentCatalogueEntry {
  readonly stage: 'payment' | 'settlement';
  readonly code: PaymentRefusalCode | SettlementFactCode;
  readonly when: string;
  readonly fix: string;
}

const p = (code: PaymentRefusalCode, when: string, fix: string): PaymentCatalogueEntry => Object.freeze({ stage: 'payment', code, when, fix });
const s = (code: SettlementFactCode, when: string, fix: string): PaymentCatalogueEntry => Object.freeze({ stage: 'settlement', code, when, fix });

/** Payment refusals in check order, then settlement fact refusals (PROTOCOL.md §17.5, §17.6). */
export const PAYMENT_RULING_CATALOGUE: readonly PaymentCatalogueEntry[] = Object.freeze([
  p('payment_malformed', 'The payment turn is not canonical JSON of {x402: {agent_id, offer, payload, retry_of?}}, or its PaymentPayload breaks the exact/EIP-3009 shape.', 'Send the canonical bytes of an x402 v2 exact payload as @x402/evm signs it (X402Runtime does).'),
  p('scheme_unsupported', 'The payload is not x402 version 2, scheme exact, on an eip155 network with the EIP-3009 transfer method.', 'Pay with x402 v2 exact on an EVM chain; other schemes are not refereed.'),
  p('unknown_agent', 'The turn names an agent_id the session does not register in spec.agents.', 'Use a registered agent id (a new session registers new agents).'),
  p('offer_drift', 'payload.accepted is not, byte for byte, one of the requirements the answered frame offered under that offer id.', 'Pay exactly a requirement the 402 offered; report the PaymentRequired in the frame before paying.'),
  p('signature_invalid', 'The EIP-712 TransferWithAuthorization signature does not recover to authorization.from (wrong domain, key or a malleable signature).', 'Sign with the payer key over the token domain the offer names (extra.name, extra.version, chain id, asset).'),
  p('payer_not_signer', 'authorization.from is not the agent\'s registered signer.', 'Pay from the wallet registered for the agent.'),
  p('network_not_allowed', 'The offer is on a network spec.payments does not list.', 'Pay only on an allowed network, or have the principal sign a spec that allows it.'),
  p('asset_not_allowed', 'The offer is in a token spec.payments does not list on that network.', 'Pay only in an allowed asset.'),
  p('counterparty_mismatch', 'authorization.to is not the offered payTo.', 'Pay the payee the offer names.'),
  p('payee_not_allowed', 'The payee is not on spec.payments.payees.', 'Pay only allowlisted payees, or have the principal sign a spec that lists this one.'),
  p('amount_mismatch', 'authorization.value differs from the offered amount (the exact scheme pays exactly).', 'Authorize exactly the offered amount.'),
  p('over_payment_cap', 'The value exceeds the asset\'s per_payment_cap (atomic units).', 'Do not buy this resource under this mandate, or raise the cap in a new signed spec.'),
  p('over_budget', 'used + locked + value exceeds the asset\'s budget for the session.', 'Wait for locked payments to settle or fail, or open a session with a new budget.'),
  p('not_yet_valid', 'validAfter is not before the frame time in seconds.', 'Use validAfter in the past (x402 clients use 0).'),
  p('expired', 'validBefore is not after the frame time in seconds.', 'Sign a fresh authorization; deliver the frame promptly.'),
  p('retry_not_allowed', 'retry_of names no earlier payment of the same requirement by this payer, or one that SETTLED.', 'Retry only a FAILED payment of the same requirement; a SETTLED one needs no retry.'),
  p('settlement_unknown', 'A retry while the first attempt is RESERVED or UNKNOWN: it may still settle, so paying again could pay twice.', 'Report the first attempt\'s settlement, or reconcile its UNKNOWN with a receipt or a lapse, then retry.'),
  p('payment_id_conflict', 'The x402 payment-identifier was already admitted for this payer with another payload.', 'Use a new payment id for a new payment; resend the same payload for the same one.'),
  p('duplicate_execution', 'The EIP-3009 nonce was already admitted for this payer and asset in some session of the store (first names it).', 'Take the recorded answer of the first payment; sign a new nonce for a new one.'),
  p('judge_untrusted_signer', 'A judge\'s answer does not recover to a judge spec.payments names (or, under judges_independent, is signed by a key the operator holds).', 'Run the judges with their own keys, as the signed policy names them.'),
  p('judge_unparsable', 'A judge\'s answer is not exactly one verdict {reason, verdict, action} (or, under judge_request assessment, one assessment matrix).', 'Fix the judge; a malformed answer is never an ALLOW.'),
  p('judge_action_mismatch', 'The judge\'s verdict echoes another action line than this payment\'s (x402-pay, network/asset, value, payment hash).', 'The judge must judge this payment\'s request and copy its action line exactly.'),
  p('judge_denied', 'The judge denied the payment under spec.payments.rules.', 'Do not pay; the principal\'s rules forbid it (message has the judge\'s reason).'),
  p('judge_unavailable', 'The judge gave no usable answer: timeout, HTTP status, network, oversize, no signature, or no judge configured.', 'Bring the judge back (tally judge serve) and pay again with a fresh authorization.'),
  p('judge_quorum_not_met', 'Fewer than spec.payments.panel.quorum judges gave a valid ALLOW signed by their own named key (every answer is in verdict.panel).', 'Read each judge\'s answer in the ruling; pay only what the quorum allows.'),
  p('judge_evidence_invalid', 'Replay or an evidence pack: a recorded judge answer does not answer this payment\'s request, or is unreadable.', 'The transcript was altered: take the sealed, witnessed copy.'),
  s('settlement_malformed', 'A frame\'s settlement fact is not {ticket} with exactly one of response, unknown, receipt or lapsed of the right shape.', 'Report SettleResponse, unknown, receipt or lapse facts as PROTOCOL.md §17.6 spells them.'),
  s('ticket_unknown', 'The fact names a payment ticket this session never admitted.', 'Name the ticket the admitting ruling gave.'),
  s('ticket_not_open', 'The ticket is already SETTLED or FAILED (or already UNKNOWN for another unknown).', 'Nothing to do: its first final fact stands.'),
  s('settlement_unknown', 'A facilitator\'s FAILED answer for a ticket recorded UNKNOWN: only chain evidence decides an UNKNOWN.', 'Report the chain receipt (it settled) or, after validBefore, the lapse (it never can).'),
  s('settlement_mismatch', 'The SettleResponse names another network or payer than the ticket.', 'Report the facilitator answer for this payment.'),
  s('evidence_mismatch', 'The receipt is not a success with the token\'s AuthorizationUsed(from, nonce) and Transfer(from, to, value).', 'Report the receipt of the transaction that settled this authorization.'),
  s('evidence_insufficient', 'A lapse was reported before the authorization\'s validBefore.', 'Report the lapse only after validBefore, once authorizationState is still false.'),
]);

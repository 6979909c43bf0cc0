/**
 * Judges on payment turns (docs/PROTOCOL.md §17.10): when `spec.payments` names judges (one of
 * `judges`, or a `panel` in quorum, exactly as a mandate does), a payment every mechanical check
 * admits is put to them before money moves. The request is the referee's judge request
 * (referee/bytes.ts) over the payment's action line and fields; every answer is recorded as the
 * referee records it (referee/evidence.ts, referee/panel.ts) and re-verified, never re-asked, on
 * replay and in an evidence pack. No byte rule or verification rule of its own.
 */
import type { CanonicalObject } from '../protocol/index.js';
import { actionLine, type JudgeRequestInput } from '../referee/bytes.js';
import { askJudges, JUDGE_REFUSAL_CODES, reverifyJudges, type JudgedVerdict, type JudgeRefusalCode } from '../referee/ask-judges.js';
import type { Judging } from '../referee/judging.js';

/** The `action` field of a payment's action line and judge request. */
export const PAYMENT_JUDGE_ACTION = 'x402-pay';

/** The judges' verdict on a payment: the `verdict` member of its ruling (the referee's, ask-judges.ts). */
export type PaymentVerdict = JudgedVerdict;

/** Why judges refuse a payment (the referee's own judge codes). */
export const PAYMENT_JUDGE_CODES = JUDGE_REFUSAL_CODES;
export type PaymentJudgeCode = JudgeRefusalCode;

/** What the judges are told of one payment (every member already checked by the referee). */
export interface JudgedPayment {
  readonly instance: string;
  readonly session: string;
  readonly paymentHash: string;
  readonly agentId: string;
  readonly payer: string;
  readonly payTo: string;
  readonly network: string;
  readonly asset: string;
  readonly value: string;
  readonly nonce: string;
  readonly validAfter: string;
  readonly validBefore: string;
  /** The PaymentPayload's `resource.url`, when it names one. */
  readonly resource: string | undefined;
}

/**
 * The judge request of a payment, but for the model: the action line
 * `TALLY_ACTION_V1|<instance>|<session>|x402-pay|<network>/<asset>|<value>|<payment hash>` and the
 * payment's fields as the request's `intent` (every value a string; `size` = `value`, in atomic units).
 */
export function paymentJudgeRequest(j: Judging, p: JudgedPayment): Omit<JudgeRequestInput, 'model'> {
  const market = `${p.network}/${p.asset}`;
  const intent: CanonicalObject = {
    action: PAYMENT_JUDGE_ACTION,
    agent_id: p.agentId,
    asset: p.asset,
    market,
    network: p.network,
    nonce: p.nonce,
    pay_to: p.payTo,
    payer: p.payer,
    ...(p.resource === undefined ? {} : { resource: p.resource }),
    size: p.value,
    valid_after: p.validAfter,
    valid_before: p.validBefore,
  };
  return {
    rules: j.rules,
    action: actionLine({ instance: p.instance, session: p.session, action: PAYMENT_JUDGE_ACTION, market, size: p.value, intentHash: p.paymentHash }),
    intent,
    context: undefined,
    ...(j.judgeRequest === 'verdict' ? {} : { format: j.judgeRequest }),
  };
}

/** Asks the policy's judges about one payment (the referee's {@link askJudges}). */
export const askPaymentJudges = askJudges;

/** Replay and evidence: re-verifies a payment's recorded verdict, never asking (the referee's {@link reverifyJudges}). */
export const reverifyPaymentJudges = reverifyJudges;

/**
 * Judges on payment turns (docs/PROTOCOL.md §17.10): when `spec.payments` names judges (one of
 * `judges`, or a `panel` in quorum, exactly as a mandate does), a payment every mechanical check
 * admits is put to them before money moves. The request is the referee's judge request
 * (referee/bytes.ts) over the payment's action line and fields; every answer is recorded as the
 * referee records it (referee/evidence.ts, referee/panel.ts) and re-verified, never re-asked, on
 * replay and in an evidence pack. No byte rule or verification rule of its own.
 */
import type { CanonicalObject } from '../protocol/index.js';
import { actionLine, judgeRequestBytes, sha256Hex, type JudgeRequestInput } from '../referee/bytes.js';
import { judgedEvidence, readRecordedAnswer, settleAnswer, unavailableEvidence, type SettledAnswer } from '../referee/evidence.js';
import { isModelId, type Judge, type JudgeFailure } from '../referee/judge.js';
import type { Judging } from '../referee/judging.js';
import { askJudgeWithin, askPanel, quorumOf, reverifyPanel, type PanelAnswer, type QuorumFigures } from '../referee/panel.js';
import { cleanText } from '../referee/verdict.js';

/** The `action` field of a payment's action line and judge request. */
export const PAYMENT_JUDGE_ACTION = 'x402-pay';

/** The judges' verdict on a payment: the `verdict` member of its ruling. */
export interface PaymentVerdict {
  readonly source: 'judged';
  readonly admitted: boolean;
  /** When refused: the referee's judge code (`judge_denied`, `judge_unavailable`, `judge_quorum_not_met`, …). */
  readonly code?: PaymentJudgeCode;
  readonly message: string;
  /** One judge: who was asked, the request's hash and its answer. */
  readonly model?: string;
  readonly request_sha256?: string;
  readonly response?: string;
  readonly signature?: string;
  readonly signer?: string;
  readonly decision?: 'ALLOW' | 'DENY';
  readonly format?: 'verdict' | 'matrix';
  readonly failure?: JudgeFailure;
  readonly signed_by?: 'operator';
  /** A panel: k, n and how many valid signed ALLOWs, and every judge's answer in the policy's order. */
  readonly quorum?: QuorumFigures;
  readonly panel?: readonly PanelAnswer[];
}

/** Why judges refuse a payment (the referee's own judge codes). */
export const PAYMENT_JUDGE_CODES = ['judge_untrusted_signer', 'judge_unparsable', 'judge_action_mismatch', 'judge_denied', 'judge_unavailable', 'judge_quorum_not_met', 'judge_evidence_invalid'] as const;
export type PaymentJudgeCode = (typeof PAYMENT_JUDGE_CODES)[number];

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

const MESSAGE_MAX = 400;
const clip = (s: string): string => cleanText(Array.from(s).slice(0, MESSAGE_MAX).join(''));

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function single(j: Judging, base: Omit<JudgeRequestInput, 'model'>, model: string, requestSha256: string, a: SettledAnswer): PaymentVerdict {
  if (!a.ok) return { source: 'judged', ...unavailableEvidence(a.failure, a.message), model, request_sha256: requestSha256 };
  const e = judgedEvidence({ model, requestSha256, response: a.response, signature: a.signature, trusted: j.judges, action: base.action, ruleCount: j.rules.length, operatorSigned: a.operator, independent: j.judgesIndependent, ...(j.answerShape === undefined ? {} : { shape: j.answerShape }) });
  return { source: 'judged', ...(e.outcome as { admitted: boolean; code?: PaymentJudgeCode; message: string }), model, request_sha256: requestSha256, ...e.proof };
}

function panelVerdict(j: Judging, answers: readonly PanelAnswer[]): PaymentVerdict {
  const q = quorumOf(j.panel!, answers);
  return { source: 'judged', admitted: q.admitted, ...(q.admitted ? {} : { code: 'judge_quorum_not_met' as const }), message: clip(q.message), quorum: q.figures, panel: answers };
}

/**
 * Asks the policy's judges about one payment: a panel in parallel (each with its own timeout;
 * a late or failed judge counts as DENY), or the one judge (`clients[0]`, under the same timeout).
 */
export async function askPaymentJudges(j: Judging, base: Omit<JudgeRequestInput, 'model'>, clients: readonly Judge[], timeoutMs: number): Promise<PaymentVerdict> {
  if (j.panel !== undefined) return panelVerdict(j, await askPanel(j.panel, base, clients, timeoutMs, j.rules.length));
  const judge = clients[0];
  if (judge === undefined) {
    const requestSha256 = sha256Hex(judgeRequestBytes({ model: '-', ...base }));
    return single(j, base, '-', requestSha256, { ok: false, failure: 'no_judge', message: 'the referee has no judge configured' });
  }
  const req: JudgeRequestInput = { model: judge.model, ...base };
  const requestBytes = judgeRequestBytes(req);
  const answer = await askJudgeWithin(judge, req, requestBytes, timeoutMs);
  return single(j, base, judge.model, sha256Hex(requestBytes), settleAnswer(answer, judge.signedBy === 'operator'));
}

/**
 * Replay and evidence: re-verifies the recorded verdict against the rebuilt request — every
 * signature by its named judge key, every request hash, the quorum — never asking. A record that
 * is not an answer to this request is `judge_evidence_invalid`.
 */
export function reverifyPaymentJudges(j: Judging, base: Omit<JudgeRequestInput, 'model'>, recorded: unknown): PaymentVerdict {
  const invalid = (message: string): PaymentVerdict => ({ source: 'judged', admitted: false, code: 'judge_evidence_invalid', message });
  if (!isObject(recorded) || recorded['source'] !== 'judged') return invalid('the recorded ruling holds no judged verdict for this payment');
  // Only a replay records judge_evidence_invalid (a live engine asks): it admits nothing, and a replay of that replay keeps its words.
  if (recorded['code'] === 'judge_evidence_invalid' && recorded['admitted'] === false && typeof recorded['message'] === 'string' && Object.keys(recorded).length === 4) return invalid(clip(recorded['message']));
  if (j.panel !== undefined) {
    const answers = reverifyPanel(j.panel, base, recorded['panel'], j.rules.length);
    return typeof answers === 'string' ? invalid(answers) : panelVerdict(j, answers);
  }
  const model = recorded['model'];
  if (!isModelId(model)) return invalid('the recorded verdict names no model');
  const requestSha256 = sha256Hex(judgeRequestBytes({ model, ...base }));
  if (recorded['request_sha256'] !== requestSha256) return invalid('the recorded verdict answers another request');
  const a = readRecordedAnswer(recorded);
  if (a.ok === 'invalid') return invalid(`the recorded verdict is unreadable (${a.problem})`);
  return single(j, base, model, requestSha256, a);
}

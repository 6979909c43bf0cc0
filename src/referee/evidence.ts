/**
 * Judge evidence, one copy for the single judge (`ruler.ts`) and the panel
 * (`panel.ts`): how a judge's answer becomes the evidence a ruling records,
 * and how a recorded answer is read back on replay. The callers add who was
 * asked (`model`, `request_sha256`, and for a panel the member) around these
 * fields, each in its own key order.
 */
import { fromBase64, toBase64 } from '../protocol/index.js';
import { JUDGE_FAILURES, MAX_JUDGE_RESPONSE_BYTES, type JudgeAnswer, type JudgeFailure } from './judge.js';
import { assessVerdict, cleanText, type AssessVerdictInput } from './verdict.js';

/** Longest recorded failure message, in code points. */
const MESSAGE_MAX = 200;

/** The evidence of a judge that gave no usable answer (`judge_unavailable`). */
export interface UnavailableEvidence {
  readonly admitted: false;
  readonly code: 'judge_unavailable';
  readonly failure: JudgeFailure;
  readonly message: string;
}

/** The evidence of an answer that was assessed, in two parts the callers place around their own keys. */
export interface JudgedEvidence {
  /** What the answer means: `admitted`, `code` (when refused) and `message`. */
  readonly outcome: { readonly admitted: boolean; readonly code?: string; readonly message: string };
  /** The proof: the response bytes (standard base64), the signature and what they showed. */
  readonly proof: {
    readonly response: string;
    readonly signature: string;
    readonly signer?: string;
    readonly decision?: 'ALLOW' | 'DENY';
    readonly format?: 'verdict' | 'matrix';
    readonly signed_by?: 'operator';
  };
}

/** An answer ready to be recorded: a failure, or response bytes and a signature. */
export type SettledAnswer =
  | { readonly ok: false; readonly failure: JudgeFailure; readonly message: string }
  | { readonly ok: true; readonly response: Uint8Array; readonly signature: string; readonly operator: boolean };

/** Why a recorded answer cannot be read back (each caller words it for its own ruling). */
export type RecordedAnswerProblem = 'failure_malformed' | 'no_response' | 'signed_by';

/**
 * The unavailable evidence for `failure`, its message cleaned and cut to
 * 200 code points.
 */
export function unavailableEvidence(failure: JudgeFailure, message: string): UnavailableEvidence {
  return { admitted: false, code: 'judge_unavailable', failure, message: cleanText(Array.from(message).slice(0, MESSAGE_MAX).join('')) };
}

/**
 * Assesses an answer (see {@link assessVerdict}) and returns its evidence.
 *
 * @example
 * const e = judgedEvidence({ model, requestSha256, response, signature, trusted, action, ruleCount, operatorSigned: false });
 * const verdict = { stage: 'verdict', source: 'judged', ...e.outcome, model, request_sha256: requestSha256, ...e.proof };
 */
export function judgedEvidence(input: AssessVerdictInput & { readonly signature: string }): JudgedEvidence {
  const a = assessVerdict(input);
  return {
    outcome: { admitted: a.admitted, ...(a.code === undefined ? {} : { code: a.code }), message: a.message },
    proof: {
      response: toBase64(input.response),
      signature: input.signature,
      ...(a.signer === undefined ? {} : { signer: a.signer }),
      ...(a.decision === undefined ? {} : { decision: a.decision }),
      ...(a.format === undefined ? {} : { format: a.format }),
      ...(input.operatorSigned === true ? { signed_by: 'operator' as const } : {}),
    },
  };
}

/** What a judge that threw is recorded as: failure `error`. */
export function thrownAnswer(e: unknown): JudgeAnswer {
  return { ok: false, failure: 'error', message: `the judge threw: ${e instanceof Error ? e.message : 'error'}` };
}

/**
 * A live judge's answer as an answer to record: an over-long response is
 * failure `oversize`; `operator` when the operator holds the judge's signing key.
 */
export function settleAnswer(answer: JudgeAnswer, operator: boolean): SettledAnswer {
  if (!answer.ok) return { ok: false, failure: answer.failure, message: answer.message };
  if (answer.response.length > MAX_JUDGE_RESPONSE_BYTES) return { ok: false, failure: 'oversize', message: `the response exceeds ${MAX_JUDGE_RESPONSE_BYTES} bytes` };
  return { ok: true, response: Uint8Array.from(answer.response), signature: answer.signature, operator };
}

/**
 * Replay: reads back a recorded answer whose request the caller has already
 * matched — its recorded failure, or its response bytes, signature and
 * `signed_by` — or names what is wrong with it.
 */
export function readRecordedAnswer(ev: Readonly<Record<string, unknown>>): SettledAnswer | { readonly ok: 'invalid'; readonly problem: RecordedAnswerProblem } {
  if (ev['code'] === 'judge_unavailable') {
    const failure = ev['failure'];
    if (!(JUDGE_FAILURES as readonly unknown[]).includes(failure) || typeof ev['message'] !== 'string') return { ok: 'invalid', problem: 'failure_malformed' };
    return { ok: false, failure: failure as JudgeFailure, message: ev['message'] };
  }
  const response = typeof ev['response'] === 'string' ? fromBase64(ev['response']) : undefined;
  if (!response || typeof ev['signature'] !== 'string') return { ok: 'invalid', problem: 'no_response' };
  if (ev['signed_by'] !== undefined && ev['signed_by'] !== 'operator') return { ok: 'invalid', problem: 'signed_by' };
  return { ok: true, response, signature: ev['signature'], operator: ev['signed_by'] === 'operator' };
}

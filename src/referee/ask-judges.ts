/**
 * Asking a policy's judges about one turn, and re-checking what they answered: one judge
 * (`judges`) or a panel in quorum (`panel`), exactly as the judging members name them
 * (judging.ts). Used by every turn that is put to judges outside the trading referee's own
 * intent path: payment turns (§17.10) and MCP tool calls (§18.3 step 9). The request is the
 * referee's judge request (bytes.ts), each answer is recorded as the referee records it
 * (evidence.ts, panel.ts) and re-verified, never re-asked, on replay. No byte rule or
 * verification rule of its own.
 */
import { judgeRequestBytes, sha256Hex, type JudgeRequestInput } from './bytes.js';
import { judgedEvidence, readRecordedAnswer, settleAnswer, unavailableEvidence, type SettledAnswer } from './evidence.js';
import { isModelId, type Judge } from './judge.js';
import type { Judging } from './judging.js';
import { askJudgeWithin, askPanel, quorumOf, reverifyPanel, type JudgeAnswerFields, type PanelAnswer, type QuorumFigures } from './panel.js';
import { cleanText } from './verdict.js';

/** Why judges refuse a turn (the referee's own judge codes). */
export const JUDGE_REFUSAL_CODES = ['judge_untrusted_signer', 'judge_unparsable', 'judge_action_mismatch', 'judge_denied', 'judge_unavailable', 'judge_quorum_not_met', 'judge_evidence_invalid'] as const;
export type JudgeRefusalCode = (typeof JUDGE_REFUSAL_CODES)[number];

/** What a verdict records of its judges, wherever a ruling carries one (intents, payments, tool calls). */
export interface JudgeEvidenceFields extends JudgeAnswerFields {
  /** One judge: who was asked and the request's hash (its answer in the inherited members). */
  readonly model?: string;
  readonly request_sha256?: string;
  /** A panel: k, n and how many valid signed ALLOWs, and every judge's answer in the policy's order. */
  readonly quorum?: QuorumFigures;
  readonly panel?: readonly PanelAnswer[];
}

/** The judges' verdict on one turn: the `verdict` member of its ruling. */
export interface JudgedVerdict extends JudgeEvidenceFields {
  readonly source: 'judged';
  readonly admitted: boolean;
  /** When refused: the referee's judge code (`judge_denied`, `judge_unavailable`, `judge_quorum_not_met`, …). */
  readonly code?: JudgeRefusalCode;
  readonly message: string;
}

const MESSAGE_MAX = 400;
const clip = (s: string): string => cleanText(Array.from(s).slice(0, MESSAGE_MAX).join(''));

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function single(j: Judging, base: Omit<JudgeRequestInput, 'model'>, model: string, requestSha256: string, a: SettledAnswer): JudgedVerdict {
  if (!a.ok) return { source: 'judged', ...unavailableEvidence(a.failure, a.message), model, request_sha256: requestSha256 };
  const e = judgedEvidence({ model, requestSha256, response: a.response, signature: a.signature, trusted: j.judges, action: base.action, ruleCount: j.rules.length, operatorSigned: a.operator, independent: j.judgesIndependent, ...(j.answerShape === undefined ? {} : { shape: j.answerShape }) });
  return { source: 'judged', ...(e.outcome as { admitted: boolean; code?: JudgeRefusalCode; message: string }), model, request_sha256: requestSha256, ...e.proof };
}

function panelVerdict(j: Judging, answers: readonly PanelAnswer[]): JudgedVerdict {
  const q = quorumOf(j.panel!, answers);
  return { source: 'judged', admitted: q.admitted, ...(q.admitted ? {} : { code: 'judge_quorum_not_met' as const }), message: clip(q.message), quorum: q.figures, panel: answers };
}

/**
 * Asks the policy's judges about one turn: a panel in parallel (each with its own timeout;
 * a late or failed judge counts as DENY), or the one judge (`clients[0]`, under the same timeout).
 */
export async function askJudges(j: Judging, base: Omit<JudgeRequestInput, 'model'>, clients: readonly Judge[], timeoutMs: number): Promise<JudgedVerdict> {
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
export function reverifyJudges(j: Judging, base: Omit<JudgeRequestInput, 'model'>, recorded: unknown): JudgedVerdict {
  const invalid = (message: string): JudgedVerdict => ({ source: 'judged', admitted: false, code: 'judge_evidence_invalid', message });
  if (!isObject(recorded) || recorded['source'] !== 'judged') return invalid('the recorded ruling holds no judged verdict for this turn');
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

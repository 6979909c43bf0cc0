/**
 * A panel of independent judges in quorum (seed 003: validators re-evaluate
 * the same proposal and the verdict stands only when they agree). The mandate
 * names each judge (signer, model, optional endpoint) and a threshold k of n;
 * every judge is asked in parallel with its own request bytes and its own
 * timeout, every answer is recorded, and the intent is allowed only when at
 * least k judges gave a valid ALLOW signed by their own named key. A judge that
 * fails or times out counts as DENY for that turn. Replay never asks: it
 * re-verifies every recorded answer and applies the same rule.
 */
import { judgeRequestBytes, sha256Hex, type JudgeRequestInput } from './bytes.js';
import { judgedEvidence, readRecordedAnswer, settleAnswer, thrownAnswer, unavailableEvidence, type RecordedAnswerProblem, type SettledAnswer } from './evidence.js';
import { isModelId, type Judge, type JudgeAnswer, type JudgeFailure } from './judge.js';
import { traceJudge } from '../telemetry/index.js';

/** One judge of a mandate's panel. */
export interface PanelMember {
  /** The address its verdicts must recover to (lowercase). */
  readonly signer: string;
  /** The model id its request names. */
  readonly model: string;
  /** Where the operator reaches it (informative; the ruling does not depend on it). */
  readonly endpoint?: string;
}

/** A mandate's panel: `quorum` of `members.length` valid signed ALLOWs admit. */
export interface Panel {
  readonly members: readonly PanelMember[];
  readonly quorum: number;
  /** The mandate's `judges_independent`: answers signed by a key the operator holds do not count. */
  readonly independent?: boolean;
  /** The answer shape the request asks for (version-2 mandates); absent: either shape. */
  readonly shape?: 'verdict' | 'matrix';
}

/** What a ruling records of one judge's answer (a lone judge's verdict, or a panel member's). */
export interface JudgeAnswerFields {
  /** The exact response bytes, standard base64. */
  readonly response?: string;
  readonly signature?: string;
  /** The key the signature recovered to, when it recovers. */
  readonly signer?: string;
  readonly decision?: 'ALLOW' | 'DENY';
  readonly format?: 'verdict' | 'matrix';
  readonly failure?: JudgeFailure;
  /** `operator`: the operator's own key signed this answer (an adapter's signing mode), not the model's provider. */
  readonly signed_by?: 'operator';
}

/** One judge's recorded answer in a panel ruling. */
export interface PanelAnswer extends JudgeAnswerFields {
  /** The member (its named signer). */
  readonly judge: string;
  readonly model: string;
  readonly request_sha256: string;
  /** A valid ALLOW signed by this member. */
  readonly admitted: boolean;
  readonly code?: string;
  readonly message: string;
}

/** The `quorum` member of a panel verdict. */
export interface QuorumFigures {
  readonly k: number;
  readonly n: number;
  readonly allow: number;
}

/** The replay message for each way a recorded panel answer can be unreadable. */
const RECORDED_PROBLEM: Readonly<Record<RecordedAnswerProblem, (i: number) => string>> = {
  failure_malformed: (i) => `panel answer ${i}: the recorded failure is malformed`,
  no_response: (i) => `panel answer ${i} lacks its response bytes or signature`,
  signed_by: (i) => `panel answer ${i}: signed_by must be "operator" when present`,
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `member`'s recorded answer: its failure, or its assessed evidence. */
function answerOf(member: PanelMember, requestSha256: string, a: SettledAnswer, action: string, ruleCount: number, independent: boolean, shape: Panel['shape']): PanelAnswer {
  if (!a.ok) return { judge: member.signer, model: member.model, request_sha256: requestSha256, ...unavailableEvidence(a.failure, a.message) };
  const e = judgedEvidence({ model: member.model, requestSha256, response: a.response, signature: a.signature, trusted: [member.signer], action, ruleCount, operatorSigned: a.operator, independent, ...(shape === undefined ? {} : { shape }) });
  return { judge: member.signer, model: member.model, request_sha256: requestSha256, ...e.outcome, ...e.proof };
}

/** The judge client that answers for `member`: same model, and the same signer when the client declares one. */
function clientFor(member: PanelMember, clients: readonly Judge[]): Judge | undefined {
  return clients.find((j) => j.model === member.model && (j.signer === undefined || j.signer.toLowerCase() === member.signer));
}

/**
 * Asks one judge, answering `timeout` when it has not answered within
 * `timeoutMs` and the thrown error's failure when it throws: one judge span,
 * ending at its answer or at its timeout (a timeout is the span's failure).
 * Panel members and a payment's single judge are asked through this.
 */
export async function askJudgeWithin(judge: Judge, req: JudgeRequestInput, requestBytes: Uint8Array, timeoutMs: number): Promise<JudgeAnswer> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<JudgeAnswer>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, failure: 'timeout', message: `no answer within ${timeoutMs} ms` }), timeoutMs);
  });
  try {
    return await traceJudge(judge.model, () => Promise.race([judge.ask({ request: req, requestBytes }), late]));
  } catch (e) {
    return thrownAnswer(e);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Asks every member in parallel, each with its own timeout, and records every
 * answer in member order.
 */
export async function askPanel(panel: Panel, base: Omit<JudgeRequestInput, 'model'>, clients: readonly Judge[], timeoutMs: number, ruleCount: number): Promise<PanelAnswer[]> {
  return Promise.all(
    panel.members.map(async (member) => {
      const req: JudgeRequestInput = { model: member.model, ...base };
      const requestBytes = judgeRequestBytes(req);
      const requestSha256 = sha256Hex(requestBytes);
      const client = clientFor(member, clients);
      const independent = panel.independent === true;
      if (!client) return answerOf(member, requestSha256, { ok: false, failure: 'no_judge', message: `the referee has no client for judge ${member.signer} (${member.model})` }, base.action, ruleCount, independent, panel.shape);
      const answer = await askJudgeWithin(client, req, requestBytes, timeoutMs);
      return answerOf(member, requestSha256, settleAnswer(answer, client.signedBy === 'operator'), base.action, ruleCount, independent, panel.shape);
    }),
  );
}

/**
 * Replay: re-verifies the recorded answers (never asking), in member order;
 * a message when the record is not a panel answer to this request.
 */
export function reverifyPanel(panel: Panel, base: Omit<JudgeRequestInput, 'model'>, recorded: unknown, ruleCount: number): PanelAnswer[] | string {
  if (!Array.isArray(recorded) || recorded.length !== panel.members.length) return 'the recorded ruling does not hold one answer per panel judge';
  const out: PanelAnswer[] = [];
  for (let i = 0; i < panel.members.length; i++) {
    const member = panel.members[i]!;
    const ev: unknown = recorded[i];
    if (!isObject(ev) || ev['judge'] !== member.signer || ev['model'] !== member.model || !isModelId(ev['model'])) return `panel answer ${i} is not judge ${member.signer}'s`;
    const requestSha256 = sha256Hex(judgeRequestBytes({ model: member.model, ...base }));
    if (ev['request_sha256'] !== requestSha256) return `panel answer ${i} answers another request`;
    const a = readRecordedAnswer(ev);
    if (a.ok === 'invalid') return RECORDED_PROBLEM[a.problem](i);
    out.push(answerOf(member, requestSha256, a, base.action, ruleCount, panel.independent === true, panel.shape));
  }
  return out;
}

/**
 * The k-of-n rule: admitted iff at least `quorum` answers are valid ALLOWs
 * signed by their own member (members are distinct signers).
 *
 * @example
 * quorumOf(panel, answers); // { admitted: false, figures: { k: 2, n: 3, allow: 1 }, message: '1 of 3 judges allowed (quorum 2)' }
 */
export function quorumOf(panel: Panel, answers: readonly PanelAnswer[]): { admitted: boolean; figures: QuorumFigures; message: string } {
  const allowed = new Set(answers.filter((a) => a.admitted && a.signer === a.judge).map((a) => a.judge));
  const allow = allowed.size;
  const k = panel.quorum;
  const n = panel.members.length;
  const admitted = allow >= k;
  const split = answers.map((a) => `${a.judge.slice(0, 10)}… ${a.admitted ? 'ALLOW' : a.failure ?? a.code ?? 'DENY'}`).join('; ');
  return { admitted, figures: { k, n, allow }, message: `${allow} of ${n} judges allowed (quorum ${k}): ${split}` };
}

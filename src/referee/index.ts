/**
 * `agent-tally/referee` — a valid, authentic intent is not yet an allowed one.
 * Mandates sealed in the spec, tickets that reserve quota until the runtime
 * reports them redeemed or released, and judge verdicts signed and kept in
 * the transcript, so every policy decision replays offline.
 */
export { createRefereeRuler, checkRefereeSpec } from './ruler.js';
export type { RefereeRuler, RefereeRulerOptions, RefereeRuling, PolicyRuling, VerdictRuling, TicketRuling } from './ruler.js';
export { createRefereeEngine } from './engine.js';
export { replayRuler, specSealsMandate, REPLAY_RULERS } from './replay-ruler.js';
export type { ReplayRulerChoice } from './replay-ruler.js';
export type { RefereeEngineOptions } from './engine.js';
export { refereeState } from './describe.js';
export type { RefereeStateResult, RefereeView, TicketView } from './describe.js';
export { parseMandate, mandateOf, MANDATE_LIMITS, DEFAULT_JUDGE_RATE, DEFAULT_TICKET_TTL_MS } from './mandate.js';
export type { Mandate, ParseMandateOptions, ParseMandateResult, SealedMandate } from './mandate.js';
export {
  MANDATE_VERSION,
  MANDATE_SIGNATURE_SCHEMES,
  MANDATE_EIP712_DOMAIN,
  MANDATE_EIP712_TYPES,
  MANDATE_EIP191_PREFIX,
  mandateSignedText,
  mandateTypedData,
  mandateDigest,
  checkMandateSignature,
  signMandate,
  signMandateWithKey,
  ACT_EIP712_TYPES,
  actTypedData,
  actDigest,
} from './mandate-sig.js';
export type { MandateSignatureScheme, MandateSignatureCheck } from './mandate-sig.js';
export { REFEREE_RULING_CATALOGUE } from './catalogue.js';
export type { RefereeRulingEntry } from './catalogue.js';
export { REFEREE_CODES, REFEREE_CODE_STAGE, REFEREE_STAGES } from './codes.js';
export type { RefereeCode, RefereeCodeStages, RefereeStage } from './codes.js';
export {
  REFEREE_PROTOCOL,
  REFEREE_TAGS,
  JUDGE_SYSTEM_PROMPT,
  JUDGE_ASSESSMENT_PROMPT,
  MAX_CONTEXT_CODE_POINTS,
  ticketAnchor,
  ticketProofHash,
  transitionMessage,
  actionLine,
  contextText,
  judgeUserMessage,
  judgeRequestBytes,
  verdictMessage,
  sha256Hex,
} from './bytes.js';
export type { TicketAnchorInput, TransitionMessageInput, JudgeRequestInput } from './bytes.js';
export { MAX_JUDGE_RESPONSE_BYTES, JUDGE_FAILURES } from './judge.js';
export type { Judge, JudgeQuery, JudgeAnswer, JudgeFailure } from './judge.js';
export { createLocalJudge, evaluateLocalRule, localJudgeContent, LOCAL_JUDGE_MODEL } from './local-judge.js';
export type { LocalJudgeOptions } from './local-judge.js';
export { createOpenAiJudge } from './openai-judge.js';
export type { OpenAiJudgeOptions } from './openai-judge.js';
export { parseJudgeResponse, assessVerdict, MAX_REASON_CODE_POINTS } from './verdict.js';
export type { ParsedVerdict, AssessedVerdict, AssessVerdictInput } from './verdict.js';
export { signRedemption, signRelease, signTermination } from './sign.js';
export type { TicketRef, TransitionScheme } from './sign.js';
export { signText, recoverText, recoverDigest, verifyText } from './eip191.js';
export type { RefereeSigner } from './eip191.js';
export { MAX_TRANSITIONS_PER_FRAME } from './transitions.js';
export { askPanel, reverifyPanel, quorumOf } from './panel.js';
export type { Panel, PanelMember, PanelAnswer, QuorumFigures } from './panel.js';
export type { RateLimitRuling } from './rate.js';
export { RefereeHistory } from './history.js';
export type { EntrySource, FoldView } from './history.js';
export type { QuotaFigures, Ticket, TicketState, TransitionOutcome } from './state.js';
export { decAdd, decSub, decMul, decCmp, isCanonicalDecimal } from './decimal.js';

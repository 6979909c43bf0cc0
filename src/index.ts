/**
 * `agent-tally`: record an autonomous agent's day as a hash-chained, sealed,
 * verifiable transcript. The root entry re-exports the everyday API; each
 * layer has its own entry (`agent-tally/protocol`, `/merkle`, `/session`,
 * `/store`, `/codec`, …).
 *
 * @example
 * import { createEngine, verifyBundle } from 'agent-tally';
 */
export { createEngine } from './engine.js';
export { Engine, StoreCorruptionError, ContentionError } from './session/index.js';
export { createIntentRuler } from './rules/index.js';
export type { IntentRuling } from './rules/index.js';
export type {
  EngineOptions,
  OpenResult,
  FrameInput,
  FrameResult,
  TurnInput,
  TurnBodyInput,
  TurnResult,
  FinalizeResult,
  Receipt,
  EventsResult,
  DescribeResult,
  Rejection,
  TurnRuler,
  RuleContext,
  RuleOutcome,
} from './session/index.js';
export { MemoryStore } from './store/index.js';
export type { TranscriptStore } from './store/index.js';
export { verifyBundle, verifyBundleFile, encodeBundle, sha256 } from './codec/index.js';
export type { VerifyBundleOptions } from './codec/index.js';
export { OPEN_ORDINAL, FAILURE_CLASSES, SESSION_DIAGNOSTICS, SESSION_MESSAGE_KINDS, TallyError, canonicalJson } from './protocol/index.js';
export type { SessionDiagnostic, FailureClass, SessionSpec, Entry, ChainError, ChainSummary } from './protocol/index.js';

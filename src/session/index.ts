/** `agent-tally/session`: the session controller. */
export { Engine, createEngine } from './engine.js';
export type { EngineOptions } from './engine.js';
export { StoreCorruptionError, ContentionError } from './errors.js';
export { KeyedMutex } from './mutex.js';
export type {
  Rejection,
  OpenResult,
  FrameInput,
  FrameResult,
  TurnBodyInput,
  TurnInput,
  TurnResult,
  TurnOptions,
  Receipt,
  FinalizeResult,
  SessionEvent,
  EventsResult,
  SessionCounts,
  DescribeResult,
  RuleContext,
  RuleOutcome,
  TurnRuler,
  RecordedReservation,
} from './types.js';

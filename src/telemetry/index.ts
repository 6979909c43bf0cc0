/**
 * `agent-tally/telemetry`: OpenTelemetry traces and metrics of the engine,
 * through `@opentelemetry/api` only. Nothing is recorded or exported unless
 * the application registers an SDK (or runs `tally serve`, which does); the
 * names of every span, attribute and metric are here and in README
 * "Observability". `startTelemetry` (the SDK) is in `./sdk.js`, loaded on demand.
 */
export { ATTR, METRIC, SCOPE, SPAN, TURN_OUTCOMES, VERBS, WITNESS_CONFLICT_REASONS, type AttrKey, type TurnOutcome, type Verb, type WitnessConflictReason } from './names.js';
export { recordWitnessConflict } from './witness.js';
export { allowed, label, safeAttributes } from './safe.js';
export { rulingLabel, turnOutcome } from './outcome.js';
export { traceVerb, traceVerbs, traceVerify } from './verbs.js';
export { traceAppend, recordBatch } from './store.js';
export { traceJudge } from './judge.js';
export { traceToolCall } from './tool.js';
export type { ToolCallStart, ToolCallEnd } from './tool.js';
export { traceRequest, routeOf } from './http.js';
export { activeSpan, inSpan, inSpanSync, errorKind, tracing } from './spans.js';

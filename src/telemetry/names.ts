/**
 * Every span name, attribute key and metric name Tally reports, in one place
 * (docs: README "Observability"). Names follow the OpenTelemetry conventions:
 * dotted, lower case, namespaced `tally.`; Prometheus renders the dots as `_`.
 */

/** The instrumentation scope (tracer and meter name). */
export const SCOPE = 'agent-tally';

/** The wire verbs that get one span each. */
export const VERBS = ['open', 'frame', 'turn', 'finalize', 'events', 'describe', 'verify'] as const;
/** One of {@link VERBS}. */
export type Verb = (typeof VERBS)[number];

/** What a turn call came to: a new entry admitted, refused (a ruling code), ruled (transitions only) or recorded (no ruling); a retry; a refusal that wrote nothing. */
export const TURN_OUTCOMES = ['admitted', 'refused', 'ruled', 'recorded', 'duplicate', 'diagnostic'] as const;
/** One of {@link TURN_OUTCOMES}. */
export type TurnOutcome = (typeof TURN_OUTCOMES)[number];

/** Span names. A verb span is `tally.<verb>`. */
export const SPAN = {
  verb: (v: Verb): string => `tally.${v}`,
  intent: 'tally.intent.validate',
  judge: 'tally.referee.judge',
  append: 'tally.store.append',
  checkpoint: 'tally.checkpoint.sign',
  /** OpenTelemetry GenAI: one tool call through the MCP gateway (`execute_tool <tool>`). */
  tool: 'execute_tool',
} as const;

/** Attribute keys (the only keys instrumentation ever sets; see safe.ts). */
export const ATTR = {
  session: 'tally.session.id',
  ordinal: 'tally.ordinal',
  index: 'tally.entry.index',
  outcome: 'tally.outcome',
  ruling: 'tally.ruling.code',
  diagnostic: 'tally.diagnostic',
  duplicate: 'tally.duplicate',
  verb: 'tally.verb',
  batch: 'tally.store.batch_size',
  storeOutcome: 'tally.store.outcome',
  errorKind: 'tally.error.kind',
  model: 'tally.judge.model',
  failure: 'tally.judge.failure',
  entries: 'tally.verify.entries',
  route: 'http.route',
  method: 'http.request.method',
  status: 'http.response.status_code',
  // OpenTelemetry GenAI semantic conventions (the MCP gateway's execute_tool spans).
  genAiOperation: 'gen_ai.operation.name',
  genAiTool: 'gen_ai.tool.name',
  genAiCallId: 'gen_ai.tool.call.id',
  genAiConversation: 'gen_ai.conversation.id',
  genAiGuardrail: 'gen_ai.guardrail.result',
  toolOutcome: 'tally.tool.outcome',
} as const;
/** One of the attribute keys of {@link ATTR}. */
export type AttrKey = (typeof ATTR)[keyof typeof ATTR];

/** Metric names. */
export const METRIC = {
  turns: 'tally.turns',
  verbDuration: 'tally.verb.duration',
  appendDuration: 'tally.store.append.duration',
  batchSize: 'tally.store.batch.size',
  storeErrors: 'tally.store.errors',
  judgeDuration: 'tally.judge.duration',
  judgeFailures: 'tally.judge.failures',
  sessionsOpened: 'tally.sessions.opened',
  sessionsSealed: 'tally.sessions.sealed',
  verifyEntries: 'tally.verify.entries',
  verifyRate: 'tally.verify.rate',
  witnessConflicts: 'tally.witness.conflicts',
} as const;

/**
 * Why a witness's answer contradicts the engine's store (a `tally.witness.conflicts` label):
 * it holds a size beyond the store's tree (`ahead`), a root at a size the store holds that is
 * not the store's (`root-mismatch`, C2SP tlog-witness 422 to old = size; 409 at a known size from a witness older than C2SP/C2SP#280), or it refused the
 * consistency proof from its cosigned root to the store's (`bad-consistency-proof`, 422).
 */
export const WITNESS_CONFLICT_REASONS = ['ahead', 'root-mismatch', 'bad-consistency-proof'] as const;
/** One of {@link WITNESS_CONFLICT_REASONS}. */
export type WitnessConflictReason = (typeof WITNESS_CONFLICT_REASONS)[number];

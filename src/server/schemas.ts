/**
 * The params of the six wire verbs, as zod schemas: the HTTP server decodes
 * with them and the MCP server advertises them (as JSON Schema) and decodes
 * with them, so the two transports cannot drift. A params failure is a
 * `malformed-entry` refusal carrying the zod issues.
 */
import { z } from 'zod';
import { FAILURE_CLASSES, LIMITS, fromBase64, hasLoneSurrogate, type SessionMessageKind } from '../protocol/index.js';
import type { WireFailure } from './vocabulary.js';

const hex = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters');
const sessionId = hex.describe('Session id: 64 lowercase hex (the hash of the genesis entry, returned by session/open).');
const ordinal = z.number().int().min(-1).max(LIMITS.maxOrdinal);
const base64 = z.string().refine((s) => fromBase64(s) !== undefined, 'must be standard padded base64 (RFC 4648 §4), the one spelling of the bytes');

/** `session/open` params. */
export const openParams = z.strictObject({
  spec: z
    .looseObject({ name: z.string().min(1).max(LIMITS.nameLength).describe('Human name of the session.') })
    .describe('The session spec, sealed in genesis. The same spec always opens the same session, so put what makes the run unique (a date, a run id) in it. Optional extensions: `agents` (agent_id → 0x signer address) and `intent` (validation options).'),
});

/** `session/frame` params. */
export const frameParams = z.strictObject({
  sessionId,
  ordinal: ordinal.describe('-1 for the OPEN frame, then 0, 1, 2, … (one more than the last answered frame).'),
  time: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).describe('Frame time in epoch milliseconds; never decreases along a session.'),
  data: z.unknown().optional().describe('What the agent is shown (any canonical JSON value: no floats that are not integers, no duplicate keys).'),
  parentHash: hex.optional().describe('The chain head the runtime believes it extends (checked when given).'),
});

const authored = z
  .strictObject({
    kind: z.literal('authored'),
    bytes: base64.optional().describe('The authored bytes, standard padded base64.'),
    text: z
      .string()
      .refine((t) => !hasLoneSurrogate(t), 'lone-surrogate: body.text holds an unpaired UTF-16 surrogate, which has no UTF-8 encoding (it is refused, never replaced by U+FFFD); send body.bytes instead')
      .optional()
      .describe('Convenience: the authored bytes as UTF-8 text (exactly one of bytes or text); a lone surrogate is refused.'),
    hash: z.string().optional().describe('Declared authored hash (checked against the bytes).'),
  })
  .refine((b) => (b.bytes === undefined) !== (b.text === undefined), { message: 'give exactly one of body.bytes (base64) or body.text (UTF-8)' });
const standDown = z.strictObject({
  kind: z.literal('stand-down'),
  failureClass: z.enum(FAILURE_CLASSES).describe('Why the runtime answered for the agent.'),
});

/** `session/turn` params. */
export const turnParams = z.strictObject({
  sessionId,
  ordinal: ordinal.describe('The ordinal of the frame this turn answers.'),
  parentHash: hex.describe('entryHash of the frame this turn answers (returned by session/frame, or describe.pending.entryHash).'),
  frameRoot: hex.describe('frameRoot of the frame this turn answers.'),
  body: z.discriminatedUnion('kind', [authored, standDown]).describe('The answer: authored bytes (base64 `bytes` or UTF-8 `text`), or a stand-down.'),
  claimHash: z.string().optional().describe('Declared turn-claim hash (checked).'),
});

/** `session/events` params. */
export const eventsParams = z.strictObject({
  sessionId,
  after: z.number().int().min(-1).max(Number.MAX_SAFE_INTEGER).optional().describe('Cursor: return entries with index > after (-1, the default, for all). Pass the previous `next` to resume.'),
  limit: z.number().int().min(1).max(10_000).optional().describe('Most entries to return (default 1000).'),
  wait: z.number().int().min(0).max(30_000).optional().describe('Long-poll: wait up to this many ms for an entry after the cursor (default 0).'),
});

/** `session/describe` params. */
export const describeParams = z.strictObject({ sessionId });

/** `session/finalize` params. */
export const finalizeParams = z.strictObject({
  sessionId,
  artifacts: z.record(z.string(), z.unknown()).optional().describe('What the day produced (canonical JSON object), sealed with the chain. The same artifacts again return the same receipt.'),
});

/** Decoded params of each verb. */
export interface WireParams {
  'session/open': z.infer<typeof openParams>;
  'session/frame': z.infer<typeof frameParams>;
  'session/turn': z.infer<typeof turnParams>;
  'session/events': z.infer<typeof eventsParams>;
  'session/describe': z.infer<typeof describeParams>;
  'session/finalize': z.infer<typeof finalizeParams>;
}

/** Params schema of each verb. */
export const PARAMS_SCHEMAS = {
  'session/open': openParams,
  'session/frame': frameParams,
  'session/turn': turnParams,
  'session/events': eventsParams,
  'session/describe': describeParams,
  'session/finalize': finalizeParams,
} as const satisfies Record<SessionMessageKind, z.ZodType>;

/** Decodes the params of `method`: the typed value, or a `malformed-entry` failure listing the issues. */
export function decodeParams<M extends SessionMessageKind>(method: M, params: unknown): { ok: true; value: WireParams[M] } | { ok: false; failure: WireFailure } {
  const r = (PARAMS_SCHEMAS[method] as z.ZodType).safeParse(params);
  if (r.success) return { ok: true, value: r.data as WireParams[M] };
  const issues = r.error.issues.slice(0, 10).map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  const first = issues[0]!;
  return {
    ok: false,
    failure: { type: 'malformed-entry', message: `${method} params: ${first.path || '(params)'}: ${first.message}`, data: { issues } },
  };
}

/** Authored bytes of a decoded turn body (base64 or UTF-8 text). */
export function authoredBytesOf(body: { bytes?: string | undefined; text?: string | undefined }): Uint8Array {
  if (body.text !== undefined) return new TextEncoder().encode(body.text);
  return fromBase64(body.bytes!)!;
}

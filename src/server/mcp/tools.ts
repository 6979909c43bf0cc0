/**
 * The MCP tools: the six wire verbs (their input schemas ARE the wire params
 * schemas) plus `verify`, with annotations and descriptions written for a
 * model: what to quote from where, and how to retry without ever writing twice.
 */
import { z } from 'zod';
import { hasLoneSurrogate, type SessionMessageKind } from '../../protocol/index.js';
import { PARAMS_SCHEMAS } from '../schemas.js';

/** MCP tool annotations (hints a host may show or act on). */
export interface ToolHints {
  readonly title: string;
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: boolean;
}

/** One tool. */
export interface ToolDef {
  readonly name: string;
  /** The wire verb it calls (none for `verify`). */
  readonly method?: SessionMessageKind;
  readonly description: string;
  readonly schema: z.ZodType;
  readonly annotations: ToolHints;
}

const RETRY =
  'Safe to retry: if a call fails, times out or you are unsure it landed, call again with exactly the same arguments; a repeat of recorded content returns the recorded result with duplicate: true and never writes twice.';

const hex = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters');

/** `verify` input: a session to fetch, or a bundle's text; optional pins. */
export const verifyParams = z
  .strictObject({
    sessionId: hex.optional().describe('Verify this session: its bundle is fetched and checked entry by entry.'),
    bundle: z
      .string()
      .max(64 * 1024 * 1024)
      .refine((t) => !hasLoneSurrogate(t), 'lone-surrogate: the bundle text holds an unpaired UTF-16 surrogate, which has no UTF-8 encoding (refused, never replaced by U+FFFD)')
      .optional()
      .describe('Or verify this bundle text (JSONL, one entry per line, each line ending in a newline).'),
    receiptRoot: hex.optional().describe('Pin: the receipt root you trust (from a receipt you obtained independently); a different root fails.'),
    size: z.number().int().min(1).optional().describe('Pin: the number of entries the receipt names.'),
    unsealed: z.boolean().optional().describe('Accept a transcript that is not sealed yet (an in-progress session).'),
  })
  .refine((v) => (v.sessionId === undefined) !== (v.bundle === undefined), { message: 'give exactly one of sessionId or bundle' });

const write = (title: string): ToolHints => ({ title, readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false });
const read = (title: string): ToolHints => ({ title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });

/** Every tool, in lifecycle order. */
export const TOOLS: readonly ToolDef[] = [
  {
    name: 'session_open',
    method: 'session/open',
    description: `Open a session from its spec (the description of one run, sealed in its first entry) and get its sessionId. The same spec always gives the same sessionId (created: false when it already existed), so put what makes the run unique (a date, a run id) in the spec. ${RETRY}`,
    schema: PARAMS_SCHEMAS['session/open'],
    annotations: write('Open a session'),
  },
  {
    name: 'session_frame',
    method: 'session/frame',
    description: `Runtime: deliver a frame — the OPEN frame (ordinal -1) first, then wakes 0, 1, 2, … — with its time (epoch ms, never decreasing) and data. Only one frame may be pending: answer it with session_turn before the next. The result's entryHash and frameRoot are what the answering turn must quote. ${RETRY}`,
    schema: PARAMS_SCHEMAS['session/frame'],
    annotations: write('Deliver a frame'),
  },
  {
    name: 'session_turn',
    method: 'session/turn',
    description:
      'Record the one answer to the pending frame: authored content (body {kind:"authored", text} or base64 {kind:"authored", bytes}) or a stand-down. Quote the frame being answered: its ordinal, its entryHash as parentHash, and its frameRoot (from session_frame, or session_describe → pending). ' +
      'RETRY SAFELY: when a call fails, times out or you do not know whether it landed, call again with the SAME sessionId, ordinal, parentHash, frameRoot and the SAME body bytes; the recorded result comes back (duplicate: true) and nothing is written twice. ' +
      'NEVER change the content of a retry: different bytes for a slot that is already filled are refused as turn-conflict and nothing is written. ' +
      'A signed intent that fails validation is still recorded — read ruling.intent (admitted, code, message) in the result; it is not a tool error. To try again, answer the NEXT frame with a corrected intent and a fresh nonce.',
    schema: PARAMS_SCHEMAS['session/turn'],
    annotations: write('Answer the pending frame'),
  },
  {
    name: 'session_events',
    method: 'session/events',
    description:
      'Read the transcript entries with index > after (after = -1 for all), in order. Resume after a disconnect by passing the previous result\'s next as after: nothing is skipped or repeated. wait (ms, up to 30000) long-polls for new entries. more: true means call again.',
    schema: PARAMS_SCHEMAS['session/events'],
    annotations: read('Read entries'),
  },
  {
    name: 'session_describe',
    method: 'session/describe',
    description:
      "Where a session is: phase (awaiting-frame, pending, sealed), size, head, Merkle root, nextOrdinal, the pending frame (ordinal, entryHash, frameRoot, time: what a turn must quote), counts and, once sealed, the receipt. Use it to recover after losing track.",
    schema: PARAMS_SCHEMAS['session/describe'],
    annotations: read('Describe a session'),
  },
  {
    name: 'session_finalize',
    method: 'session/finalize',
    description: `Seal the session (no frame may be pending: stand it down first) with optional artifacts, and get the receipt: size, receiptRoot and head, which pin the whole transcript. The same artifacts again return the same receipt; other artifacts after the seal are refused (sealed). ${RETRY}`,
    schema: PARAMS_SCHEMAS['session/finalize'],
    annotations: write('Seal a session'),
  },
  {
    name: 'verify',
    description:
      'Verify a transcript offline: every entry hash, parent link, ordinal, frame root and authored hash, the RFC 6962 Merkle root and the seal. Give a sessionId (its bundle is fetched) or the bundle text, and pin receiptRoot and size from a receipt you trust. Reports valid: true with the summary, or valid: false with the first bad entry index and a reason code.',
    schema: verifyParams,
    annotations: read('Verify a transcript'),
  },
];

/** The tool named `name`. */
export function toolNamed(name: string): ToolDef | undefined {
  return TOOLS.find((t) => t.name === name);
}

/** The JSON Schema of a tool's input (draft-07, as MCP hosts expect). */
export function inputJsonSchema(t: ToolDef): Record<string, unknown> {
  const { $schema: _drop, ...schema } = z.toJSONSchema(t.schema, { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
  return schema;
}

/**
 * Authored turn bytes that carry an Intent: a UTF-8 JSON object with an
 * `intent` member (and optionally `context`). Shared by the intent ruler and
 * the validation worker pool so both read the same Intent from the same bytes.
 *
 * The bytes are read by the one strict parser (`parseStrictJson`). Bytes that
 * only a lenient parser reads as an intent-carrying object — a duplicate key,
 * a lone surrogate, a BOM, nesting past the limit — still carry an intent
 * attempt, but its value is a {@link RefusedIntentJson}: validation rejects it
 * at the schema stage (`invalid_schema`), so it is ruled and recorded as
 * rejected, never read as whichever duplicate a parser happens to keep.
 */
import { parseStrictJson, type StrictJsonCode } from '../protocol/strict-json.js';

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The "intent" of authored bytes that are not strict JSON (see the module comment). */
export class RefusedIntentJson {
  constructor(
    /** Why the strict parser refused the bytes. */
    readonly code: StrictJsonCode,
    readonly message: string,
  ) {}
}

function isIntentCarrier(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, 'intent');
}

/**
 * Parses authored bytes as an intent-carrying turn; `undefined` for a plain turn.
 *
 * @example
 * carriedIntent(new TextEncoder().encode('{"intent":{"action":"hold"}}')) // { intent: { action: 'hold' } }
 */
export function carriedIntent(bytes: Uint8Array): { intent: unknown; context?: unknown } | undefined {
  const strict = parseStrictJson(bytes);
  if (!strict.ok) {
    // Would a lenient reader see an intent here? Then it is a refused attempt, not a plain turn.
    let lenient: unknown;
    try {
      lenient = JSON.parse(decoder.decode(bytes).replace(/^\uFEFF/, ''));
    } catch {
      return undefined;
    }
    return isIntentCarrier(lenient) ? { intent: new RefusedIntentJson(strict.code, strict.message) } : undefined;
  }
  const value = strict.value;
  if (!isIntentCarrier(value)) return undefined;
  return Object.hasOwn(value, 'context') ? { intent: value['intent'], context: value['context'] } : { intent: value['intent'] };
}

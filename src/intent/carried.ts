/**
 * Authored turn bytes that carry an Intent: a UTF-8 JSON object with an
 * `intent` member (and optionally `context`). Shared by the intent ruler and
 * the validation worker pool so both read the same Intent from the same bytes.
 */
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses authored bytes as an intent-carrying turn; `undefined` for a plain turn.
 *
 * @example
 * carriedIntent(new TextEncoder().encode('{"intent":{"action":"hold"}}')) // { intent: { action: 'hold' } }
 */
export function carriedIntent(bytes: Uint8Array): { intent: unknown; context?: unknown } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, 'intent')) return undefined;
  const v = value as Record<string, unknown>;
  return Object.hasOwn(v, 'context') ? { intent: v['intent'], context: v['context'] } : { intent: v['intent'] };
}

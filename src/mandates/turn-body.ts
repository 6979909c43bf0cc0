/**
 * The one rule for an AP2/VI turn body (PROTOCOL.md §16.1, §16.10, §16.11):
 * canonical JSON of exactly the named members, each a compact JWS / SD-JWT
 * text (base64url, `.`, `~`; see `isCompactText`). Anything else is not a
 * turn of that session (`turn-malformed` where it is ruled).
 */
import { canonicalBytes, parseStrictJson, type CanonicalObject } from '../protocol/index.js';
import { isCompactText } from './digest.js';

/** The members `keys` of `bytes`, or undefined when `bytes` is not canonical JSON of exactly them, each compact text. */
export function readCompactTurn<K extends string>(bytes: Uint8Array, keys: readonly K[]): Record<K, string> | undefined {
  const r = parseStrictJson(bytes);
  if (!r.ok || typeof r.value !== 'object' || r.value === null || Array.isArray(r.value)) return undefined;
  const v = r.value as Record<string, unknown>;
  if (Object.keys(v).length !== keys.length || !keys.every((k) => typeof v[k] === 'string' && isCompactText(v[k] as string))) return undefined;
  const canon = canonicalBytes(v as CanonicalObject);
  if (canon.length !== bytes.length || canon.some((b, i) => b !== bytes[i])) return undefined;
  return v as Record<K, string>;
}

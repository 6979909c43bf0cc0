/**
 * The one file that assembles every hashed or signed byte string of an Intent.
 *
 * - canonical payload: `stableStringify` of all present normalized fields except
 *   `signature` (keys sorted, no whitespace, absent optionals omitted, every
 *   value a string). Because every value is an ASCII string, the output is also
 *   the RFC 8785 (JCS) serialization of the same object.
 * - intent hash: `keccak256(utf8(payload))`, `0x` + 64 lowercase hex.
 * - EIP-191 digest (what is signed): `keccak256("\x19Ethereum Signed Message:\n" ‖ decimal(len) ‖ utf8(payload))`.
 */
import stableStringify from 'fast-json-stable-stringify';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { TallyError } from '../protocol/errors.js';
import { toHex } from '../protocol/hex.js';
import { describeFirstIssue } from './issues.js';
import { intentSchema, unsignedIntentSchema } from './schema.js';
import type { Intent, IntentInput, UnsignedIntent, UnsignedIntentInput } from './schema.js';

/** The EIP-191 version 0x45 ("E") personal-message prefix, before the decimal byte length. */
export const EIP191_PREFIX = '\x19Ethereum Signed Message:\n';

const utf8 = new TextEncoder();

/** Canonical payload of an already-parsed (normalized) Intent; `signature` is dropped. */
export function canonicalPayloadOf(intent: Intent | UnsignedIntent): string {
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(intent)) {
    if (key === 'signature' || value === undefined) continue;
    fields[key] = value;
  }
  return stableStringify(fields);
}

/**
 * Normalizes an Intent (signed or unsigned, wire spelling) and returns its
 * canonical payload: the exact string that is hashed and signed.
 * Throws `TallyError('TALLY_INTENT_INVALID')` when the input does not parse (misuse).
 *
 * @example
 * canonicalPayload({ action: 'transfer', agent_id: 'a1', nonce: 7, ttl: 1893456000000, size: 1.0, target_address: '0x000000000000000000000000000000000000dEaD' });
 * // '{"action":"transfer","agent_id":"a1","nonce":"7","size":"1","target_address":"0x000000000000000000000000000000000000dead","ttl":"2030-01-01T00:00:00.000Z"}'
 */
export function canonicalPayload(intent: IntentInput | UnsignedIntentInput): string {
  return canonicalPayloadOf(parseEither(intent));
}

/**
 * `keccak256(utf8(canonical payload))` as `0x` + 64 lowercase hex: the stable
 * external identifier of an Intent (independent of its signature).
 *
 * @example
 * intentHash(unsigned) === intentHash(await signIntent(unsigned, key)); // true
 */
export function intentHash(intent: IntentInput | UnsignedIntentInput): string {
  return hashCanonicalPayload(canonicalPayload(intent));
}

/** `0x`-hex keccak256 of the UTF-8 bytes of a canonical payload string. */
export function hashCanonicalPayload(payload: string): string {
  return `0x${toHex(keccak_256(utf8.encode(payload)))}`;
}

/** The 32-byte EIP-191 personal_sign digest of a canonical payload (what the signature covers). */
export function eip191Digest(payload: string): Uint8Array {
  const body = utf8.encode(payload);
  const prefix = utf8.encode(`${EIP191_PREFIX}${body.length}`);
  const message = new Uint8Array(prefix.length + body.length);
  message.set(prefix, 0);
  message.set(body, prefix.length);
  return keccak_256(message);
}

function parseEither(input: unknown): Intent | UnsignedIntent {
  const signed = typeof input === 'object' && input !== null && Object.hasOwn(input, 'signature');
  const r = signed ? intentSchema.safeParse(input) : unsignedIntentSchema.safeParse(input);
  if (r.success) return r.data;
  throw new TallyError('TALLY_INTENT_INVALID', 'Intent does not match the Intent schema.', { details: describeFirstIssue(r.error) });
}

/**
 * The text of a verifier key, `name+<keyid>+base64(0x01 ‖ key)`, decoded by
 * Go's `note.NewVerifier` rules. Pure and browser-safe: how a signature is
 * then checked (node:crypto on the server, WebCrypto in the audit page) is the
 * caller's; see `parseVerifierKey` for the node binding.
 */
import { decodeBase64Strict } from './base64.js';
import { ALG_ED25519, ED25519_KEY_BYTES, formatKeyId, keyIdOfEncodedKey } from './layout.js';
import { isValidKeyName } from './name.js';
import type { VerifierKeyCode } from './types.js';

/** A decoded verifier key, before any signature algorithm is bound to it. */
export interface DecodedVerifierKey {
  readonly name: string;
  readonly keyId: number;
  /** The 32-byte Ed25519 public key. */
  readonly publicKey: Uint8Array;
  /** The canonical `name+keyid+base64` string. */
  readonly verifierKey: string;
}

/** Outcome of {@link decodeVerifierKey}. */
export type DecodeVerifierKeyResult = { readonly ok: true; readonly key: DecodedVerifierKey } | { readonly ok: false; readonly code: VerifierKeyCode; readonly message: string };

/** Splits at the first `sep` (Go's `chop`): `[s, '']` when absent. */
export function chop(s: string, sep: string): [string, string] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, ''] : [s.slice(0, i), s.slice(i + sep.length)];
}

/** A verifier key split and checked up to its signature type: the part every key type shares. */
export interface EncodedVerifierKey {
  readonly name: string;
  readonly keyId: number;
  /** `type ‖ key material`, as carried by the base64. */
  readonly encodedKey: Uint8Array;
  /** The base64 exactly as written (canonical). */
  readonly key64: string;
}

/**
 * Splits a verifier key `name+hex8+base64` exactly as Go's `note.NewVerifier`
 * does, for any signature type: split at the first two `+` only (the base64
 * may contain `+`), a valid name, a key ID of 8 hex digits equal to
 * `SHA-256(name ‖ 0x0A ‖ type ‖ key)[0:4]`, the base64 canonical. The caller
 * checks the type byte and the key length ({@link decodeVerifierKey} for
 * Ed25519 `0x01`, the witness layer for cosignature keys `0x04`).
 */
export function decodeEncodedVerifierKey(vkey: string): { readonly ok: true; readonly key: EncodedVerifierKey } | { readonly ok: false; readonly code: VerifierKeyCode; readonly message: string } {
  if (typeof vkey !== 'string') return { ok: false, code: 'malformed-verifier-key', message: 'verifier key must be a string' };
  const [name, rest] = chop(vkey, '+');
  const [hash16, key64] = chop(rest, '+');
  const key = decodeBase64Strict(key64);
  if (!isValidKeyName(name) || !/^[0-9a-fA-F]{8}$/.test(hash16) || key === undefined || key.length === 0) {
    return { ok: false, code: 'malformed-verifier-key', message: 'verifier key must be name+<8 hex key ID>+<base64 key>' };
  }
  const claimed = Number.parseInt(hash16, 16);
  if (claimed !== keyIdOfEncodedKey(name, key)) {
    return { ok: false, code: 'key-id-mismatch', message: `key ID ${hash16} does not match the key` };
  }
  return { ok: true, key: { name, keyId: claimed, encodedKey: key, key64 } };
}

/**
 * Decodes an Ed25519 verifier key `name+hex8+base64` exactly as Go's
 * `note.NewVerifier` ({@link decodeEncodedVerifierKey}'s rules), with the key
 * `0x01 ‖ 32 bytes`.
 *
 * @example
 * const r = decodeVerifierKey('PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW');
 * if (r.ok) r.key.publicKey.length;  // 32
 */
export function decodeVerifierKey(vkey: string): DecodeVerifierKeyResult {
  const fail = (code: VerifierKeyCode, message: string): DecodeVerifierKeyResult => ({ ok: false, code, message });
  const decoded = decodeEncodedVerifierKey(vkey);
  if (!decoded.ok) return decoded;
  const { name, keyId, encodedKey: key, key64 } = decoded.key;
  if (key[0] !== ALG_ED25519) return fail('unknown-key-algorithm', `unknown signature type 0x${formatKeyId(key[0]!).slice(6)}`);
  const publicKey = key.slice(1);
  if (publicKey.length !== ED25519_KEY_BYTES) return fail('malformed-verifier-key', `Ed25519 key must be ${ED25519_KEY_BYTES} bytes`);
  return { ok: true, key: { name, keyId, publicKey, verifierKey: `${name}+${formatKeyId(keyId)}+${key64}` } };
}

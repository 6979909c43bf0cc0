import { decodeBase64Strict, encodeBase64 } from './base64.js';
import { ed25519PublicKeyObject, ed25519Verify } from './ed25519.js';
import { ALG_ED25519, ED25519_KEY_BYTES, encodeEd25519Key, formatKeyId, keyIdOfEncodedKey } from './layout.js';
import { isValidKeyName } from './name.js';
import type { ParseVerifierKeyResult, VerifierKeyCode } from './types.js';
import { TallyError } from '../../protocol/errors.js';

function assertEd25519Name(name: string, publicKey: Uint8Array): void {
  if (!isValidKeyName(name)) {
    throw new TallyError('TALLY_NOTE_KEY_NAME_INVALID', 'Key names must be non-empty and contain no white space and no "+".', {
      details: `got ${JSON.stringify(name)}`,
    });
  }
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_KEY_BYTES) {
    throw new TallyError('TALLY_NOTE_KEY_INVALID', `An Ed25519 public key is ${ED25519_KEY_BYTES} bytes.`, {
      details: `got ${publicKey instanceof Uint8Array ? `${publicKey.length} bytes` : typeof publicKey}`,
    });
  }
}

/**
 * The C2SP key ID of an Ed25519 key: the first 4 bytes, big-endian, of
 * `SHA-256(name ‖ 0x0A ‖ 0x01 ‖ publicKey)`.
 *
 * @example
 * formatKeyId(keyId('PeterNeumann', pub))  // 'c74f20a3'
 */
export function keyId(name: string, publicKey: Uint8Array): number {
  assertEd25519Name(name, publicKey);
  return keyIdOfEncodedKey(name, encodeEd25519Key(publicKey));
}

/**
 * The verifier key `name+<keyid 8 lowercase hex>+base64(0x01 ‖ publicKey)`, as Go's
 * `note.NewEd25519VerifierKey` prints it. Throws `TALLY_NOTE_KEY_NAME_INVALID` /
 * `TALLY_NOTE_KEY_INVALID` on a bad name or key length.
 *
 * @example
 * formatVerifierKey('PeterNeumann', pub)  // 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'
 */
export function formatVerifierKey(name: string, publicKey: Uint8Array): string {
  assertEd25519Name(name, publicKey);
  const encoded = encodeEd25519Key(publicKey);
  return `${name}+${formatKeyId(keyIdOfEncodedKey(name, encoded))}+${encodeBase64(encoded)}`;
}

/** Splits at the first `sep` (Go's `chop`): `[s, '']` when absent. */
export function chop(s: string, sep: string): [string, string] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, ''] : [s.slice(0, i), s.slice(i + sep.length)];
}

function fail(code: VerifierKeyCode, message: string): ParseVerifierKeyResult {
  return { ok: false, code, message };
}

/** A verifier key split and checked up to its signature type: the part every key type shares. */
export interface DecodedVerifierKey {
  readonly name: string;
  readonly keyId: number;
  /** `type ‖ key material`, as carried by the base64. */
  readonly encodedKey: Uint8Array;
  /** The base64 exactly as written (canonical). */
  readonly key64: string;
}

/**
 * Splits a verifier key `name+hex8+base64` exactly as Go's `note.NewVerifier`
 * does, for any signature type: the string is split at the first two `+` only
 * (so the base64 may contain `+`), the name must be valid, the key ID 8 hex
 * digits equal to `SHA-256(name ‖ 0x0A ‖ type ‖ key)[0:4]`, the base64
 * canonical. The caller checks the type byte and the key length.
 */
export function decodeVerifierKey(vkey: string): { readonly ok: true; readonly key: DecodedVerifierKey } | { readonly ok: false; readonly code: VerifierKeyCode; readonly message: string } {
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
 * Parses a verifier key `name+hex8+base64` exactly as Go's `note.NewVerifier`
 * (see {@link decodeVerifierKey}); the key must be `0x01 ‖ 32 bytes` (Ed25519).
 *
 * @example
 * const r = parseVerifierKey('PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW');
 * if (r.ok) r.verifier.verify(message, signature);
 */
export function parseVerifierKey(vkey: string): ParseVerifierKeyResult {
  const decoded = decodeVerifierKey(vkey);
  if (!decoded.ok) return decoded;
  const { name, keyId: claimed, encodedKey: key, key64 } = decoded.key;
  if (key[0] !== ALG_ED25519) return fail('unknown-key-algorithm', `unknown signature type 0x${formatKeyId(key[0]!).slice(6)}`);
  const publicKey = key.slice(1);
  if (publicKey.length !== ED25519_KEY_BYTES) return fail('malformed-verifier-key', `Ed25519 key must be ${ED25519_KEY_BYTES} bytes`);
  const keyObject = ed25519PublicKeyObject(publicKey);
  return {
    ok: true,
    verifier: {
      name,
      keyId: claimed,
      publicKey,
      verifierKey: `${name}+${formatKeyId(claimed)}+${key64}`,
      verify: (message, signature) => keyObject !== undefined && ed25519Verify(keyObject, message, signature),
    },
  };
}

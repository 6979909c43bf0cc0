import { encodeBase64 } from './base64.js';
import { ed25519PublicKeyObject, ed25519Verify } from './ed25519.js';
import { ED25519_KEY_BYTES, encodeEd25519Key, formatKeyId, keyIdOfEncodedKey } from './layout.js';
import { decodeVerifierKey } from './verifier-key-text.js';
import { isValidKeyName } from './name.js';
import type { ParseVerifierKeyResult } from './types.js';
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

export { chop } from './verifier-key-text.js';

/**
 * Parses a verifier key `name+hex8+base64` exactly as Go's `note.NewVerifier`
 * (the rules are {@link decodeVerifierKey}'s) and binds node:crypto Ed25519:
 * the string is split at the first two `+` only (so the base64 may contain
 * `+`), the name must be valid, the key ID 8 hex digits equal to the computed
 * one, and the key `0x01 ‖ 32 bytes`. Base64 must be canonical.
 *
 * @example
 * const r = parseVerifierKey('PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW');
 * if (r.ok) r.verifier.verify(message, signature);
 */
export function parseVerifierKey(vkey: string): ParseVerifierKeyResult {
  const decoded = decodeVerifierKey(vkey);
  if (!decoded.ok) return decoded;
  const { name, keyId: id, publicKey, verifierKey } = decoded.key;
  const keyObject = ed25519PublicKeyObject(publicKey);
  return {
    ok: true,
    verifier: { name, keyId: id, publicKey, verifierKey, verify: (message, signature) => keyObject !== undefined && ed25519Verify(keyObject, message, signature) },
  };
}

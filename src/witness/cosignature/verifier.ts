/**
 * Cosigner verifiers without a platform: the key ID, vkey text and the
 * cosignature check around an Ed25519 check passed in (node:crypto in
 * ./key.ts; WebCrypto answers in the audit page). One copy of the rules.
 */
import { encodeBase64 } from '../../receipt/note/base64.js';
import { ED25519_KEY_BYTES, formatKeyId } from '../../receipt/note/layout.js';
import type { NoteVerifier } from '../../receipt/note/types.js';
import { decodeEncodedVerifierKey } from '../../receipt/note/verifier-key-text.js';
import { TallyError } from '../../protocol/errors.js';
import { ALG_COSIGNATURE_V1, cosignedMessage, cosignerKeyId, encodeCosignerKey, splitTimestampedSignature } from './bytes.js';

/** Ed25519 verification bound to one public key: `true` when `signature` signs `message`. */
export type Ed25519Check = (message: Uint8Array, signature: Uint8Array) => boolean;

/**
 * A cosigner's verifier: a `NoteVerifier` for Ed25519 cosignatures (type
 * 0x04), so `openNote` checks cosignature lines exactly like log signatures
 * (a line by this name and key ID must verify; unknown lines are ignored).
 */
export interface CosignerVerifier extends NoteVerifier {
  /** Cosigner name (the signature line's key name). */
  readonly name: string;
  /** SHA-256(name ‖ 0x0A ‖ 0x04 ‖ publicKey)[0:4], big-endian. */
  readonly keyId: number;
  /** Raw 32-byte Ed25519 public key. */
  readonly publicKey: Uint8Array;
  /** `name+hex8+base64(0x04 ‖ publicKey)`. */
  readonly verifierKey: string;
  /** Checks a timestamped signature (`u64 time ‖ sig64`) of the note text `message`. */
  verify(message: Uint8Array, signature: Uint8Array): boolean;
  /** The timestamp of a valid cosignature of `message`, or `undefined` when it does not verify. */
  cosignatureTime(message: Uint8Array, signature: Uint8Array): number | undefined;
}

/**
 * The verifier of cosigner `name` with raw Ed25519 `publicKey`; `check`
 * verifies plain Ed25519 under that key (`undefined`: nothing verifies, for
 * formatting only).
 */
export function cosignerVerifierOf(name: string, publicKey: Uint8Array, check: Ed25519Check | undefined): CosignerVerifier {
  const keyId = cosignerKeyId(name, publicKey);
  const cosignatureTime = (message: Uint8Array, signature: Uint8Array): number | undefined => {
    const split = splitTimestampedSignature(signature);
    if (split === undefined || check === undefined) return undefined;
    return check(cosignedMessage(split.time, message), split.signature) ? split.time : undefined;
  };
  return Object.freeze({
    name,
    keyId,
    publicKey,
    verifierKey: `${name}+${formatKeyId(keyId)}+${encodeBase64(encodeCosignerKey(publicKey))}`,
    verify: (message: Uint8Array, signature: Uint8Array) => cosignatureTime(message, signature) !== undefined,
    cosignatureTime,
  });
}

/**
 * The cosigner vkey of an Ed25519 public key: `name+hex8+base64(0x04 ‖ pk)`.
 * Throws `TALLY_NOTE_KEY_INVALID` for a key that is not 32 bytes.
 *
 * @example
 * formatCosignerVerifierKey('witness.example/w1', pub)  // 'witness.example/w1+…+BC…'
 */
export function formatCosignerVerifierKey(name: string, publicKey: Uint8Array): string {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_KEY_BYTES) {
    throw new TallyError('TALLY_NOTE_KEY_INVALID', `An Ed25519 public key is ${ED25519_KEY_BYTES} bytes.`);
  }
  return cosignerVerifierOf(name, publicKey, undefined).verifierKey;
}

/** Outcome of {@link parseCosignerVerifierKey}. */
export type ParseCosignerVerifierKeyResult =
  | { readonly ok: true; readonly verifier: CosignerVerifier }
  | { readonly ok: false; readonly code: 'malformed-verifier-key' | 'key-id-mismatch' | 'not-a-cosigner-key'; readonly message: string };

/**
 * Parses a cosigner vkey, binding its key with `bind` (node:crypto for the CLI, WebCrypto answers in the audit page), (signed-note verifier key with signature type 0x04
 * and a 32-byte Ed25519 key), with the same split and key-ID rule as the
 * engine's `parseVerifierKey`.
 *
 * @example
 * const r = parseCosignerVerifierKeyWith(witnessVkey, nodeEd25519);
 * if (r.ok) openNote(signedCheckpoint, [engineVkey, r.verifier]);
 */
export function parseCosignerVerifierKeyWith(vkey: string, bind: (publicKey: Uint8Array) => Ed25519Check | undefined): ParseCosignerVerifierKeyResult {
  const decoded = decodeEncodedVerifierKey(vkey);
  if (!decoded.ok) return decoded.code === 'key-id-mismatch' ? { ok: false, code: 'key-id-mismatch', message: decoded.message } : { ok: false, code: 'malformed-verifier-key', message: decoded.message };
  const { name, encodedKey } = decoded.key;
  if (encodedKey[0] !== ALG_COSIGNATURE_V1) return { ok: false, code: 'not-a-cosigner-key', message: `signature type 0x${formatKeyId(encodedKey[0]!).slice(6)} is not an Ed25519 cosignature key (0x04)` };
  const publicKey = encodedKey.slice(1);
  if (publicKey.length !== ED25519_KEY_BYTES) return { ok: false, code: 'malformed-verifier-key', message: `Ed25519 key must be ${ED25519_KEY_BYTES} bytes` };
  return { ok: true, verifier: cosignerVerifierOf(name, publicKey, bind(publicKey)) };
}

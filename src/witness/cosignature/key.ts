import type { KeyObject } from 'node:crypto';
import { createPublicKey } from 'node:crypto';
import { encodeBase64 } from '../../receipt/note/base64.js';
import { ed25519PublicKeyObject, ed25519RawPublicKey, ed25519Sign, ed25519Verify } from '../../receipt/note/ed25519.js';
import { ED25519_KEY_BYTES, formatKeyId } from '../../receipt/note/layout.js';
import type { NoteVerifier } from '../../receipt/note/types.js';
import { decodeEncodedVerifierKey } from '../../receipt/note/verifier-key-text.js';
import type { EngineKey } from '../../receipt/keys/engineKey.js';
import { ALG_COSIGNATURE_V1, cosignedMessage, cosignerKeyId, encodeCosignerKey, isCosignatureTime, splitTimestampedSignature, timestampedSignature } from './bytes.js';
import { TallyError } from '../../protocol/errors.js';

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

/** A witness's signing key: cosigns checkpoint note bodies (C2SP tlog-cosignature/v1, Ed25519). */
export interface CosignerKey {
  readonly name: string;
  readonly keyId: number;
  readonly publicKey: Uint8Array;
  /** `name+hex8+base64(0x04 ‖ publicKey)` — what graders pin. */
  readonly verifierKey: string;
  /** The verifier for this key. */
  readonly verifier: CosignerVerifier;
  /** `u64 time ‖ Ed25519(cosignature/v1 message)` over the note text bytes `body`. */
  cosign(body: Uint8Array, time: number): Uint8Array;
}

function makeVerifier(name: string, publicKey: Uint8Array, keyObject: KeyObject | undefined): CosignerVerifier {
  const keyId = cosignerKeyId(name, publicKey);
  const cosignatureTime = (message: Uint8Array, signature: Uint8Array): number | undefined => {
    const split = splitTimestampedSignature(signature);
    if (split === undefined || keyObject === undefined) return undefined;
    return ed25519Verify(keyObject, cosignedMessage(split.time, message), split.signature) ? split.time : undefined;
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
  return makeVerifier(name, publicKey, undefined).verifierKey;
}

/** Outcome of {@link parseCosignerVerifierKey}. */
export type ParseCosignerVerifierKeyResult =
  | { readonly ok: true; readonly verifier: CosignerVerifier }
  | { readonly ok: false; readonly code: 'malformed-verifier-key' | 'key-id-mismatch' | 'not-a-cosigner-key'; readonly message: string };

/**
 * Parses a cosigner vkey (signed-note verifier key with signature type 0x04
 * and a 32-byte Ed25519 key), with the same split and key-ID rule as the
 * engine's `parseVerifierKey`.
 *
 * @example
 * const r = parseCosignerVerifierKey(witnessVkey);
 * if (r.ok) openNote(signedCheckpoint, [engineVkey, r.verifier]);
 */
export function parseCosignerVerifierKey(vkey: string): ParseCosignerVerifierKeyResult {
  const decoded = decodeEncodedVerifierKey(vkey);
  if (!decoded.ok) return decoded.code === 'key-id-mismatch' ? { ok: false, code: 'key-id-mismatch', message: decoded.message } : { ok: false, code: 'malformed-verifier-key', message: decoded.message };
  const { name, encodedKey } = decoded.key;
  if (encodedKey[0] !== ALG_COSIGNATURE_V1) return { ok: false, code: 'not-a-cosigner-key', message: `signature type 0x${formatKeyId(encodedKey[0]!).slice(6)} is not an Ed25519 cosignature key (0x04)` };
  const publicKey = encodedKey.slice(1);
  if (publicKey.length !== ED25519_KEY_BYTES) return { ok: false, code: 'malformed-verifier-key', message: `Ed25519 key must be ${ED25519_KEY_BYTES} bytes` };
  return { ok: true, verifier: makeVerifier(name, publicKey, ed25519PublicKeyObject(publicKey)) };
}

/**
 * A cosigner key from an Ed25519 private key (the same seed a signed-note
 * `PRIVATE+KEY+…` line or an engine key holds; only the key ID and the signed
 * message differ). An engine key works: `cosignerKeyFrom(await loadOrCreateEngineKey(path, name))`.
 *
 * @example
 * const w = cosignerKeyFrom(generateEngineKey('witness.example/w1'));
 * w.verifierKey  // 'witness.example/w1+…+BA…'
 */
export function cosignerKeyFrom(key: Pick<EngineKey, 'name' | 'privateKey'>): CosignerKey {
  const { name, privateKey } = key;
  const publicKey = ed25519RawPublicKey(privateKey);
  const verifier = makeVerifier(name, publicKey, createPublicKey(privateKey));
  return Object.freeze({
    name,
    keyId: verifier.keyId,
    publicKey,
    verifierKey: verifier.verifierKey,
    verifier,
    cosign(body: Uint8Array, time: number): Uint8Array {
      if (!isCosignatureTime(time)) throw new TallyError('TALLY_COSIGNATURE_TIME_INVALID', 'A cosignature time is an integer number of seconds from 0 to 2^53 - 1.', { details: String(time) });
      return timestampedSignature(time, ed25519Sign(privateKey, cosignedMessage(time, body)));
    },
  });
}

import type { KeyObject } from 'node:crypto';
import { createPublicKey } from 'node:crypto';
import { ed25519PublicKeyObject, ed25519RawPublicKey, ed25519Sign, ed25519Verify } from '../../receipt/note/ed25519.js';
import type { EngineKey } from '../../receipt/keys/engineKey.js';
import { TallyError } from '../../protocol/errors.js';
import { cosignedMessage, isCosignatureTime, timestampedSignature } from './bytes.js';
import { cosignerVerifierOf, parseCosignerVerifierKeyWith, type CosignerVerifier, type Ed25519Check, type ParseCosignerVerifierKeyResult } from './verifier.js';

export { formatCosignerVerifierKey } from './verifier.js';
export type { CosignerVerifier, Ed25519Check, ParseCosignerVerifierKeyResult } from './verifier.js';

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
  return cosignerVerifierOf(name, publicKey, keyObject === undefined ? undefined : (message, signature) => ed25519Verify(keyObject, message, signature));
}

/** node:crypto Ed25519 bound to one raw public key (`undefined` for a key OpenSSL refuses). */
export function nodeEd25519(publicKey: Uint8Array): Ed25519Check | undefined {
  const k = ed25519PublicKeyObject(publicKey);
  return k === undefined ? undefined : (message, signature) => ed25519Verify(k, message, signature);
}

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
  return parseCosignerVerifierKeyWith(vkey, nodeEd25519);
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

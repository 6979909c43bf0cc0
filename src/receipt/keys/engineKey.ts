import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { ed25519RawPublicKey, ed25519Sign, ed25519Verify } from '../note/ed25519.js';
import { isValidKeyName } from '../note/name.js';
import type { NoteSigner, NoteVerifier } from '../note/types.js';
import { formatVerifierKey, keyId as computeKeyId } from '../note/verifierKey.js';
import { TallyError } from '../../protocol/errors.js';

/**
 * The engine's Ed25519 signing key, under its note key name. It is both a
 * `NoteSigner` and a `NoteVerifier`, so it can be passed straight to
 * `signNote` and to `openNote`.
 * The private half stays inside a `KeyObject` (its `util.inspect` and JSON
 * forms do not reveal the secret).
 */
export interface EngineKey extends NoteSigner, NoteVerifier {
  /** Note key name (e.g. `tally.example/acme`). */
  readonly name: string;
  /** C2SP key ID: SHA-256(name ‖ 0x0A ‖ 0x01 ‖ publicKey)[0:4], big-endian. */
  readonly keyId: number;
  /** Raw 32-byte Ed25519 public key. */
  readonly publicKey: Uint8Array;
  /** `name+keyid+base64(0x01 ‖ publicKey)` — what verifiers pin. */
  readonly verifierKey: string;
  /** The private key (Ed25519 `KeyObject`). */
  readonly privateKey: KeyObject;
  /** Ed25519 signature of `message`. */
  sign(message: Uint8Array): Uint8Array;
  /** True when `signature` is this key's Ed25519 signature of `message`. */
  verify(message: Uint8Array, signature: Uint8Array): boolean;
}

/** Throws `TALLY_NOTE_KEY_NAME_INVALID` unless `name` is a valid note key name. */
export function assertKeyName(name: string): void {
  if (!isValidKeyName(name)) {
    throw new TallyError('TALLY_NOTE_KEY_NAME_INVALID', 'Key names must be non-empty and contain no white space and no "+".', {
      details: `got ${JSON.stringify(name)}`,
    });
  }
}

/**
 * Wraps an Ed25519 private `KeyObject` as an engine key named `name`.
 * Throws `TALLY_KEY_UNKNOWN_ALGORITHM` for a non-Ed25519 key.
 */
export function engineKeyFromPrivateKey(name: string, privateKey: KeyObject): EngineKey {
  assertKeyName(name);
  if (privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'ed25519') {
    throw new TallyError('TALLY_KEY_UNKNOWN_ALGORITHM', 'Engine keys must be Ed25519 private keys.', {
      details: `got ${privateKey.type} ${String(privateKey.asymmetricKeyType)}`,
    });
  }
  const publicKey = ed25519RawPublicKey(privateKey);
  const publicKeyObject = createPublicKey(privateKey);
  const key: EngineKey = {
    name,
    keyId: computeKeyId(name, publicKey),
    publicKey,
    verifierKey: formatVerifierKey(name, publicKey),
    privateKey,
    sign: (message: Uint8Array) => ed25519Sign(privateKey, message),
    verify: (message: Uint8Array, signature: Uint8Array) => ed25519Verify(publicKeyObject, message, signature),
  };
  return Object.freeze(key);
}

/**
 * A fresh random Ed25519 engine key (OS randomness through `node:crypto`).
 *
 * @example
 * const key = generateEngineKey('tally.example/acme');
 * key.verifierKey  // 'tally.example/acme+1a2b3c4d+AV…'
 */
export function generateEngineKey(name: string): EngineKey {
  assertKeyName(name);
  return engineKeyFromPrivateKey(name, generateKeyPairSync('ed25519').privateKey);
}

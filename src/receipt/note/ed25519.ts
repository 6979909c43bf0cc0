/**
 * Raw Ed25519 (RFC 8032) through `node:crypto`: 32-byte public keys and seeds
 * wrapped in the fixed DER prefixes OpenSSL expects.
 */
import { createPrivateKey, createPublicKey, sign as cryptoSign, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { ED25519_KEY_BYTES, ED25519_SIGNATURE_BYTES } from './layout.js';

/** DER SubjectPublicKeyInfo prefix for an Ed25519 key (RFC 8410): SEQ{SEQ{OID 1.3.101.112}, BIT STRING(33)}. */
const SPKI_PREFIX = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]);
/** DER PKCS#8 prefix for an Ed25519 seed (RFC 8410): SEQ{INT 0, SEQ{OID}, OCTET STRING{OCTET STRING(32)}}. */
const PKCS8_PREFIX = Uint8Array.from([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]);

function concat(a: Uint8Array, b: Uint8Array): Buffer {
  return Buffer.concat([a, b]);
}

/** A `KeyObject` for a raw 32-byte Ed25519 public key, or `undefined` if OpenSSL refuses it. */
export function ed25519PublicKeyObject(publicKey: Uint8Array): KeyObject | undefined {
  if (publicKey.length !== ED25519_KEY_BYTES) return undefined;
  try {
    return createPublicKey({ key: concat(SPKI_PREFIX, publicKey), format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
}

/** A private `KeyObject` for a raw 32-byte Ed25519 seed. Throws `RangeError` on a wrong length. */
export function ed25519PrivateKeyObject(seed: Uint8Array): KeyObject {
  if (seed.length !== ED25519_KEY_BYTES) throw new RangeError(`Ed25519 seed must be ${ED25519_KEY_BYTES} bytes, got ${seed.length}`);
  return createPrivateKey({ key: concat(PKCS8_PREFIX, seed), format: 'der', type: 'pkcs8' });
}

/** The raw 32-byte public key of an Ed25519 `KeyObject` (public or private). */
export function ed25519RawPublicKey(key: KeyObject): Uint8Array {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  const der = pub.export({ format: 'der', type: 'spki' });
  return new Uint8Array(der.subarray(der.length - ED25519_KEY_BYTES));
}

/** The raw 32-byte seed of a private Ed25519 `KeyObject`. */
export function ed25519RawSeed(key: KeyObject): Uint8Array {
  const jwk = key.export({ format: 'jwk' });
  if (jwk.crv !== 'Ed25519' || typeof jwk.d !== 'string') throw new RangeError('not an Ed25519 private key');
  return new Uint8Array(Buffer.from(jwk.d, 'base64url'));
}

/** Ed25519 signature (64 bytes) of `message`. */
export function ed25519Sign(privateKey: KeyObject, message: Uint8Array): Uint8Array {
  return new Uint8Array(cryptoSign(null, message, privateKey));
}

/** True when `signature` is a valid Ed25519 signature of `message` under `publicKey`. */
export function ed25519Verify(publicKey: KeyObject, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== ED25519_SIGNATURE_BYTES) return false;
  try {
    return cryptoVerify(null, message, publicKey, signature);
  } catch {
    return false;
  }
}

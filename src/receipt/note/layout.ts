/**
 * THE byte rules of the signed-note layer (https://c2sp.org/signed-note): every
 * constant and every byte string that is hashed or signed here is assembled in
 * this file and nowhere else.
 *
 * - key ID          = BE-uint32( SHA-256( utf8(name) ‖ 0x0A ‖ 0x01 ‖ pubkey32 )[0:4] )
 * - verifier key    = name "+" hex8(keyID) "+" base64( 0x01 ‖ pubkey32 )
 * - private key     = "PRIVATE+KEY+" name "+" hex8(keyID) "+" base64( 0x01 ‖ seed32 )
 * - signed message  = utf8(note text), which ends in "\n" (no separator, no signatures)
 * - signature line  = "— " name " " base64( BE-uint32(keyID) ‖ ed25519sig64 ) "\n"
 *   ("—" is U+2014 EM DASH, UTF-8 E2 80 94)
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { pooledBytes } from '../pool.js';

/** Signature type byte of plain Ed25519 note signatures (C2SP signed-note §Signature types). */
export const ALG_ED25519 = 0x01;
/** Length of an Ed25519 public key and of its private seed. */
export const ED25519_KEY_BYTES = 32;
/** Length of an Ed25519 signature. */
export const ED25519_SIGNATURE_BYTES = 64;
/** Every signature line starts with EM DASH U+2014 and a space. */
export const SIGNATURE_LINE_PREFIX = '\u2014 ';
/** The blank line that separates the note text from its signatures. */
export const SIGNATURE_SEPARATOR = '\n\n';
/** Literal prefix of an encoded signer (private) key, as in Go's `sumdb/note`. */
export const PRIVATE_KEY_PREFIX = 'PRIVATE+KEY+';
/**
 * Most signature lines accepted in one note (Go's `sumdb/note` limit; the spec
 * requires at least 16).
 */
export const MAX_SIGNATURES = 100;

const encoder = new TextEncoder();

/** `SHA-256(utf8(name) ‖ 0x0A ‖ encodedKey)[0:4]` as a big-endian uint32, where `encodedKey = alg ‖ key`. */
export function keyIdOfEncodedKey(name: string, encodedKey: Uint8Array): number {
  const n = encoder.encode(name);
  const pre = new Uint8Array(n.length + 1 + encodedKey.length);
  pre.set(n, 0);
  pre[n.length] = 0x0a;
  pre.set(encodedKey, n.length + 1);
  const d = sha256(pre);
  return new DataView(d.buffer, d.byteOffset, 4).getUint32(0, false);
}

/** `0x01 ‖ key` — the encoded form of an Ed25519 public key or seed. */
export function encodeEd25519Key(key: Uint8Array): Uint8Array {
  const out = new Uint8Array(1 + key.length);
  out[0] = ALG_ED25519;
  out.set(key, 1);
  return out;
}

/** The 8 lowercase hex digits of a key ID. */
export function formatKeyId(keyId: number): string {
  return (keyId >>> 0).toString(16).padStart(8, '0');
}

/** `BE-uint32(keyId) ‖ signature` — the bytes carried (base64) by a signature line. */
export function signatureLineBytes(keyId: number, signature: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + signature.length);
  new DataView(out.buffer).setUint32(0, keyId >>> 0, false);
  out.set(signature, 4);
  return out;
}

/** `"— " name " " base64 "\n"`. */
export function signatureLine(name: string, base64: string): string {
  return `${SIGNATURE_LINE_PREFIX}${name} ${base64}\n`;
}

/** Room for the UTF-8 of a checkpoint-sized note text (3 bytes per UTF-16 unit at most). */
const scratch = new Uint8Array(3 * 1024);

/**
 * The bytes that are signed: the UTF-8 of the note text (which ends in a
 * newline). Short texts are encoded into a scratch array and copied to a
 * pooled view (`TextEncoder.encode` allocates an off-heap array per call).
 */
export function signedMessage(text: string): Uint8Array {
  if (text.length > scratch.length / 3) return encoder.encode(text);
  const { written } = encoder.encodeInto(text, scratch);
  const out = pooledBytes(written);
  for (let i = 0; i < written; i++) out[i] = scratch[i]!;
  return out;
}

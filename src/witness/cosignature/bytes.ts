/**
 * THE byte rules of Tally's witness layer (C2SP tlog-cosignature, Ed25519
 * type 0x04, https://c2sp.org/tlog-cosignature): every constant and every byte
 * string a witness signs is assembled in this file and nowhere else.
 *
 * - cosigner key ID   = BE-uint32( SHA-256( utf8(name) ‖ 0x0A ‖ 0x04 ‖ pubkey32 )[0:4] )
 * - cosigner vkey     = name "+" hex8(keyID) "+" base64( 0x04 ‖ pubkey32 )
 * - signed message    = "cosignature/v1\n" "time " decimal(T) "\n" ‖ checkpoint note body
 *                       (the whole text, extension lines included, ending in "\n";
 *                       no signature lines)
 * - signature bytes   = BE-uint64(T) ‖ ed25519sig64           (timestamped_signature)
 * - signature line    = "— " name " " base64( BE-uint32(keyID) ‖ BE-uint64(T) ‖ sig64 ) "\n"
 *
 * T is a POSIX time in seconds; the spec allows up to 2^63 − 1, Tally accepts
 * up to 2^53 − 1 (a JavaScript safe integer) and refuses larger ones.
 */
import { keyIdOfEncodedKey } from '../../receipt/note/layout.js';

/** Signature type byte of Ed25519 cosignatures (C2SP signed-note / tlog-cosignature). */
export const ALG_COSIGNATURE_V1 = 0x04;
/** First line of every cosigned message: the domain separator. */
export const COSIGNATURE_HEADER = 'cosignature/v1';
/** Bytes of a timestamped Ed25519 signature: u64 timestamp ‖ 64-byte signature. */
export const TIMESTAMPED_SIGNATURE_BYTES = 8 + 64;
/** Largest cosignature timestamp Tally accepts (2^53 − 1 seconds). */
export const MAX_COSIGNATURE_TIME = Number.MAX_SAFE_INTEGER;

const encoder = new TextEncoder();

/** `0x04 ‖ publicKey`: the encoded cosigner key (what the vkey base64 carries). */
export function encodeCosignerKey(publicKey: Uint8Array): Uint8Array {
  const out = new Uint8Array(1 + publicKey.length);
  out[0] = ALG_COSIGNATURE_V1;
  out.set(publicKey, 1);
  return out;
}

/** `SHA-256(name ‖ 0x0A ‖ 0x04 ‖ publicKey)[0:4]` as a big-endian uint32. */
export function cosignerKeyId(name: string, publicKey: Uint8Array): number {
  return keyIdOfEncodedKey(name, encodeCosignerKey(publicKey));
}

/** True for a timestamp Tally signs and accepts: an integer in [0, 2^53 − 1]. */
export function isCosignatureTime(time: unknown): time is number {
  return typeof time === 'number' && Number.isSafeInteger(time) && time >= 0;
}

/**
 * The cosigned message: `"cosignature/v1\ntime " T "\n"` followed by the
 * checkpoint note body bytes (`body` must already be the UTF-8 of the text).
 */
export function cosignedMessage(time: number, body: Uint8Array): Uint8Array {
  const head = encoder.encode(`${COSIGNATURE_HEADER}\ntime ${time}\n`);
  const out = new Uint8Array(head.length + body.length);
  out.set(head, 0);
  out.set(body, head.length);
  return out;
}

/** `BE-uint64(time) ‖ signature`: the timestamped_signature a cosignature line carries after the key ID. */
export function timestampedSignature(time: number, signature: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + signature.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(time), false);
  out.set(signature, 8);
  return out;
}

/** Splits a timestamped_signature; `undefined` unless it is 72 bytes with a timestamp ≤ 2^53 − 1. */
export function splitTimestampedSignature(bytes: Uint8Array): { readonly time: number; readonly signature: Uint8Array } | undefined {
  if (bytes.length !== TIMESTAMPED_SIGNATURE_BYTES) return undefined;
  const t = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, false);
  if (t > BigInt(MAX_COSIGNATURE_TIME)) return undefined;
  return { time: Number(t), signature: bytes.subarray(8) };
}

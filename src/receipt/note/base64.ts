/**
 * Standard padded base64 (RFC 4648 §4), decoded strictly: the only accepted
 * spelling of a byte string is the canonical one (padding present, unused bits
 * zero, no whitespace), so no signature or hash can be re-spelled without being
 * rejected. These are the receipt layer's names for the protocol's one base64
 * rule (`toBase64` / `fromBase64` in src/protocol/base64.ts).
 */
import { fromBase64, toBase64 } from '../../protocol/index.js';

/** Standard padded base64 of `bytes`. */
export function encodeBase64(bytes: Uint8Array): string {
  return toBase64(bytes);
}

/**
 * Decodes canonical standard padded base64; `undefined` for anything else.
 * `alloc` is where the bytes go (see `fromBase64`; default a fresh array).
 *
 * @example
 * decodeBase64Strict('AAE=')  // Uint8Array [0, 1]
 * decodeBase64Strict('AAF=')  // undefined (non-zero unused bits)
 */
export function decodeBase64Strict(s: string, alloc?: (length: number) => Uint8Array): Uint8Array | undefined {
  return typeof s === 'string' ? fromBase64(s, alloc) : undefined;
}

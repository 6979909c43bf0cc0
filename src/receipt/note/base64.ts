/**
 * Standard padded base64 (RFC 4648 §4), decoded strictly: the only accepted
 * spelling of a byte string is the canonical one (padding present, unused bits
 * zero, no whitespace), so every byte string has exactly one encoding and no
 * signature or hash can be re-spelled without being rejected.
 */

/** Standard padded base64 of `bytes`. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * Decodes canonical standard padded base64; `undefined` for anything else.
 *
 * @example
 * decodeBase64Strict('AAE=')  // Uint8Array [0, 1]
 * decodeBase64Strict('AAF=')  // undefined (non-zero unused bits)
 */
export function decodeBase64Strict(s: string): Uint8Array | undefined {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return undefined;
  const buf = Buffer.from(s, 'base64');
  if (buf.toString('base64') !== s) return undefined;
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

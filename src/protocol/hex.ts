import { TallyError } from './errors.js';

const HEX_RE = /^[0-9a-f]*$/;
const BYTE_HEX: string[] = Array.from({ length: 256 }, (_, b) => (b < 16 ? '0' : '') + b.toString(16));

/** Lowercase hex of `bytes`, no prefix. */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += BYTE_HEX[bytes[i]!]!;
  return out;
}

/** Parses lowercase hex (no prefix, even length); throws `TALLY_HEX_INVALID` otherwise. */
export function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !HEX_RE.test(hex)) {
    throw new TallyError('TALLY_HEX_INVALID', 'Expected lowercase hex of even length.', { details: `got ${JSON.stringify(hex.slice(0, 80))}` });
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = (nibble(hex.charCodeAt(2 * i)) << 4) | nibble(hex.charCodeAt(2 * i + 1));
  return out;
}

function nibble(c: number): number {
  return c <= 57 ? c - 48 : c - 87; // '0'-'9' or 'a'-'f' (already validated)
}

/** True when `s` is 64 lowercase hex characters (a 32-byte digest as written in Tally entries). */
export function isDigestHex(s: unknown): s is string {
  return typeof s === 'string' && s.length === 64 && HEX_RE.test(s);
}

/** Byte-wise equality. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

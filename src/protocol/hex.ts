import { TallyError } from './errors.js';

const BYTE_HEX: string[] = Array.from({ length: 256 }, (_, b) => (b < 16 ? '0' : '') + b.toString(16));

/** The two ASCII codes of each byte's hex, at 2·byte and 2·byte + 1. */
const HEX_CODES = Uint8Array.from({ length: 512 }, (_, i) => BYTE_HEX[i >> 1]!.charCodeAt(i & 1));
/** The 64 hex digits of a digest, before they become one flat string. */
const digestHex = new Uint8Array(64);
// Hex digits are ASCII, which latin1 (windows-1252) decodes one byte per character.
const ascii = new TextDecoder('latin1');

/** Lowercase hex of `bytes`, no prefix. */
export function toHex(bytes: Uint8Array): string {
  // A digest (the common case) is written as codes and decoded in one native
  // call: one flat string instead of 32 concatenations to flatten later.
  if (bytes.length === 32) {
    for (let i = 0; i < 32; i++) {
      const b = bytes[i]! << 1;
      digestHex[2 * i] = HEX_CODES[b]!;
      digestHex[2 * i + 1] = HEX_CODES[b + 1]!;
    }
    return ascii.decode(digestHex);
  }
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += BYTE_HEX[bytes[i]!]!;
  return out;
}

/** Each ASCII code's value as a lowercase hex digit; -1 for every other code. */
const NIBBLE = Int8Array.from({ length: 128 }, (_, c) => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1));

/** The value of the lowercase hex digit with code `c`, or -1. */
function nibble(c: number): number {
  return c < 128 ? NIBBLE[c]! : -1;
}

/** Parses lowercase hex (no prefix, even length); throws `TALLY_HEX_INVALID` otherwise. */
export function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 === 0) {
    const out = new Uint8Array(hex.length / 2);
    // Checked in the same pass: any digit outside [0-9a-f] is -1 and leaves `bad` negative.
    let bad = 0;
    for (let i = 0; i < out.length; i++) {
      const hi = nibble(hex.charCodeAt(2 * i));
      const lo = nibble(hex.charCodeAt(2 * i + 1));
      bad |= hi | lo;
      out[i] = (hi << 4) | lo;
    }
    if (bad >= 0) return out;
  }
  throw new TallyError('TALLY_HEX_INVALID', 'Expected lowercase hex of even length.', { details: `got ${JSON.stringify(hex.slice(0, 80))}` });
}

/** True when `s` is 64 lowercase hex characters (a 32-byte digest as written in Tally entries). */
export function isDigestHex(s: unknown): s is string {
  if (typeof s !== 'string' || s.length !== 64) return false;
  for (let i = 0; i < 64; i++) if (nibble(s.charCodeAt(i)) < 0) return false;
  return true;
}

/**
 * Decodes the 64 lowercase hex digit codes `text[at, at + 64)` into `out[to, to + 32)`;
 * false (those 32 bytes then meaningless) when one is not lowercase hex.
 */
export function hexDecodeAt(text: Uint8Array, at: number, out: Uint8Array, to = 0): boolean {
  let bad = 0;
  for (let i = 0; i < 32; i++) {
    const hi = nibble(text[at + 2 * i]!);
    const lo = nibble(text[at + 2 * i + 1]!);
    bad |= hi | lo;
    out[to + i] = (hi << 4) | lo;
  }
  return bad >= 0;
}

/**
 * True when `text[at, at + 64)` holds the ASCII codes of the lowercase hex of
 * the 32 bytes `digest` (a digest as written in a bundle line, compared where
 * it sits: no string is made).
 */
export function hexEqualsAt(text: Uint8Array, at: number, digest: Uint8Array): boolean {
  // Two codes per byte, compared as one 16-bit number.
  for (let i = 0; i < 32; i++) {
    const o = at + 2 * i;
    if ((text[o]! | (text[o + 1]! << 8)) !== HEX_PAIRS[digest[i]!]) return false;
  }
  return true;
}

/** Each byte's two hex digit codes as one number: the first code in the low byte. */
const HEX_PAIRS = Uint16Array.from({ length: 256 }, (_, b) => HEX_CODES[2 * b]! | (HEX_CODES[2 * b + 1]! << 8));

/** Byte-wise equality. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

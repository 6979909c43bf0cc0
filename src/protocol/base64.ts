const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** Each byte's 6-bit value in the alphabet, shifted left by `by`; -1 for every other byte. */
function decodeTable(by: number): Int32Array {
  const t = new Int32Array(256).fill(-1);
  for (let i = 0; i < ALPHABET.length; i++) t[ALPHABET.charCodeAt(i)] = i << by;
  return t;
}
const Q0 = decodeTable(18);
const Q1 = decodeTable(12);
const Q2 = decodeTable(6);
const Q3 = decodeTable(0);

/** Standard padded base64 (RFC 4648 §4) of `bytes`. */
export function toBase64(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + '==';
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + '=';
  }
  return out;
}

/** A fresh array of `length` bytes (the default home of decoded bytes). */
function newBytes(length: number): Uint8Array {
  return new Uint8Array(length);
}

/**
 * Strict decoding of standard padded base64: the only accepted spelling of a
 * byte string is the one {@link toBase64} produces (padding required, unused
 * bits zero), so every byte string has exactly one encoding. Returns
 * `undefined` for anything else. `alloc` gives the array the bytes are
 * written to (default: a fresh `Uint8Array`); it must return `length` bytes
 * nobody else writes to (a view into a shared block is fine, see the receipt
 * layer's `pooledBytes`).
 */
export function fromBase64(s: string, alloc: (length: number) => Uint8Array = newBytes): Uint8Array | undefined {
  const n = s.length;
  if (n % 4 !== 0) return undefined;
  // The characters as bytes (one native pass); more bytes than characters
  // means a character outside ASCII, which is never base64.
  const b = asciiBytes(s);
  return b === undefined ? undefined : fromBase64Ascii(b, 0, n, alloc);
}

/**
 * {@link fromBase64} of the characters whose ASCII codes are `b[start, end)`
 * (for a caller that already holds a text's bytes: no string per item).
 * The same rule: canonical padded base64 or `undefined`.
 *
 * @example
 * fromBase64Ascii(new TextEncoder().encode('xAAE=x'), 1, 5)  // Uint8Array [0, 1]
 */
export function fromBase64Ascii(b: Uint8Array, start: number, end: number, alloc: (length: number) => Uint8Array = newBytes): Uint8Array | undefined {
  const n = end - start;
  if (n % 4 !== 0) return undefined;
  const out = alloc(decodedLength(b, start, end));
  return base64Into(b, start, end, out, 0) < 0 ? undefined : out;
}

/** The length of the bytes `b[start, end)` decodes to, counting its padding (`end - start` a multiple of 4). */
function decodedLength(b: Uint8Array, start: number, end: number): number {
  const n = end - start;
  const pad = n > 0 && b[end - 1] === 61 ? (b[end - 2] === 61 ? 2 : 1) : 0;
  return (n / 4) * 3 - pad;
}

/**
 * The one decoding rule of {@link fromBase64Ascii}, written into `out` from
 * `at` (room for the decoded length is the caller's): the number of bytes
 * written, or -1 when `b[start, end)` is not canonical padded base64 (then
 * `out` may be partly written).
 */
export function base64Into(b: Uint8Array, start: number, end: number, out: Uint8Array, at: number): number {
  const n = end - start;
  if (n % 4 !== 0) return -1;
  const pad = n > 0 && b[end - 1] === 61 ? (b[end - 2] === 61 ? 2 : 1) : 0;
  const full = end - (pad > 0 ? 4 : 0);
  let o = at;
  // One quad per step, each character's 6 bits pre-shifted into place; a
  // character outside the alphabet is -1 and makes the quad negative.
  for (let i = start; i < full; i += 4) {
    const q = Q0[b[i]!]! | Q1[b[i + 1]!]! | Q2[b[i + 2]!]! | Q3[b[i + 3]!]!;
    if (q < 0) return -1;
    out[o] = q >>> 16;
    out[o + 1] = q >>> 8;
    out[o + 2] = q;
    o += 3;
  }
  if (pad > 0) {
    const a = Q3[b[full]!]!;
    const c1 = Q3[b[full + 1]!]!;
    if ((a | c1) < 0) return -1;
    out[o++] = (a << 2) | (c1 >> 4);
    if (pad === 2) {
      // Unused bits must be zero: one spelling per byte string.
      if ((c1 & 15) !== 0) return -1;
    } else {
      const c2 = Q3[b[full + 2]!]!;
      if (c2 < 0 || (c2 & 3) !== 0) return -1;
      out[o++] = ((c1 & 15) << 4) | (c2 >> 2);
    }
  }
  return o - at;
}

const encoder = new TextEncoder();
/** Reused for strings up to 4 KiB (receipts, proofs, hashes); longer ones get their own array. */
const scratch = new Uint8Array(3 * 4096);

/** The UTF-8 of `s` when every character is ASCII (then byte i IS character i), else `undefined`. */
function asciiBytes(s: string): Uint8Array | undefined {
  if (s.length > 4096) {
    const b = encoder.encode(s);
    return b.length === s.length ? b : undefined;
  }
  // Room for 3 bytes per character: the whole string is always written.
  return encoder.encodeInto(s, scratch).written === s.length ? scratch : undefined;
}

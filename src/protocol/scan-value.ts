/**
 * A byte-level proof that `line[at, …)` begins with a value written exactly as
 * canonical JSON writes it (src/protocol/canonical.ts), without building the
 * value: strings of well-formed UTF-8 with no character that needs an escape,
 * safe integers in their shortest form (no -0), `true` / `false`, arrays, and
 * objects whose member names strictly ascend, nesting within
 * {@link JSON_MAX_DEPTH}. It only ever PROVES: `-1` means "not proven" (the
 * caller then asks the reference, which names the problem), never "refused".
 *
 * Deliberately conservative, so that every proof is easy to check against the
 * reference: a backslash anywhere in a string, a `null`, a fraction or
 * exponent, and a member name outside ASCII (where UTF-8 byte order and
 * UTF-16 code-unit order can differ) are all "not proven".
 */
import { JSON_MAX_DEPTH } from './strict-json.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The end of the string whose opening quote is at `at` (just past its closing
 * quote), or -1. Proves: no control character, no backslash, well-formed UTF-8
 * (shortest forms, no encoded surrogate, at most U+10FFFF). `ascii` is set to
 * false when a byte above 0x7F was seen.
 */
export function scanString(b: Uint8Array, at: number, flags: { ascii: boolean }): number {
  let i = at + 1;
  const n = b.length;
  while (i < n) {
    const c = b[i]!;
    if (c === QUOTE) return i + 1;
    if (c < 0x80) {
      if (c < 0x20 || c === BACKSLASH) return -1;
      i++;
      continue;
    }
    flags.ascii = false;
    // Well-formed UTF-8 (RFC 3629 table 3-7): the second byte's range depends on the first.
    if (c >= 0xc2 && c <= 0xdf) {
      if (!cont(b[i + 1])) return -1;
      i += 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      const d = b[i + 1];
      if (d === undefined) return -1;
      const lo = c === 0xe0 ? 0xa0 : 0x80;
      const hi = c === 0xed ? 0x9f : 0xbf; // ED A0..BF would be a surrogate
      if (d < lo || d > hi || !cont(b[i + 2])) return -1;
      i += 3;
    } else if (c >= 0xf0 && c <= 0xf4) {
      const d = b[i + 1];
      if (d === undefined) return -1;
      const lo = c === 0xf0 ? 0x90 : 0x80;
      const hi = c === 0xf4 ? 0x8f : 0xbf;
      if (d < lo || d > hi || !cont(b[i + 2]) || !cont(b[i + 3])) return -1;
      i += 4;
    } else return -1;
  }
  return -1;
}

function cont(x: number | undefined): boolean {
  return x !== undefined && x >= 0x80 && x <= 0xbf;
}

/** Largest safe integer's digits, for comparing a 16-digit run byte-wise. */
const MAX_SAFE_DIGITS = '9007199254740991';

/**
 * The end of the canonical safe integer at `at`, or -1: `0`, or an optional
 * `-` and a digit run without a leading zero that is at most 2^53 - 1 in size
 * (`-0` is not canonical: the canonical writer prints 0).
 */
export function scanInteger(b: Uint8Array, at: number): number {
  let i = at;
  const neg = b[i] === 0x2d;
  if (neg) i++;
  const first = i;
  const c0 = b[i];
  if (c0 === undefined || c0 < 0x30 || c0 > 0x39) return -1;
  if (c0 === 0x30) {
    if (neg) return -1;
    i++;
  } else {
    while (i < b.length && b[i]! >= 0x30 && b[i]! <= 0x39) i++;
  }
  const digits = i - first;
  if (digits > 16) return -1;
  if (digits === 16) {
    for (let k = 0; k < 16; k++) {
      const d = b[first + k]!;
      const m = MAX_SAFE_DIGITS.charCodeAt(k);
      if (d < m) break;
      if (d > m) return -1;
    }
  }
  const next = b[i];
  // A fraction or exponent is not an integer's canonical form.
  if (next === 0x2e || next === 0x65 || next === 0x45) return -1;
  return i;
}

/** Compares member names `b[a0, a1)` and `b[c0, c1)` (ASCII, quotes excluded) byte-wise. */
function ascends(b: Uint8Array, a0: number, a1: number, c0: number, c1: number): boolean {
  const n = Math.min(a1 - a0, c1 - c0);
  for (let k = 0; k < n; k++) {
    const x = b[a0 + k]!;
    const y = b[c0 + k]!;
    if (x !== y) return x < y;
  }
  return a1 - a0 < c1 - c0;
}

const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];

function word(b: Uint8Array, at: number, w: readonly number[]): number {
  for (let k = 0; k < w.length; k++) if (b[at + k] !== w[k]) return -1;
  return at + w.length;
}

/**
 * The end of the canonical value starting at `at`, or -1 when that is not
 * proven. `level` is the nesting level a container starting at `at` would
 * have in the whole document (an entry's members are at level 2).
 */
export function scanValue(b: Uint8Array, at: number, level: number): number {
  const c = b[at];
  switch (c) {
    case QUOTE:
      return scanString(b, at, { ascii: true });
    case 0x74:
      return word(b, at, TRUE);
    case 0x66:
      return word(b, at, FALSE);
    case 0x5b: {
      if (level > JSON_MAX_DEPTH) return -1;
      let i = at + 1;
      if (b[i] === 0x5d) return i + 1;
      for (;;) {
        i = scanValue(b, i, level + 1);
        if (i < 0) return -1;
        const d = b[i];
        if (d === 0x5d) return i + 1;
        if (d !== 0x2c) return -1;
        i++;
      }
    }
    case 0x7b:
      return scanObject(b, at, level);
    default:
      return c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39) ? scanInteger(b, at) : -1;
  }
}

/** {@link scanValue} for an object (the value at `at` must open with `{`). */
export function scanObject(b: Uint8Array, at: number, level: number): number {
  if (b[at] !== 0x7b || level > JSON_MAX_DEPTH) return -1;
  let i = at + 1;
  if (b[i] === 0x7d) return i + 1;
  const flags = { ascii: true };
  let prevStart = -1;
  let prevEnd = -1;
  for (;;) {
    if (b[i] !== QUOTE) return -1;
    const keyEnd = scanString(b, i, flags);
    if (keyEnd < 0 || !flags.ascii) return -1;
    // Strictly ascending names: in order, and no name twice.
    if (prevStart >= 0 && !ascends(b, prevStart, prevEnd, i + 1, keyEnd - 1)) return -1;
    prevStart = i + 1;
    prevEnd = keyEnd - 1;
    if (b[keyEnd] !== 0x3a) return -1;
    i = scanValue(b, keyEnd + 1, level + 1);
    if (i < 0) return -1;
    const d = b[i];
    if (d === 0x7d) return i + 1;
    if (d !== 0x2c) return -1;
    i++;
  }
}

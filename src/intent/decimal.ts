/**
 * Canonical decimal strings: the one spelling of every Intent numeric.
 *
 * Parsing is done character by character on the literal; a numeric value is
 * never passed through `Number`/`parseFloat`, and the literal length and the
 * exponent are bounded before anything is expanded, so `"1e8000000"` is a
 * constant-time rejection rather than a 8 MB string.
 */

/** Longest accepted decimal literal (characters, including sign, point and exponent). */
export const MAX_DECIMAL_LITERAL_LENGTH = 100;
/** Largest accepted exponent magnitude in a literal such as `"1e-30"`. */
export const MAX_DECIMAL_EXPONENT = 100;
/** Hard cap on integer digits of a canonical decimal (absurd-input guard; policy limits are tighter). */
export const MAX_CANONICAL_INTEGER_DIGITS = 80;
/** Hard cap on fraction digits of a canonical decimal (absurd-input guard; policy limits are tighter). */
export const MAX_CANONICAL_FRACTION_DIGITS = 80;

/**
 * The decimal literal grammar accepted on the wire (linear-time: no ambiguous
 * repetition). Used for the JSON Schema `pattern`; the parser below is the
 * authority and additionally enforces the length and exponent bounds.
 */
export const DECIMAL_LITERAL_PATTERN = '^[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?$';

/** Result of {@link canonicalDecimal}. */
export type CanonicalDecimalResult = { readonly ok: true; readonly value: string } | { readonly ok: false; readonly reason: string };

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/**
 * Normalizes a finite JS number or a decimal string to its canonical decimal
 * string: no exponent, no `+`, no leading zeros (one `0` before a point), no
 * trailing fraction zeros, no trailing point, and no sign on zero.
 *
 * @example
 * canonicalDecimal('1.000'); // { ok: true, value: '1' }
 * canonicalDecimal(.5);      // { ok: true, value: '0.5' }
 * canonicalDecimal('1e3');   // { ok: true, value: '1000' }
 * canonicalDecimal('-0.0');  // { ok: true, value: '0' }
 * canonicalDecimal('1e8000000').ok; // false (exponent bound)
 */
export function canonicalDecimal(input: unknown): CanonicalDecimalResult {
  let literal: string;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return { ok: false, reason: 'number is not finite' };
    // String(n) is the shortest round-trip spelling of a double (e.g. "1e-7", "1e+21");
    // its VALUE is then read by the literal parser, never by float arithmetic.
    literal = String(input);
  } else if (typeof input === 'string') {
    literal = input;
  } else {
    return { ok: false, reason: 'expected a number or a decimal string' };
  }
  return parseLiteral(literal);
}

function parseLiteral(s: string): CanonicalDecimalResult {
  const len = s.length;
  if (len === 0) return { ok: false, reason: 'empty decimal literal' };
  if (len > MAX_DECIMAL_LITERAL_LENGTH) return { ok: false, reason: `decimal literal longer than ${MAX_DECIMAL_LITERAL_LENGTH} characters` };
  let i = 0;
  let negative = false;
  const first = s.charCodeAt(0);
  if (first === 43 /* + */ || first === 45 /* - */) {
    negative = first === 45;
    i = 1;
  }
  const intStart = i;
  while (i < len && isDigit(s.charCodeAt(i))) i++;
  const intDigits = s.slice(intStart, i);
  let fracDigits = '';
  if (i < len && s.charCodeAt(i) === 46 /* . */) {
    i++;
    const fracStart = i;
    while (i < len && isDigit(s.charCodeAt(i))) i++;
    fracDigits = s.slice(fracStart, i);
  }
  if (intDigits.length === 0 && fracDigits.length === 0) return { ok: false, reason: 'not a decimal literal' };
  let exponent = 0;
  if (i < len && (s.charCodeAt(i) === 101 /* e */ || s.charCodeAt(i) === 69) /* E */) {
    i++;
    let expNegative = false;
    if (i < len && (s.charCodeAt(i) === 43 || s.charCodeAt(i) === 45)) {
      expNegative = s.charCodeAt(i) === 45;
      i++;
    }
    const expStart = i;
    while (i < len && isDigit(s.charCodeAt(i))) i++;
    if (i === expStart) return { ok: false, reason: 'exponent has no digits' };
    let k = expStart;
    while (k < i - 1 && s.charCodeAt(k) === 48) k++; // skip leading zeros of the exponent
    if (i - k > 3) return { ok: false, reason: `exponent magnitude above ${MAX_DECIMAL_EXPONENT}` };
    let magnitude = 0;
    for (; k < i; k++) magnitude = magnitude * 10 + (s.charCodeAt(k) - 48);
    if (magnitude > MAX_DECIMAL_EXPONENT) return { ok: false, reason: `exponent magnitude above ${MAX_DECIMAL_EXPONENT}` };
    exponent = expNegative ? -magnitude : magnitude;
  }
  if (i !== len) return { ok: false, reason: 'not a decimal literal' };

  // value = 0.digits × 10^point, digits without leading/trailing zeros.
  let digits = intDigits + fracDigits;
  let point = intDigits.length + exponent;
  let lead = 0;
  while (lead < digits.length && digits.charCodeAt(lead) === 48) lead++;
  let end = digits.length;
  while (end > lead && digits.charCodeAt(end - 1) === 48) end--;
  if (lead === end) return { ok: true, value: '0' };
  digits = digits.slice(lead, end);
  point -= lead;

  const integerDigits = point > 0 ? point : 0;
  const fractionDigits = digits.length - point > 0 ? digits.length - point : 0;
  if (integerDigits > MAX_CANONICAL_INTEGER_DIGITS) return { ok: false, reason: `more than ${MAX_CANONICAL_INTEGER_DIGITS} integer digits` };
  if (fractionDigits > MAX_CANONICAL_FRACTION_DIGITS) return { ok: false, reason: `more than ${MAX_CANONICAL_FRACTION_DIGITS} fraction digits` };

  let body: string;
  if (point <= 0) body = `0.${'0'.repeat(-point)}${digits}`;
  else if (point >= digits.length) body = digits + '0'.repeat(point - digits.length);
  else body = `${digits.slice(0, point)}.${digits.slice(point)}`;
  return { ok: true, value: negative ? `-${body}` : body };
}

/** Shape facts of a canonical decimal, read from the string (no float arithmetic). */
export interface DecimalShape {
  /** True for a value strictly below zero. */
  readonly negative: boolean;
  /** True for exactly `"0"`. */
  readonly zero: boolean;
  /** Digits before the point, not counting a lone leading `0` (`"0.5"` → 0, `"12.3"` → 2). */
  readonly integerDigits: number;
  /** Digits after the point (`"1"` → 0, `"0.005"` → 3). */
  readonly fractionDigits: number;
}

/**
 * Reads sign, zero-ness, magnitude and scale from a CANONICAL decimal string
 * (as produced by {@link canonicalDecimal}).
 *
 * @example
 * decimalShape('-12.5'); // { negative: true, zero: false, integerDigits: 2, fractionDigits: 1 }
 */
export function decimalShape(canonical: string): DecimalShape {
  const negative = canonical.startsWith('-');
  const body = negative ? canonical.slice(1) : canonical;
  const dot = body.indexOf('.');
  const intPart = dot === -1 ? body : body.slice(0, dot);
  return {
    negative,
    zero: canonical === '0',
    integerDigits: intPart === '0' ? 0 : intPart.length,
    fractionDigits: dot === -1 ? 0 : body.length - dot - 1,
  };
}

/**
 * True when a canonical decimal lies in the closed interval [0, 1].
 *
 * @example
 * isUnitInterval('1');                  // true
 * isUnitInterval('1.0000000000000001'); // false
 */
export function isUnitInterval(canonical: string): boolean {
  if (canonical.startsWith('-')) return false;
  return canonical === '1' || canonical === '0' || canonical.startsWith('0.');
}

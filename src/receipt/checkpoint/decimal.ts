/** Outcome of `parseDecimal`. */
export type ParseDecimalResult = { readonly ok: true; readonly value: number } | { readonly ok: false; readonly reason: 'syntax' | 'range' };

/**
 * Parses an ASCII decimal with no sign and no leading zeros (except "0"), as
 * C2SP requires for tree sizes and indexes; values above
 * `Number.MAX_SAFE_INTEGER` (2^53 − 1) are out of Tally's range.
 */
export function parseDecimal(s: string): ParseDecimalResult {
  if (!/^(0|[1-9][0-9]*)$/.test(s)) return { ok: false, reason: 'syntax' };
  if (s.length > 16) return { ok: false, reason: 'range' };
  const value = Number(s);
  return Number.isSafeInteger(value) ? { ok: true, value } : { ok: false, reason: 'range' };
}

/** True for a non-negative safe integer (a valid tree size or index). */
export function isTreeCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

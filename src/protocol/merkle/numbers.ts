/**
 * Integer helpers for tree sizes and indices up to `Number.MAX_SAFE_INTEGER`.
 * JS bit operators truncate to 32 bits, so these use exact arithmetic on
 * non-negative safe integers instead. Callers check {@link isTreeCount} first.
 */

/** True when `n` is a non-negative safe integer (a valid tree size or leaf index). */
export function isTreeCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/** `n >> 1` for a non-negative safe integer. */
export function half(n: number): number {
  return Math.floor(n / 2);
}

/** True when the lowest bit of a non-negative safe integer is set. */
export function isOdd(n: number): boolean {
  return n % 2 === 1;
}

/** Number of set bits of a non-negative safe integer. */
export function popcount(n: number): number {
  let count = 0;
  for (let x = n; x > 0; x = half(x)) count += x % 2;
  return count;
}

/** Number of bits needed to write a non-negative safe integer (0 for 0). */
export function bitLength(n: number): number {
  let len = 0;
  for (let x = n; x > 0; x = half(x)) len++;
  return len;
}

/** True when `n` is 1, 2, 4, 8, … */
export function isPowerOfTwo(n: number): boolean {
  return n > 0 && popcount(n) === 1;
}

/** The largest power of two strictly less than `n`; requires `n >= 2` (RFC 9162 §2.1.1's `k`). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * Number of hashes on the RFC 9162 verification path from node `fn` to the
 * root of a tree whose last node is `sn` (the loop of §2.1.3.2 and §2.1.4.2,
 * counting instead of hashing): the one walk both proof lengths are made of.
 */
export function pathSteps(fn: number, sn: number): number {
  let count = 0;
  while (sn > 0) {
    if (isOdd(fn) || fn === sn) {
      while (fn !== 0 && !isOdd(fn)) {
        fn = half(fn);
        sn = half(sn);
      }
    }
    fn = half(fn);
    sn = half(sn);
    count++;
  }
  return count;
}

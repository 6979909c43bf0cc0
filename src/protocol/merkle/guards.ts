import { TallyError } from '../errors.js';
import { MERKLE_HASH_LENGTH } from './hasher.js';
import { isTreeCount } from './numbers.js';

/** True for a real `Uint8Array` (not a Proxy or array-like look-alike). */
export function isBytes(x: unknown): x is Uint8Array {
  // isView first: it reads an internal slot, so a Proxy cannot run code here.
  return ArrayBuffer.isView(x) && x instanceof Uint8Array;
}

/** True for a `Uint8Array` of exactly {@link MERKLE_HASH_LENGTH} bytes. */
export function isTreeHash(x: unknown): x is Uint8Array {
  return isBytes(x) && x.length === MERKLE_HASH_LENGTH;
}

/** Throws `TALLY_MERKLE_BAD_HASH` unless `x` is a 32-byte `Uint8Array`; `what` names the argument. */
export function assertTreeHash(x: unknown, what: string): asserts x is Uint8Array {
  if (!isTreeHash(x)) {
    throw new TallyError('TALLY_MERKLE_BAD_HASH', `${what} must be a ${MERKLE_HASH_LENGTH}-byte Uint8Array.`, {
      details: isBytes(x) ? `got ${x.length} bytes` : `got ${typeof x}`,
    });
  }
}

/**
 * Throws `TALLY_MERKLE_OUT_OF_RANGE` unless `n` is a safe integer with
 * `min <= n <= max`; `what` names the argument.
 */
export function assertCountInRange(n: unknown, min: number, max: number, what: string): asserts n is number {
  if (!isTreeCount(n) || n < min || n > max) {
    throw new TallyError('TALLY_MERKLE_OUT_OF_RANGE', `${what} is out of range.`, {
      details: `requires an integer in [${min}, ${max}], got ${String(n)}`,
    });
  }
}

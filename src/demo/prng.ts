/**
 * The demo's only source of randomness: a small seeded PRNG (mulberry32 over a
 * splitmix32-scrambled seed). Integer arithmetic only (`Math.imul`, shifts),
 * so every platform draws the same numbers for the same seed; nothing here
 * reads `Math.random` or the clock.
 */
import { TallyError } from '../protocol/errors.js';

/** A seeded stream of pseudo-random numbers. */
export interface Rng {
  /** The next 32-bit unsigned integer. */
  u32(): number;
  /** An integer in `[lo, hi]` (both inclusive). */
  int(lo: number, hi: number): number;
  /** True with probability `numerator / denominator` (integers, no floating point). */
  chance(numerator: number, denominator: number): boolean;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** A new array with the elements of `items` in a seeded (Fisher–Yates) order. */
  shuffle<T>(items: readonly T[]): T[];
  /** An independent stream derived from this one and a label (for sub-simulations). */
  fork(label: string): Rng;
}

/** Largest seed `createRng` accepts (seeds are 32-bit). */
export const MAX_SEED = 0xffffffff;

function splitmix32(x: number): number {
  let z = (x + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

function labelHash(label: string): number {
  // FNV-1a over UTF-16 code units.
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * A mulberry32 stream for `seed` (an integer from 0 to {@link MAX_SEED}).
 * Throws `TALLY_DEMO_SEED` for any other value.
 *
 * @example
 * const rng = createRng(1);
 * rng.int(1, 6); // the same die roll on every machine
 */
export function createRng(seed: number): Rng {
  if (!Number.isSafeInteger(seed) || seed < 0 || seed > MAX_SEED) {
    throw new TallyError('TALLY_DEMO_SEED', `seed must be an integer from 0 to ${MAX_SEED}`, { details: String(seed) });
  }
  let state = splitmix32(seed);
  const u32 = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
  const below = (n: number): number => {
    // Rejection sampling: unbiased for any n in [1, 2^32].
    const limit = 0x100000000 - (0x100000000 % n);
    for (;;) {
      const x = u32();
      if (x < limit) return x % n;
    }
  };
  const rng: Rng = {
    u32,
    int(lo, hi) {
      if (!Number.isSafeInteger(lo) || !Number.isSafeInteger(hi) || hi < lo || hi - lo >= 0x100000000) {
        throw new TallyError('TALLY_DEMO_RANGE', 'int(lo, hi) needs integers with lo <= hi and a span below 2^32', { details: `${lo}..${hi}` });
      }
      return lo + below(hi - lo + 1);
    },
    chance(numerator, denominator) {
      return below(denominator) < numerator;
    },
    pick(items) {
      if (items.length === 0) throw new TallyError('TALLY_DEMO_RANGE', 'pick() needs a non-empty array');
      return items[below(items.length)] as (typeof items)[number];
    },
    shuffle(items) {
      const out = items.slice();
      for (let i = out.length - 1; i > 0; i--) {
        const j = below(i + 1);
        const tmp = out[i] as (typeof out)[number];
        out[i] = out[j] as (typeof out)[number];
        out[j] = tmp;
      }
      return out;
    },
    fork(label) {
      return createRng((u32() ^ labelHash(label)) >>> 0);
    },
  };
  return rng;
}

import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRng, MAX_SEED } from '../../src/demo/prng.js';
import { TallyError } from '../../src/protocol/errors.js';

describe('demo PRNG', () => {
  it('draws a pinned sequence for seed 1 (the same on every machine)', () => {
    const rng = createRng(1);
    const first = Array.from({ length: 6 }, () => rng.u32());
    // Pinned: a change here changes every demo receipt root.
    expect(first).toEqual(PINNED_SEED_1);
  });

  it('is mulberry32 over a splitmix32-scrambled seed (cross-check with the reference, seed 0x5eed)', () => {
    const splitmix32 = (x: number) => {
      let z = (x + 0x9e3779b9) | 0;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_SEED }), (seed) => {
        const ours = createRng(seed);
        const ref = referenceMulberry32(splitmix32(seed));
        for (let i = 0; i < 16; i++) expect(ours.u32()).toBe(ref());
      }),
      { seed: 0x5eed, numRuns: 100 },
    );
  });

  it('is a pure function of the seed; different seeds differ', () => {
    const a = createRng(42);
    const b = createRng(42);
    const c = createRng(43);
    const xs = Array.from({ length: 100 }, () => a.u32());
    expect(Array.from({ length: 100 }, () => b.u32())).toEqual(xs);
    expect(Array.from({ length: 100 }, () => c.u32())).not.toEqual(xs);
  });

  it('int, chance, pick and shuffle stay in range, shuffle permutes (seed 0x7a11)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_SEED }), fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 0, max: 500 }), (seed, lo, span) => {
        const rng = createRng(seed);
        for (let i = 0; i < 20; i++) {
          const x = rng.int(lo, lo + span);
          expect(x).toBeGreaterThanOrEqual(lo);
          expect(x).toBeLessThanOrEqual(lo + span);
          expect(Number.isSafeInteger(x)).toBe(true);
        }
        expect(rng.chance(0, 5)).toBe(false);
        expect(rng.chance(5, 5)).toBe(true);
        const items = Array.from({ length: span % 30 }, (_, i) => i);
        const s = rng.shuffle(items);
        expect([...s].sort((a, b) => a - b)).toEqual(items);
        if (items.length > 0) expect(items).toContain(rng.pick(items));
      }),
      { seed: 0x7a11, numRuns: 200 },
    );
  });

  it('int covers both ends of a small range', () => {
    const rng = createRng(7);
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) seen.add(rng.int(1, 4));
    expect([...seen].sort()).toEqual([1, 2, 3, 4]);
  });

  it('forks are independent of each other and reproducible', () => {
    const a = createRng(9).fork('market');
    const b = createRng(9).fork('market');
    const c = createRng(9).fork('agent');
    const xs = [a.u32(), a.u32()];
    expect([b.u32(), b.u32()]).toEqual(xs);
    expect([c.u32(), c.u32()]).not.toEqual(xs);
  });

  it('refuses seeds outside 0 … 2^32−1 and bad ranges with a TallyError', () => {
    for (const bad of [-1, MAX_SEED + 1, 1.5, Number.NaN]) expect(() => createRng(bad)).toThrow(TallyError);
    expect(() => createRng(1).int(5, 4)).toThrow(TallyError);
    expect(() => createRng(1).pick([])).toThrow(TallyError);
  });

  it('nothing in src/demo reads Math.random or the wall clock (performance.now only times phases in run.ts)', () => {
    const dir = resolve(import.meta.dirname, '../../src/demo');
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
      const text = readFileSync(join(dir, f), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      expect(text, f).not.toMatch(/Math\.random|Date\.now|new Date\(\s*\)|process\.hrtime/);
      if (f !== 'run.ts') expect(text, f).not.toMatch(/performance\.now/);
    }
  });
});

const PINNED_SEED_1 = [711699459, 1679400207, 1692264768, 2520730185, 1490823452, 3351641948];

/** mulberry32 as published by Tommy Ettinger (the reference the demo PRNG must match). */
function referenceMulberry32(a: number): () => number {
  return function () {
    let t = (a += 0x6d2b79f5);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/**
 * Sizes and indices beyond 32 bits: JS bit operators would truncate there, so
 * the arithmetic is checked up to Number.MAX_SAFE_INTEGER.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  consistencyProofFromNodes,
  consistencyProofLength,
  inclusionProofFromNodes,
  inclusionProofLength,
  rootFromNodes,
  verifyConsistency,
  verifyInclusion,
  type NodeReader,
} from '../../src/protocol/merkle/index.js';
import { sha256Hasher } from '../../src/merkle/index.js';
import { flipBit, makeLeaves } from './helpers.js';

const H = sha256Hasher;
const MAX = Number.MAX_SAFE_INTEGER;

// Independent length formulas in BigInt (the decomposition of transparency-dev/merkle's docs):
// inclusion = bitlen(index ^ (size-1)) + popcount(index >> inner).
const bitLen = (x: bigint): number => (x === 0n ? 0 : x.toString(2).length);
const ones = (x: bigint): number => x.toString(2).replace(/0/g, '').length;
function inclusionLen(index: bigint, size: bigint): number {
  const inner = bitLen(index ^ (size - 1n));
  return inner + ones(index >> BigInt(inner));
}
function consistencyLen(size1: bigint, size2: bigint): number {
  if (size1 === size2) return 0;
  const inner = bitLen((size1 - 1n) ^ (size2 - 1n));
  const border = ones((size1 - 1n) >> BigInt(inner));
  let shift = 0;
  while (((size1 >> BigInt(shift)) & 1n) === 0n) shift++;
  const seed = size1 === 1n << BigInt(shift) ? 0 : 1;
  return seed + inner - shift + border;
}

/** A virtual tree of `2^53 - 1` identical leaves: every perfect subtree at a level has the same root. */
const leaf = makeLeaves(1, 42)[0]!;
const perfect: Uint8Array[] = [leaf];
for (let h = 1; h <= 53; h++) perfect.push(H.hashChildren(perfect[h - 1]!, perfect[h - 1]!));
const virtualTree: NodeReader = {
  node(level, index) {
    if (!Number.isSafeInteger(index) || index < 0 || (index + 1) * 2 ** level > MAX) throw new Error('out of range');
    return perfect[level]!;
  },
};

// Uniform draws up to 2^53 almost never hit the sizes where tree arithmetic turns (2^k - 1, 2^k, 2^k + 1,
// the maximum) nor the last index: half the draws are aimed there.
const nearPowerOfTwo = fc
  .tuple(fc.integer({ min: 0, max: 53 }), fc.constantFrom(-1, 0, 1))
  .map(([k, d]) => 2 ** k + d)
  .filter((x) => x >= 1 && x <= MAX);
const sizeArb = fc.oneof(fc.integer({ min: 1, max: MAX }), nearPowerOfTwo, fc.constant(MAX));
/** An index or smaller size from `r`: uniform for r ≥ 0, the last (or second-last) for -1 (-2). */
const pickArb = fc.oneof(fc.integer({ min: 0, max: MAX }), fc.constantFrom(-1, -2));
const pick = (r: number, size: number): number => (r >= 0 ? r % size : Math.max(0, size + r));

describe('lengths up to 2^53 - 1', () => {
  it('inclusionProofLength equals the BigInt formula (seed 0xb16)', () => {
    fc.assert(
      fc.property(sizeArb, pickArb, (size, r) => {
        const index = pick(r, size);
        expect(inclusionProofLength(index, size)).toBe(inclusionLen(BigInt(index), BigInt(size)));
      }),
      { seed: 0xb16, numRuns: 2000 },
    );
  });

  it('consistencyProofLength equals the BigInt formula (seed 0xb17)', () => {
    fc.assert(
      fc.property(sizeArb, pickArb, (size2, r) => {
        const size1 = 1 + pick(r, size2);
        expect(consistencyProofLength(size1, size2)).toBe(consistencyLen(BigInt(size1), BigInt(size2)));
      }),
      { seed: 0xb17, numRuns: 2000 },
    );
  });

  it('lengths at the edges', () => {
    expect(inclusionProofLength(0, 1)).toBe(0);
    expect(inclusionProofLength(MAX - 1, MAX)).toBe(inclusionLen(BigInt(MAX - 1), BigInt(MAX)));
    expect(inclusionProofLength(0, 2 ** 52)).toBe(52);
    expect(consistencyProofLength(2 ** 32, 2 ** 32 + 1)).toBe(consistencyLen(2n ** 32n, 2n ** 32n + 1n));
    expect(consistencyProofLength(MAX - 1, MAX)).toBe(consistencyLen(BigInt(MAX - 1), BigInt(MAX)));
  });
});

describe('proofs over a virtual 2^53 - 1 leaf tree', () => {
  it('root of a perfect size is the stored node', () => {
    expect(rootFromNodes(H, virtualTree, 2 ** 40)).toEqual(perfect[40]);
  });

  it('generated inclusion proofs verify at huge sizes; flipped bits do not (seed 0xb18)', () => {
    fc.assert(
      fc.property(sizeArb, pickArb, fc.nat(255), (size, r, bit) => {
        const index = pick(r, size);
        const proof = inclusionProofFromNodes(H, virtualTree, index, size);
        const root = rootFromNodes(H, virtualTree, size);
        expect(proof).toHaveLength(inclusionProofLength(index, size));
        expect(verifyInclusion(H, index, size, leaf, proof, root)).toEqual({ ok: true });
        if (proof.length > 0) {
          const bad = [...proof];
          bad[bit % bad.length] = flipBit(bad[bit % bad.length]!, bit);
          expect(verifyInclusion(H, index, size, leaf, bad, root).ok).toBe(false);
        }
      }),
      { seed: 0xb18, numRuns: 60 },
    );
  });

  it('generated consistency proofs verify at huge sizes; flipped bits do not (seed 0xb19)', () => {
    fc.assert(
      fc.property(sizeArb, pickArb, fc.nat(255), (size2, r, bit) => {
        const size1 = 1 + pick(r, size2);
        const proof = consistencyProofFromNodes(H, virtualTree, size1, size2);
        const root1 = rootFromNodes(H, virtualTree, size1);
        const root2 = rootFromNodes(H, virtualTree, size2);
        expect(proof).toHaveLength(consistencyProofLength(size1, size2));
        expect(verifyConsistency(H, size1, size2, proof, root1, root2)).toEqual({ ok: true });
        if (proof.length > 0) {
          const bad = [...proof];
          bad[bit % bad.length] = flipBit(bad[bit % bad.length]!, bit);
          expect(verifyConsistency(H, size1, size2, bad, root1, root2).ok).toBe(false);
        }
      }),
      { seed: 0xb19, numRuns: 60 },
    );
  });

  it('sizes past 2^53 - 1 are invalid-number, not wrapped', () => {
    expect(verifyInclusion(H, 0, 2 ** 53, leaf, [], leaf)).toMatchObject({ ok: false, code: 'invalid-number' });
    expect(verifyConsistency(H, 1, 2 ** 53 + 2, [], leaf, leaf)).toMatchObject({ ok: false, code: 'invalid-number' });
  });
});

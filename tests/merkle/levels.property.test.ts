/**
 * MerkleLevels and Frontier against the plain RFC 9162 recursive reference,
 * and the cost bounds that show nothing is rebuilt.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toHex } from '../../src/protocol/hex.js';
import {
  consistencyProofFromLeafHashes,
  Frontier,
  inclusionProofFromLeafHashes,
  MerkleLevels,
  rootFromLeafHashes,
  verifyConsistency,
  verifyInclusion,
} from '../../src/protocol/merkle/index.js';
import { sha256Hasher } from '../../src/merkle/index.js';
import { countingHasher, makeLeaves } from './helpers.js';

const H = sha256Hasher;
const hexes = (xs: Uint8Array[]): string[] => xs.map(toHex);

function popcount(n: number): number {
  return n.toString(2).replace(/0/g, '').length;
}

describe('MerkleLevels equals the recursive reference', () => {
  it('roots, inclusion and consistency proofs for sampled sizes up to 300 (seed 0x6962)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }),
        fc.integer(),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 6 }),
        (n, salt, picks) => {
          const leaves = makeLeaves(n, salt);
          const tree = new MerkleLevels(H);
          for (const l of leaves) tree.append(l);
          expect(tree.size).toBe(n);
          for (const [a, b] of picks) {
            // inclusion at (index, size)
            const size = 1 + (a % n);
            const index = b % size;
            const root = rootFromLeafHashes(H, leaves.slice(0, size));
            expect(toHex(tree.root(size))).toBe(toHex(root));
            const proof = tree.inclusionProof(index, size);
            expect(hexes(proof)).toEqual(hexes(inclusionProofFromLeafHashes(H, leaves, index, size)));
            expect(verifyInclusion(H, index, size, tree.leafHash(index), proof, root)).toEqual({ ok: true });
            // consistency from size1 to size2
            const size2 = 1 + (b % n);
            const size1 = 1 + (a % size2);
            const cproof = tree.consistencyProof(size1, size2);
            expect(hexes(cproof)).toEqual(hexes(consistencyProofFromLeafHashes(H, leaves, size1, size2)));
            const root1 = rootFromLeafHashes(H, leaves.slice(0, size1));
            const root2 = rootFromLeafHashes(H, leaves.slice(0, size2));
            expect(verifyConsistency(H, size1, size2, cproof, root1, root2)).toEqual({ ok: true });
          }
        },
      ),
      { seed: 0x6962, numRuns: 30 },
    );
  });

  it('every (index, size) and (size1, size2) for trees up to 20 leaves', () => {
    const leaves = makeLeaves(20, 7);
    const tree = new MerkleLevels(H);
    expect(toHex(tree.root())).toBe(toHex(H.emptyRoot()));
    expect(tree.consistencyProof(0, 0)).toEqual([]);
    for (const l of leaves) tree.append(l);
    for (let size = 1; size <= 20; size++) {
      for (let i = 0; i < size; i++) {
        expect(hexes(tree.inclusionProof(i, size))).toEqual(hexes(inclusionProofFromLeafHashes(H, leaves, i, size)));
      }
      for (let s1 = 1; s1 <= size; s1++) {
        expect(hexes(tree.consistencyProof(s1, size))).toEqual(hexes(consistencyProofFromLeafHashes(H, leaves, s1, size)));
      }
    }
  });

  it('appends cost n - popcount(n) node hashes in total; roots and proofs O(log n) hashes (seed 0x10c)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.nat(), fc.nat(), (n, a, b) => {
        const leaves = makeLeaves(n, n);
        const c = countingHasher();
        const tree = new MerkleLevels(c.hasher);
        for (const l of leaves) tree.append(l);
        expect(c.count()).toBe(n - popcount(n));
        const logn = Math.ceil(Math.log2(n)) + 1;
        const size = 1 + (a % n);
        c.reset();
        tree.root(size);
        expect(c.count()).toBeLessThanOrEqual(logn);
        c.reset();
        tree.inclusionProof(b % size, size);
        expect(c.count()).toBeLessThanOrEqual(logn);
        c.reset();
        tree.consistencyProof(1 + (b % size), size);
        expect(c.count()).toBeLessThanOrEqual(2 * logn);
      }),
      { seed: 0x10c, numRuns: 100 },
    );
  });

  it('rejects misuse with TALLY_MERKLE_* errors', () => {
    const tree = new MerkleLevels(H);
    for (const l of makeLeaves(5, 1)) tree.append(l);
    expect(() => tree.append(new Uint8Array(31))).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_BAD_HASH' }));
    expect(() => tree.root(6)).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_OUT_OF_RANGE' }));
    expect(() => tree.inclusionProof(5, 5)).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_OUT_OF_RANGE' }));
    expect(() => tree.inclusionProof(0, 0)).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_OUT_OF_RANGE' }));
    expect(() => tree.inclusionProof(-1, 3)).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_OUT_OF_RANGE' }));
    expect(() => tree.consistencyProof(0, 3)).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_OUT_OF_RANGE' }));
    expect(() => tree.consistencyProof(4, 3)).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_OUT_OF_RANGE' }));
    expect(() => tree.leafHash(5)).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_OUT_OF_RANGE' }));
    expect(() => tree.node(1, 2)).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_OUT_OF_RANGE' }));
    expect(toHex(tree.node(2, 0))).toBe(toHex(rootFromLeafHashes(H, makeLeaves(4, 1))));
    // Returned hashes are copies: mutating them does not touch the tree.
    const before = toHex(tree.root());
    tree.leafHash(0).fill(0);
    tree.node(2, 0).fill(0);
    tree.inclusionProof(0)[0]!.fill(0);
    expect(toHex(tree.root())).toBe(before);
  });
});

describe('Frontier equals the reference at every size', () => {
  it('root after each append, and restore-then-continue from hashes() (seed 0xf0f0)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), fc.integer(), fc.nat(), (n, salt, cut) => {
        const leaves = makeLeaves(n, salt);
        const f = new Frontier(H);
        const restoreAt = n === 0 ? 0 : cut % (n + 1);
        let restored: Frontier | undefined;
        expect(toHex(f.root())).toBe(toHex(H.emptyRoot()));
        for (let i = 0; i < n; i++) {
          if (i === restoreAt) restored = Frontier.fromHashes(H, f.size, f.hashes());
          f.append(leaves[i]!);
          restored?.append(leaves[i]!);
          expect(f.size).toBe(i + 1);
          expect(f.hashes()).toHaveLength(popcount(i + 1));
          expect(toHex(f.root()), `size ${i + 1}`).toBe(toHex(rootFromLeafHashes(H, leaves.slice(0, i + 1))));
        }
        if (restored !== undefined) expect(toHex(restored.root())).toBe(toHex(f.root()));
      }),
      { seed: 0xf0f0, numRuns: 10 },
    );
  });

  it('appends cost n - popcount(n) node hashes in total; root popcount(n) - 1', () => {
    const c = countingHasher();
    const f = new Frontier(c.hasher);
    for (const l of makeLeaves(1000, 3)) f.append(l);
    expect(c.count()).toBe(1000 - popcount(1000));
    c.reset();
    f.root();
    expect(c.count()).toBe(popcount(1000) - 1);
  });

  it('fromHashes rejects a count other than popcount(size), bad sizes and bad hashes', () => {
    const hs = makeLeaves(3, 9);
    expect(toHex(Frontier.fromHashes(H, 5, [hs[0]!, hs[1]!]).root())).toBe(toHex(H.hashChildren(hs[0]!, hs[1]!)));
    const bad = expect.objectContaining({ code: 'TALLY_MERKLE_FRONTIER_MALFORMED' });
    expect(() => Frontier.fromHashes(H, 5, [hs[0]!])).toThrow(bad);
    expect(() => Frontier.fromHashes(H, 5, hs)).toThrow(bad);
    expect(() => Frontier.fromHashes(H, 0, [hs[0]!])).toThrow(bad);
    expect(() => Frontier.fromHashes(H, -1, [])).toThrow(bad);
    expect(() => Frontier.fromHashes(H, 1.5, [])).toThrow(bad);
    expect(() => Frontier.fromHashes(H, 2 ** 53, [hs[0]!])).toThrow(bad);
    expect(() => Frontier.fromHashes(H, 1, [new Uint8Array(33)])).toThrow(bad);
    expect(() => new Frontier(H).append(new Uint8Array(0))).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_BAD_HASH' }));
    // The restored frontier owns copies of its input.
    const input = [hs[0]!.slice()];
    const f = Frontier.fromHashes(H, 1, input);
    input[0]!.fill(0);
    expect(toHex(f.root())).toBe(toHex(hs[0]!));
    const clone = f.clone();
    clone.append(hs[1]!);
    expect(f.size).toBe(1);
  });
});

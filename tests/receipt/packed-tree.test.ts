import { sha256 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PackedMerkleTree, receiptHasher } from '../../src/receipt/index.js';
import { consistencyProofFromLeafHashes, inclusionProofFromLeafHashes, rfc6962Hasher, rootFromLeafHashes, toHex, verifyInclusion } from '../../src/protocol/index.js';

// The reference tree (recursive RFC 9162 definitions) over an independent SHA-256 (noble).
const ref = rfc6962Hasher(sha256);
const leaves = Array.from({ length: 300 }, (_, i) => ref.hashLeaf(new TextEncoder().encode(`entry ${i}`)));
const hex = (a: readonly Uint8Array[]) => a.map(toHex);

function treeOf(n: number): PackedMerkleTree {
  const t = new PackedMerkleTree(receiptHasher);
  for (let i = 0; i < n; i++) t.append(leaves[i]!);
  return t;
}

describe('PackedMerkleTree', () => {
  it('roots, inclusion and consistency proofs equal the reference at every size (seed 0x9acc)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 1, max: n }), fc.nat({ max: n - 1 }))), ([n, m, i]) => {
        const t = treeOf(n);
        expect(toHex(t.root(m))).toBe(toHex(rootFromLeafHashes(ref, leaves.slice(0, m))));
        const j = i % m;
        expect(hex(t.inclusionProof(j, m))).toEqual(hex(inclusionProofFromLeafHashes(ref, leaves.slice(0, m), j)));
        expect(hex(t.consistencyProof(m, n))).toEqual(hex(consistencyProofFromLeafHashes(ref, leaves.slice(0, n), m)));
        expect(verifyInclusion(ref, j, m, leaves[j]!, t.inclusionProof(j, m), t.root(m)).ok).toBe(true);
      }),
      { seed: 0x9acc, numRuns: 150 },
    );
  });

  it('proofs are copies: mutating one does not change the tree', () => {
    const t = treeOf(37);
    const root = toHex(t.root());
    for (const h of t.inclusionProof(5)) h.fill(0);
    t.leafHash(3).fill(0);
    t.root(36).fill(0);
    expect(toHex(t.root())).toBe(root);
  });

  it('refuses out-of-range sizes and indexes and bad leaves', () => {
    const t = treeOf(8);
    expect(toHex(t.root(0))).toBe(toHex(ref.emptyRoot()));
    expect(() => t.root(9)).toThrow(/out of range/);
    expect(() => t.inclusionProof(8, 8)).toThrow(/out of range/);
    expect(() => t.inclusionProof(0, 0)).toThrow(/out of range/);
    expect(() => t.consistencyProof(0, 8)).toThrow(/out of range/);
    expect(() => t.consistencyProof(5, 4)).toThrow(/out of range/);
    expect(() => t.leafHash(-1)).toThrow(/out of range/);
    expect(() => t.node(3, 1)).toThrow(/No such complete subtree/);
    expect(() => t.append(new Uint8Array(31))).toThrow(/32-byte/);
    expect(() => t.inclusionProof(1.5 as number)).toThrow(/out of range/);
  });

  it('holds at most 128 bytes per leaf (packed levels, capacity doubling)', () => {
    const t = new PackedMerkleTree(receiptHasher);
    const leaf = new Uint8Array(32);
    for (let i = 0; i < 50_000; i++) {
      leaf[0] = i & 0xff;
      leaf[1] = i >> 8;
      t.append(leaf);
    }
    expect(t.byteLength).toBeLessThanOrEqual(128 * 50_000 + 32 * 64 * 20);
  });
});

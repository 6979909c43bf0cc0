import { sha256 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChunkNeededError, PackedMerkleTree, receiptHasher } from '../../src/receipt/index.js';
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

/** Runs `fn` on a floored tree, loading (from `leaves`) every chunk it asks for; counts the loads. */
function withChunks<T>(t: PackedMerkleTree, fn: () => T, loads: { n: number }): T {
  for (let tries = 0; ; tries++) {
    try {
      return fn();
    } catch (e) {
      if (!(e instanceof ChunkNeededError)) throw e;
      const w = 2 ** t.floor;
      t.loadChunk(e.chunk, leaves.slice(e.chunk * w, (e.chunk + 1) * w));
      loads.n++;
      if (tries > 3) throw new Error('chunk loads do not converge');
    }
  }
}

describe('PackedMerkleTree with a floor (chunks below it loaded on demand)', () => {
  it('roots, proofs and leaf hashes equal the reference for floors 1 to 5 and a cache of 3 or 4 chunks (seed 0xf100)', () => {
    const loads = { n: 0 };
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 3, max: 4 }),
        fc.integer({ min: 1, max: 300 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 1, max: n }), fc.nat({ max: n - 1 }))),
        (floor, chunks, [n, m, i]) => {
          const t = new PackedMerkleTree(receiptHasher, { floor, chunks });
          for (let k = 0; k < n; k++) t.append(leaves[k]!);
          const j = i % m;
          expect(toHex(withChunks(t, () => t.root(m), loads))).toBe(toHex(rootFromLeafHashes(ref, leaves.slice(0, m))));
          expect(hex(withChunks(t, () => t.inclusionProof(j, m), loads))).toEqual(hex(inclusionProofFromLeafHashes(ref, leaves.slice(0, m), j)));
          expect(hex(withChunks(t, () => t.consistencyProof(m, n), loads))).toEqual(hex(consistencyProofFromLeafHashes(ref, leaves.slice(0, n), m)));
          expect(toHex(withChunks(t, () => t.leafHash(j), loads))).toBe(toHex(leaves[j]!));
        },
      ),
      { seed: 0xf100, numRuns: 300 },
    );
    // The property reached the chunk path (a vacuous run fails).
    expect(loads.n).toBeGreaterThan(50);
  });

  it('the root of every size it holds needs no chunk; a node below the floor names its chunk', () => {
    const t = new PackedMerkleTree(receiptHasher, { floor: 3 });
    for (let k = 0; k < 21; k++) t.append(leaves[k]!);
    expect(toHex(t.root())).toBe(toHex(rootFromLeafHashes(ref, leaves.slice(0, 21))));
    expect(() => t.leafHash(9)).toThrow(ChunkNeededError);
    try {
      t.leafHash(9);
    } catch (e) {
      expect(e).toMatchObject({ code: 'TALLY_MERKLE_CHUNK_NEEDED', chunk: 1 });
    }
    expect(toHex(t.leafHash(20))).toBe(toHex(leaves[20]!)); // the last, incomplete chunk is kept
  });

  it('refuses a chunk whose leaves are not the ones the tree was built from', () => {
    const t = new PackedMerkleTree(receiptHasher, { floor: 2 });
    for (let k = 0; k < 12; k++) t.append(leaves[k]!);
    expect(() => t.loadChunk(1, leaves.slice(0, 4))).toThrow(/chunk root/);
    expect(() => t.loadChunk(1, leaves.slice(4, 7))).toThrow(/4 leaf hashes/);
    expect(() => t.loadChunk(3, leaves.slice(12, 16))).toThrow(/out of range/);
    t.loadChunk(1, leaves.slice(4, 8));
    expect(toHex(t.leafHash(5))).toBe(toHex(leaves[5]!));
  });

  it('floor 8 holds about a byte per leaf', () => {
    const t = new PackedMerkleTree(receiptHasher, { floor: 8 });
    const leaf = new Uint8Array(32);
    for (let i = 0; i < 50_000; i++) {
      leaf[0] = i & 0xff;
      leaf[1] = i >> 8;
      t.append(leaf);
    }
    expect(t.byteLength).toBeLessThanOrEqual(50_000 + 32 * 64 * 20);
  });
});

/**
 * Negative cases by mutation (after transparency-dev/merkle's probes): every
 * altered proof, index, size, leaf or root is rejected.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MerkleLevels, verifyConsistency, verifyInclusion, type MerkleCheck } from '../../src/protocol/merkle/index.js';
import { sha256Hasher } from '../../src/merkle/index.js';
import { flipBit, makeLeaves } from './helpers.js';

const H = sha256Hasher;

function treeOf(n: number, salt: number): MerkleLevels {
  const t = new MerkleLevels(H);
  for (const l of makeLeaves(n, salt)) t.append(l);
  return t;
}

function rejected(r: MerkleCheck, why: string): void {
  expect(r.ok, why).toBe(false);
}

describe('inclusion proof mutations are rejected', () => {
  it('bit flips, index ±1, size ±1, dropped/inserted/appended hashes, wrong leaf, wrong root (seed 0x1ac1)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.integer(), fc.nat(), fc.nat(), fc.nat(), (n, salt, a, b, c) => {
        const tree = treeOf(n, salt);
        const size = 1 + (a % n);
        const index = b % size;
        const leaf = tree.leafHash(index);
        const root = tree.root(size);
        const proof = tree.inclusionProof(index, size);
        expect(verifyInclusion(H, index, size, leaf, proof, root)).toEqual({ ok: true });

        proof.forEach((_, i) => {
          const bad = proof.map((h, j) => (j === i ? flipBit(h, c % 256) : h));
          const r = verifyInclusion(H, index, size, leaf, bad, root);
          expect(r).toMatchObject({ ok: false, code: 'root-mismatch', which: 'root' });
        });
        rejected(verifyInclusion(H, index, size, flipBit(leaf, c % 256), proof, root), 'flipped leaf');
        rejected(verifyInclusion(H, index, size, leaf, proof, flipBit(root, c % 256)), 'flipped root');
        rejected(verifyInclusion(H, index - 1, size, leaf, proof, root), 'index - 1');
        rejected(verifyInclusion(H, index + 1, size, leaf, proof, root), 'index + 1');
        if (size > 1) rejected(verifyInclusion(H, index, size - 1, leaf, proof, tree.root(size - 1)), 'size - 1');
        if (size < n) rejected(verifyInclusion(H, index, size + 1, leaf, proof, tree.root(size + 1)), 'size + 1');
        if (n > 1) {
          const other = (index + 1 + (c % (n - 1))) % n;
          rejected(verifyInclusion(H, index, size, tree.leafHash(other), proof, root), 'another leaf');
          const otherSize = 1 + ((size + (c % (n - 1))) % n);
          if (otherSize !== size) rejected(verifyInclusion(H, index, size, leaf, proof, tree.root(otherSize)), 'another root');
        }
        if (proof.length > 0) {
          const at = c % proof.length;
          rejected(verifyInclusion(H, index, size, leaf, proof.filter((_, j) => j !== at), root), 'dropped hash');
          rejected(verifyInclusion(H, index, size, leaf, proof.slice(0, -1), root), 'truncated');
        }
        const at = c % (proof.length + 1);
        const inserted = [...proof.slice(0, at), tree.leafHash(c % n), ...proof.slice(at)];
        expect(verifyInclusion(H, index, size, leaf, inserted, root)).toMatchObject({ ok: false, code: 'wrong-proof-size' });
        rejected(verifyInclusion(H, index, size, leaf, [...proof, root], root), 'appended root');
        rejected(verifyInclusion(H, index, size, leaf, [root, ...proof], root), 'prepended root');
      }),
      { seed: 0x1ac1, numRuns: 150 },
    );
  });
});

describe('consistency proof mutations are rejected', () => {
  it('bit flips, size1 ±1, size2 ±1, swapped roots, dropped/inserted/appended hashes (seed 0xc0c0)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 300 }), fc.integer(), fc.nat(), fc.nat(), fc.nat(), (n, salt, a, b, c) => {
        const tree = treeOf(n, salt);
        const size2 = 2 + (a % (n - 1));
        const size1 = 1 + (b % (size2 - 1)); // 0 < size1 < size2
        const root1 = tree.root(size1);
        const root2 = tree.root(size2);
        const proof = tree.consistencyProof(size1, size2);
        expect(proof.length).toBeGreaterThan(0);
        expect(verifyConsistency(H, size1, size2, proof, root1, root2)).toEqual({ ok: true });

        proof.forEach((_, i) => {
          const bad = proof.map((h, j) => (j === i ? flipBit(h, c % 256) : h));
          expect(verifyConsistency(H, size1, size2, bad, root1, root2)).toMatchObject({ ok: false, code: 'root-mismatch' });
        });
        rejected(verifyConsistency(H, size1, size2, proof, flipBit(root1, c % 256), root2), 'flipped root1');
        rejected(verifyConsistency(H, size1, size2, proof, root1, flipBit(root2, c % 256)), 'flipped root2');
        rejected(verifyConsistency(H, size1, size2, proof, root2, root1), 'swapped roots');
        rejected(verifyConsistency(H, size1 - 1, size2, proof, tree.root(size1 - 1), root2), 'size1 - 1');
        rejected(verifyConsistency(H, size1 + 1, size2, proof, tree.root(size1 + 1), root2), 'size1 + 1');
        rejected(verifyConsistency(H, size1, size2 - 1, proof, root1, tree.root(size2 - 1)), 'size2 - 1');
        if (size2 < n) rejected(verifyConsistency(H, size1, size2 + 1, proof, root1, tree.root(size2 + 1)), 'size2 + 1');
        // Same sizes with the original roots too.
        rejected(verifyConsistency(H, size1 - 1, size2, proof, root1, root2), 'size1 - 1, same roots');
        rejected(verifyConsistency(H, size1 + 1, size2, proof, root1, root2), 'size1 + 1, same roots');
        const at = c % proof.length;
        rejected(verifyConsistency(H, size1, size2, proof.filter((_, j) => j !== at), root1, root2), 'dropped hash');
        rejected(verifyConsistency(H, size1, size2, [], root1, root2), 'empty proof');
        const ins = c % (proof.length + 1);
        const inserted = [...proof.slice(0, ins), tree.leafHash(c % n), ...proof.slice(ins)];
        expect(verifyConsistency(H, size1, size2, inserted, root1, root2)).toMatchObject({ ok: false, code: 'wrong-proof-size' });
        rejected(verifyConsistency(H, size1, size2, [...proof, root2], root1, root2), 'appended root2');
        rejected(verifyConsistency(H, size1, size2, [root1, ...proof], root1, root2), 'prepended root1');
        rejected(verifyConsistency(H, size1, size2, [proof[0]!, ...proof], root1, root2), 'prepended proof[0]');
      }),
      { seed: 0xc0c0, numRuns: 150 },
    );
  });

  it('a mismatch says which root failed and carries both in hex', () => {
    const tree = treeOf(8, 1);
    const proof = tree.consistencyProof(6, 8);
    const wrong1 = flipBit(tree.root(6), 0);
    const r1 = verifyConsistency(H, 6, 8, proof, wrong1, tree.root(8));
    expect(r1).toMatchObject({ ok: false, code: 'root-mismatch', which: 'root1' });
    const wrong2 = flipBit(tree.root(8), 0);
    const r2 = verifyConsistency(H, 6, 8, proof, tree.root(6), wrong2);
    expect(r2).toMatchObject({
      ok: false,
      code: 'root-mismatch',
      which: 'root2',
      computedHex: Buffer.from(tree.root(8)).toString('hex'),
      expectedHex: Buffer.from(wrong2).toString('hex'),
    });
    const ri = verifyInclusion(H, 2, 8, tree.leafHash(2), tree.inclusionProof(2, 8), wrong2);
    expect(ri).toMatchObject({ ok: false, code: 'root-mismatch', which: 'root', expectedHex: Buffer.from(wrong2).toString('hex') });
  });
});

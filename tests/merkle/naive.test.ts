/**
 * Cross-check against an independent, deliberately naive RFC 6962 tree written
 * here with node:crypto (not @noble/hashes): recursive MTH/PATH/SUBPROOF over
 * Buffers, for every size 0..64 and every (index, size) and (size1, size2).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  consistencyProof,
  createFrontier,
  createMerkleLevels,
  inclusionProof,
  leafHash,
  rootHash,
  verifyConsistency,
  verifyInclusion,
} from '../../src/merkle/index.js';

const sha = (...parts: Buffer[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const naiveLeaf = (d: Buffer): Buffer => sha(Buffer.from([0]), d);
const naiveNode = (l: Buffer, r: Buffer): Buffer => sha(Buffer.from([1]), l, r);
const k = (n: number): number => 2 ** Math.ceil(Math.log2(n) - 1); // largest power of two < n, n >= 2

function mth(d: Buffer[]): Buffer {
  if (d.length === 0) return sha(Buffer.alloc(0));
  if (d.length === 1) return naiveLeaf(d[0]!);
  return naiveNode(mth(d.slice(0, k(d.length))), mth(d.slice(k(d.length))));
}
function path(m: number, d: Buffer[]): Buffer[] {
  if (d.length <= 1) return [];
  const s = k(d.length);
  return m < s ? [...path(m, d.slice(0, s)), mth(d.slice(s))] : [...path(m - s, d.slice(s)), mth(d.slice(0, s))];
}
function subproof(m: number, d: Buffer[], b: boolean): Buffer[] {
  if (m === d.length) return b ? [] : [mth(d)];
  const s = k(d.length);
  return m <= s ? [...subproof(m, d.slice(0, s), b), mth(d.slice(s))] : [...subproof(m - s, d.slice(s), false), mth(d.slice(0, s))];
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const N = 64;
const data: Buffer[] = Array.from({ length: N }, (_, i) => Buffer.from(`entry ${i} `.repeat(i % 5)));
const leaves = data.map((d) => leafHash(new Uint8Array(d)));

describe('naive node:crypto tree, sizes 0..64', () => {
  it('the naive split point is the largest power of two below n', () => {
    expect([2, 3, 4, 5, 8, 9, 64].map(k)).toEqual([1, 2, 2, 4, 4, 8, 32]);
  });

  it('leaf hashes and roots (rootHash, Frontier, MerkleLevels) agree at every size', () => {
    expect(leaves.map(hex)).toEqual(data.map((d) => naiveLeaf(d).toString('hex')));
    const f = createFrontier();
    const t = createMerkleLevels();
    for (let size = 0; size <= N; size++) {
      const want = mth(data.slice(0, size)).toString('hex');
      expect(hex(rootHash(leaves.slice(0, size))), `rootHash ${size}`).toBe(want);
      expect(hex(f.root()), `frontier ${size}`).toBe(want);
      expect(hex(t.root()), `levels ${size}`).toBe(want);
      if (size < N) {
        f.append(leaves[size]!);
        t.append(leaves[size]!);
      }
    }
  });

  it('every inclusion proof agrees and verifies', () => {
    const t = createMerkleLevels(leaves);
    for (let size = 1; size <= N; size++) {
      const root = mth(data.slice(0, size));
      for (let i = 0; i < size; i++) {
        const want = path(i, data.slice(0, size)).map((b) => b.toString('hex'));
        expect(t.inclusionProof(i, size).map(hex), `${i}/${size}`).toEqual(want);
        expect(inclusionProof(leaves, i, size).map(hex), `${i}/${size}`).toEqual(want);
        expect(verifyInclusion(leaves[i]!, i, size, t.inclusionProof(i, size), new Uint8Array(root))).toEqual({ ok: true });
      }
    }
  });

  it('every consistency proof agrees and verifies', () => {
    const t = createMerkleLevels(leaves);
    for (let size2 = 1; size2 <= N; size2++) {
      const root2 = new Uint8Array(mth(data.slice(0, size2)));
      for (let size1 = 1; size1 <= size2; size1++) {
        const want = subproof(size1, data.slice(0, size2), true).map((b) => b.toString('hex'));
        expect(t.consistencyProof(size1, size2).map(hex), `${size1}->${size2}`).toEqual(want);
        expect(consistencyProof(leaves, size1, size2).map(hex), `${size1}->${size2}`).toEqual(want);
        const root1 = new Uint8Array(mth(data.slice(0, size1)));
        expect(verifyConsistency(size1, size2, root1, root2, t.consistencyProof(size1, size2))).toEqual({ ok: true });
      }
    }
  });
});

import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Frontier, borderAppend, borderRoot, rfc6962Hasher, rootFromLeafHashes } from '../../src/protocol/index.js';

// Plain Uint8Arrays, as the protocol's digest returns: the frontier merges into
// arrays of its own, so a Buffer-returning digest would make equal roots differ in type only.
const hasher = rfc6962Hasher((b) => new Uint8Array(createHash('sha256').update(b).digest()));

describe('pure border arithmetic', () => {
  it('borderAppend never mutates its input and agrees with Frontier and the reference root (seed 0xb0de)', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ minLength: 32, maxLength: 32 }), { maxLength: 70 }), (leaves) => {
        let roots: Uint8Array[] = [];
        const f = new Frontier(hasher);
        leaves.forEach((leaf, size) => {
          const before = roots.map((r) => Buffer.from(r).toString('hex'));
          const next = borderAppend(hasher, size, roots, leaf);
          expect(roots.map((r) => Buffer.from(r).toString('hex'))).toEqual(before);
          roots = next;
          f.append(leaf);
          expect(f.hashes()).toEqual(roots);
        });
        expect(borderRoot(hasher, roots)).toEqual(rootFromLeafHashes(hasher, leaves));
      }),
      { seed: 0xb0de, numRuns: 100 },
    );
  });

  it('rejects a leaf that is not 32 bytes', () => {
    expect(() => borderAppend(hasher, 0, [], new Uint8Array(31))).toThrow(/32|hash/i);
  });
});

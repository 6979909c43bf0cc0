/**
 * The public surface of `agent-tally/merkle` and `src/protocol/merkle`, and
 * hostile input: verifiers return failures, never throw.
 */
import { describe, expect, it } from 'vitest';
import * as entry from '../../src/merkle/index.js';
import * as protocolMerkle from '../../src/protocol/merkle/index.js';
import { MERKLE_FAILURE_CODES } from '../../src/protocol/merkle/index.js';
import { makeLeaves } from './helpers.js';

const {
  createMerkleLevels,
  leafHash,
  sha256Hasher,
  verifyConsistency,
  verifyInclusion,
  rootHash,
  inclusionProof,
  consistencyProof,
  createFrontier,
} = entry;

describe('export lists', () => {
  it('agent-tally/merkle exports exactly these values', () => {
    expect(Object.keys(entry).sort()).toEqual(
      [
        'consistencyProof',
        'createFrontier',
        'createMerkleLevels',
        'inclusionProof',
        'leafHash',
        'rootHash',
        'sha256Hasher',
        'verifyConsistency',
        'verifyInclusion',
      ].sort(),
    );
  });

  it('src/protocol/merkle exports exactly these values', () => {
    expect(Object.keys(protocolMerkle).sort()).toEqual(
      [
        'Frontier',
        'LEAF_PREFIX',
        'MERKLE_FAILURE_CODES',
        'MERKLE_HASH_LENGTH',
        'MerkleLevels',
        'NODE_PREFIX',
        'borderAppend',
        'borderRoot',
        'consistencyProofFromLeafHashes',
        'consistencyProofFromNodes',
        'consistencyProofLength',
        'inclusionProofFromLeafHashes',
        'inclusionProofFromNodes',
        'inclusionProofLength',
        'isTreeHash',
        'rangeRootFromNodes',
        'rfc6962Hasher',
        'rootFromConsistencyProof',
        'rootFromInclusionProof',
        'rootFromLeafHashes',
        'rootFromNodes',
        'verifyConsistency',
        'verifyInclusion',
      ].sort(),
    );
    expect(protocolMerkle.LEAF_PREFIX).toBe(0x00);
    expect(protocolMerkle.NODE_PREFIX).toBe(0x01);
    expect(protocolMerkle.MERKLE_HASH_LENGTH).toBe(32);
  });

  it('the failure codes are a closed list', () => {
    expect(MERKLE_FAILURE_CODES).toEqual([
      'invalid-number',
      'index-out-of-range',
      'size-order',
      'empty-tree-consistency',
      'malformed-proof',
      'bad-hash-length',
      'wrong-proof-size',
      'empty-proof-expected',
      'root-mismatch',
    ]);
  });
});

describe('the hasher spells out RFC 6962 bytes', () => {
  it('leaf = SHA-256(0x00 ‖ d), node = SHA-256(0x01 ‖ l ‖ r)', async () => {
    const { createHash } = await import('node:crypto');
    const d = new Uint8Array([1, 2, 3]);
    const l = leafHash(d);
    expect(Buffer.from(l).toString('hex')).toBe(createHash('sha256').update(Buffer.from([0, 1, 2, 3])).digest('hex'));
    const r = leafHash(new Uint8Array([9]));
    const want = createHash('sha256').update(Buffer.concat([Buffer.from([1]), l, r])).digest('hex');
    expect(Buffer.from(sha256Hasher.hashChildren(l, r)).toString('hex')).toBe(want);
    expect(Buffer.from(rootHash([l, r])).toString('hex')).toBe(want);
    // emptyRoot() hands out a fresh copy each time.
    sha256Hasher.emptyRoot().fill(0);
    expect(Buffer.from(sha256Hasher.emptyRoot()).toString('hex')).toBe(createHash('sha256').digest('hex'));
  });

  it('leafHash and the generators throw coded errors on misuse', () => {
    expect(() => leafHash('abc' as unknown as Uint8Array)).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_NOT_BYTES' }));
    const leaves = makeLeaves(4, 0);
    expect(() => rootHash([...leaves, new Uint8Array(3)])).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_BAD_HASH' }));
    expect(() => inclusionProof(leaves, 4)).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_OUT_OF_RANGE' }));
    expect(() => inclusionProof(leaves, 0, 5)).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_OUT_OF_RANGE' }));
    expect(() => consistencyProof(leaves, 0, 2)).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_OUT_OF_RANGE' }));
    expect(() => consistencyProof(leaves, 3, 2)).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_OUT_OF_RANGE' }));
    expect(consistencyProof(leaves, 0, 0)).toEqual([]);
    expect(consistencyProof(leaves, 4, 4)).toEqual([]);
    expect(inclusionProof(leaves, 3)).toHaveLength(2);
    expect(createFrontier({ size: 4, hashes: [rootHash(leaves)] }).root()).toEqual(rootHash(leaves));
    expect(createMerkleLevels(leaves).root()).toEqual(rootHash(leaves));
  });
});

describe('size 0 and equal sizes', () => {
  const empty = sha256Hasher.emptyRoot();
  const leaves = makeLeaves(3, 5);
  const r3 = rootHash(leaves);

  it('0 -> 0 holds only for two empty roots and an empty proof', () => {
    expect(verifyConsistency(0, 0, empty, empty, [])).toEqual({ ok: true });
    expect(verifyConsistency(0, 0, r3, r3, [])).toMatchObject({ ok: false, code: 'root-mismatch', which: 'root1' });
    expect(verifyConsistency(0, 0, empty, r3, [])).toMatchObject({ ok: false, code: 'root-mismatch', which: 'root2' });
    expect(verifyConsistency(0, 0, empty, empty, [empty])).toMatchObject({ ok: false, code: 'empty-proof-expected' });
  });

  it('0 -> n is undefined (RFC 9162 needs 0 < size1) and rejected', () => {
    expect(verifyConsistency(0, 3, empty, r3, [])).toMatchObject({ ok: false, code: 'empty-tree-consistency' });
  });

  it('n -> n needs equal roots and an empty proof', () => {
    expect(verifyConsistency(3, 3, r3, r3, [])).toEqual({ ok: true });
    expect(verifyConsistency(3, 3, r3, empty, [])).toMatchObject({ ok: false, code: 'root-mismatch', which: 'root2' });
    expect(verifyConsistency(3, 3, r3, r3, [r3])).toMatchObject({ ok: false, code: 'empty-proof-expected' });
  });

  it('no inclusion in an empty tree', () => {
    expect(verifyInclusion(leaves[0]!, 0, 0, [], empty)).toMatchObject({ ok: false, code: 'index-out-of-range' });
  });
});

describe('hostile input never throws out of a verifier', () => {
  const leaves = makeLeaves(5, 11);
  const tree = createMerkleLevels(leaves);
  const good = {
    leaf: leaves[2]!,
    index: 2,
    size: 5,
    proof: tree.inclusionProof(2, 5),
    root: tree.root(5),
    size1: 3,
    root1: tree.root(3),
    cproof: tree.consistencyProof(3, 5),
  };
  const throwingProxy = new Proxy(new Uint8Array(32), {
    get() {
      throw new Error('trap');
    },
    getPrototypeOf() {
      throw new Error('trap');
    },
  });
  const throwingArray = new Proxy([] as Uint8Array[], {
    get() {
      throw new Error('trap');
    },
  });
  const hostile: [string, unknown][] = [
    ['undefined', undefined],
    ['null', null],
    ['string', 'abc'],
    ['bigint', 1n],
    ['NaN', NaN],
    ['Infinity (10e9999)', 10e9999],
    ['-1', -1],
    ['1.5', 1.5],
    ['2^53', 2 ** 53],
    ['2^64 - 1 as parsed', 18446744073709551615],
    ['array-like with huge length', { length: '1e30' }],
    ['array-like of 32', { length: 32 }],
    ['throwing proxy', throwingProxy],
    ['throwing array proxy', throwingArray],
    ['plain array of 32 numbers', Array.from({ length: 32 }, () => 0)],
    ['31 bytes', new Uint8Array(31)],
    ['33 bytes', new Uint8Array(33)],
    ['Uint16Array', new Uint16Array(16)],
    ['array with a bad hash', [new Uint8Array(32), 'x']],
    ['very long proof', Array.from({ length: 10_000 }, () => new Uint8Array(32))],
  ];

  it.each(hostile)('verifyInclusion with %s in each argument', (_, bad) => {
    const b = bad as never;
    const results = [
      verifyInclusion(b, good.index, good.size, good.proof, good.root),
      verifyInclusion(good.leaf, b, good.size, good.proof, good.root),
      verifyInclusion(good.leaf, good.index, b, good.proof, good.root),
      verifyInclusion(good.leaf, good.index, good.size, b, good.root),
      verifyInclusion(good.leaf, good.index, good.size, good.proof, b),
    ];
    for (const r of results) {
      expect(r.ok).toBe(false);
      if (!r.ok) expect(MERKLE_FAILURE_CODES).toContain(r.code);
    }
  });

  it.each(hostile)('verifyConsistency with %s in each argument', (_, bad) => {
    const b = bad as never;
    const results = [
      verifyConsistency(b, good.size, good.root1, good.root, good.cproof),
      verifyConsistency(good.size1, b, good.root1, good.root, good.cproof),
      verifyConsistency(good.size1, good.size, b, good.root, good.cproof),
      verifyConsistency(good.size1, good.size, good.root1, b, good.cproof),
      verifyConsistency(good.size1, good.size, good.root1, good.root, b),
    ];
    for (const r of results) {
      expect(r.ok).toBe(false);
      if (!r.ok) expect(MERKLE_FAILURE_CODES).toContain(r.code);
    }
  });

  it('the unharmed inputs verify (so the rejections above are caused by the hostile value)', () => {
    expect(verifyInclusion(good.leaf, good.index, good.size, good.proof, good.root)).toEqual({ ok: true });
    expect(verifyConsistency(good.size1, good.size, good.root1, good.root, good.cproof)).toEqual({ ok: true });
  });
});

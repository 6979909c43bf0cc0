/**
 * C2SP tlog-tiles, pure part: paths (the spec's own examples), which tiles a
 * tree has (the spec's 70,000-leaf example), tile bytes against a naive
 * MTH over the leaves, and entry bundles.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/codec/index.js';
import { MerkleLevels, entryBundle, parseEntryBundle, parseTilePath, rfc6962Hasher, rootFromLeafHashes, tileExists, tileHashes, tileIndexPath, tilePath, tilesForSize, type TileRef } from '../../src/protocol/index.js';

const hasher = rfc6962Hasher(sha256);

describe('tile paths', () => {
  it('encode the index in 3-digit elements, all but the last prefixed x (the spec: 1234067 → x001/x234/067)', () => {
    expect(tileIndexPath(1234067)).toBe('x001/x234/067');
    expect(tileIndexPath(0)).toBe('000');
    expect(tileIndexPath(999)).toBe('999');
    expect(tileIndexPath(1000)).toBe('x001/000');
    expect(tilePath({ kind: 'hash', level: 0, index: 1234067, width: 256 })).toBe('tile/0/x001/x234/067');
    expect(tilePath({ kind: 'hash', level: 2, index: 5, width: 17 })).toBe('tile/2/005.p/17');
    expect(tilePath({ kind: 'entries', index: 1000, width: 1 })).toBe('tile/entries/x001/000.p/1');
  });

  it('parse exactly what they write (fast-check, seed 0x711e)', () => {
    const ref: fc.Arbitrary<TileRef> = fc.oneof(
      fc.record({ kind: fc.constant('hash' as const), level: fc.integer({ min: 0, max: 63 }), index: fc.nat({ max: 2 ** 40 }), width: fc.integer({ min: 1, max: 256 }) }),
      fc.record({ kind: fc.constant('entries' as const), index: fc.nat({ max: 2 ** 40 }), width: fc.integer({ min: 1, max: 256 }) }),
    );
    fc.assert(
      fc.property(ref, (r) => {
        expect(parseTilePath(tilePath(r))).toEqual(r);
      }),
      { seed: 0x711e },
    );
  });

  it('refuse every other spelling', () => {
    for (const p of ['tile/00/000', 'tile/64/000', 'tile/0/00', 'tile/0/0000', 'tile/0/001/234', 'tile/0/x001/x234', 'tile/0/x000/001', 'tile/0/000.p/0', 'tile/0/000.p/256', 'tile/0/000.p/07', 'tile/0/000.p/', 'tile/entries/000.p/x', 'tile//000', 'tile/0/', 'tile/entries', 'tiles/0/000', '/tile/0/000', 'tile/0/000/', 'tile/+1/000', 'tile/0/x001/2a4']) {
      expect(parseTilePath(p), p).toBeUndefined();
    }
  });
});

describe('tiles of a tree', () => {
  it('the spec example: 70,000 leaves are 273 full and one 112-wide level-0 tiles, one full and one 17-wide level-1, one 1-wide level-2', () => {
    const t = tilesForSize(70_000).filter((r) => r.kind === 'hash');
    const at = (level: number) => t.filter((r) => r.kind === 'hash' && r.level === level);
    expect(at(0).filter((r) => r.width === 256)).toHaveLength(273);
    expect(at(0).filter((r) => r.width !== 256)).toEqual([{ kind: 'hash', level: 0, index: 273, width: 112 }]);
    expect(at(1)).toEqual([{ kind: 'hash', level: 1, index: 0, width: 256 }, { kind: 'hash', level: 1, index: 1, width: 17 }]);
    expect(at(2)).toEqual([{ kind: 'hash', level: 2, index: 0, width: 1 }]);
    expect(t).toHaveLength(273 + 1 + 2 + 1);
    // "a tree of size 256 will be represented by a full level 0 tile and a partial level 1 tile of width 1"
    expect(tilesForSize(256).filter((r) => r.kind === 'hash')).toEqual([{ kind: 'hash', level: 0, index: 0, width: 256 }, { kind: 'hash', level: 1, index: 0, width: 1 }]);
    expect(tilesForSize(0)).toEqual([]);
    for (const r of tilesForSize(70_000)) expect(tileExists(r, 70_000)).toBe(true);
    expect(tileExists({ kind: 'hash', level: 0, index: 273, width: 111 }, 70_000)).toBe(false);
    expect(tileExists({ kind: 'hash', level: 0, index: 274, width: 256 }, 70_000)).toBe(false);
    expect(tileExists({ kind: 'entries', index: 272, width: 256 }, 70_000)).toBe(true);
  });

  it('a tile hash is MTH of its 256^L leaves, computed naively (sizes up to 66,000)', () => {
    const n = 66_000;
    const leaves = Array.from({ length: n }, (_, i) => hasher.hashLeaf(new TextEncoder().encode(`leaf ${i}`)));
    const tree = new MerkleLevels(hasher);
    for (const l of leaves) tree.append(l);
    expect(tileHashes(tree, 2, 0, 1)).toEqual(rootFromLeafHashes(hasher, leaves.slice(0, 65_536)));
    expect(tileHashes(tree, 1, 0, 2)).toEqual(new Uint8Array([...rootFromLeafHashes(hasher, leaves.slice(0, 256)), ...rootFromLeafHashes(hasher, leaves.slice(256, 512))]));
    const t0 = tileHashes(tree, 0, 257, 3);
    expect(t0).toEqual(new Uint8Array([...leaves[257 * 256]!, ...leaves[257 * 256 + 1]!, ...leaves[257 * 256 + 2]!]));
    expect(tileHashes(tree, 1, 1, 1)).toEqual(rootFromLeafHashes(hasher, leaves.slice(65_536, 65_792)));
    // Level-0 tile 257 is partial (208 leaves): its full form does not exist yet.
    expect(() => tileHashes(tree, 0, 257, 256)).toThrow();
  });
});

describe('entry bundles', () => {
  it('are big-endian uint16 length-prefixed entries, and parse back', () => {
    const e = [new Uint8Array([1, 2, 3]), new Uint8Array(0), new Uint8Array(300).fill(7)];
    const b = entryBundle(e);
    expect([...b.subarray(0, 5)]).toEqual([0, 3, 1, 2, 3]);
    expect([...b.subarray(5, 9)]).toEqual([0, 0, 1, 44]);
    expect(parseEntryBundle(b)).toEqual(e);
    expect(parseEntryBundle(b.subarray(0, b.length - 1))).toBeUndefined();
    expect(parseEntryBundle(new Uint8Array([0]))).toBeUndefined();
    expect(() => entryBundle([new Uint8Array(65_536)])).toThrow(RangeError);
  });
});

/**
 * What an export writes (src/log/tiles.ts exportedTiles): every tile of the
 * checkpoint's size, plus the partial tiles of each earlier signed size whose
 * full tile is not there yet — tlog-tiles has a log serve the partial tiles
 * of every size it signed, and lets it drop one once the full tile exists.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exportedTiles, tileWithin } from '../../src/log/tiles.js';
import { TILE_WIDTH, tilePath, tilesForSize } from '../../src/protocol/index.js';

const paths = (size: number, earlier: number[] = []) => exportedTiles(size, earlier).map(tilePath);

describe('exportedTiles', () => {
  it('adds the partial tiles of earlier signed sizes in the incomplete tile, none a full tile replaces', () => {
    expect(paths(12, [3, 5, 12, 40])).toEqual(['tile/0/000.p/12', 'tile/entries/000.p/12', 'tile/0/000.p/3', 'tile/entries/000.p/3', 'tile/0/000.p/5', 'tile/entries/000.p/5']);
    // At 302 the full tile 0/000 exists: size 100's partials may go; size 260's (in tile 0/001) may not.
    expect(paths(302, [100, 260])).toEqual([...tilesForSize(302).map(tilePath), 'tile/0/001.p/4', 'tile/entries/001.p/4']);
    expect(paths(302)).toEqual(tilesForSize(302).map(tilePath));
  });

  it('each path once, every one a tile of the size, every needed partial of an earlier size there (fast-check, seed 0x7e57)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 70_000 }), fc.array(fc.integer({ min: 1, max: 70_000 }), { maxLength: 8 }), (size, earlier) => {
        const refs = exportedTiles(size, earlier);
        const ps = refs.map(tilePath);
        expect(new Set(ps).size).toBe(ps.length);
        for (const r of refs) expect(tileWithin(r, size)).toBe(true);
        for (const s of earlier.filter((e) => e < size)) {
          for (const r of tilesForSize(s)) {
            const replaced = r.width === TILE_WIDTH || tileWithin({ ...r, width: TILE_WIDTH }, size);
            if (!replaced) expect(ps).toContain(tilePath(r));
          }
        }
      }),
      { seed: 0x7e57, numRuns: 100 },
    );
  });
});

/**
 * engine-log.json (PROTOCOL.md §15): the library writes and reads every leaf
 * as the corpus says; leaf hashes, tile hashes, entry bundles and the root
 * are recomputed here a second way — node:crypto and a naive MTH written
 * from RFC 6962 §2.1, no library tree code — from the leaf rule the corpus
 * states.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { engineLogLeafBytes, parseEngineLogLeaf, parseTilePath, tilePath, type EngineLogLeaf, type TileRef } from '../../src/protocol/index.js';
import { loadVectors } from './corpus.js';

interface V {
  leaves: { accept: { name: string; leaf: EngineLogLeaf; hex: string; leafHash: string }[]; refuse: { name: string; hex: string; code: string }[] };
  paths: { accept: { path: string; ref: TileRef }[]; refuse: string[] };
  log: { size: number; root: string; tiles: { path: string; length: number; sha256: string }[] };
}
const v = loadVectors<V>('engine-log.json');
const h = (...parts: Uint8Array[]) => new Uint8Array(createHash('sha256').update(Buffer.concat(parts)).digest());
const sha = (s: string | Uint8Array) => createHash('sha256').update(s).digest('hex');
const hexOf = (b: Uint8Array) => Buffer.from(b).toString('hex');
/** RFC 6962 §2.1 MTH, naively. */
function mth(leafHashes: Uint8Array[]): Uint8Array {
  if (leafHashes.length === 1) return leafHashes[0]!;
  let k = 1;
  while (k * 2 < leafHashes.length) k *= 2;
  return h(new Uint8Array([1]), mth(leafHashes.slice(0, k)), mth(leafHashes.slice(k)));
}

describe('engine-log.json', () => {
  it.each(v.leaves.accept.map((c) => [c.name, c] as const))('leaf %s: the bytes, the leaf hash, and read back', (_n, c) => {
    expect(hexOf(engineLogLeafBytes(c.leaf))).toBe(c.hex);
    const bytes = Buffer.from(c.hex, 'hex');
    expect(hexOf(h(new Uint8Array([0]), bytes))).toBe(c.leafHash);
    expect(parseEngineLogLeaf(new Uint8Array(bytes))).toEqual({ ok: true, leaf: c.leaf });
  });

  it.each(v.leaves.refuse.map((c) => [c.name, c] as const))('refuses %s', (_n, c) => {
    expect(parseEngineLogLeaf(new Uint8Array(Buffer.from(c.hex, 'hex')))).toMatchObject({ ok: false, code: c.code });
  });

  it('tile paths: each accepted one names its ref and is its own spelling; every refused one is refused', () => {
    for (const c of v.paths.accept) {
      expect(parseTilePath(c.path)).toEqual(c.ref);
      expect(tilePath(c.ref)).toBe(c.path);
    }
    for (const p of v.paths.refuse) expect(parseTilePath(p), p).toBeUndefined();
  });

  it('the tiles of the corpus log, recomputed naively from its leaf rule', () => {
    const leaves = Array.from({ length: v.log.size }, (_, i) =>
      Buffer.concat([Buffer.from('tally/v1/engine-log-leaf\0'), Buffer.from(`{"kind":"open","session":"${sha(`tally engine-log vector ${i}`)}","spec":"${sha(`spec ${i}`)}"}`)]),
    );
    const lh = leaves.map((l) => h(new Uint8Array([0]), l));
    expect(hexOf(mth(lh))).toBe(v.log.root);
    for (const t of v.log.tiles) {
      const ref = parseTilePath(t.path)!;
      let bytes: Uint8Array;
      if (ref.kind === 'entries') {
        bytes = Buffer.concat(leaves.slice(ref.index * 256, ref.index * 256 + ref.width).map((l) => Buffer.concat([Buffer.from([l.length >> 8, l.length & 255]), l])));
      } else {
        const per = 256 ** ref.level;
        bytes = Buffer.concat(Array.from({ length: ref.width }, (_, i) => mth(lh.slice((ref.index * 256 + i) * per, (ref.index * 256 + i + 1) * per))));
      }
      expect(bytes.length, t.path).toBe(t.length);
      expect(sha(bytes), t.path).toBe(t.sha256);
    }
    expect(v.log.tiles.map((t) => t.path)).toEqual(['tile/0/000', 'tile/0/001.p/44', 'tile/entries/000', 'tile/entries/001.p/44', 'tile/1/000.p/1']);
  });
});

/**
 * A log a test writes by hand: the tlog-tiles files of `leaves` (every tile
 * and entry bundle of their size, as `tally tiles export` writes them) and a
 * checkpoint signed by `key` — how a test shows a reader a log that
 * equivocates, forks or lies about a session, signed with the real log key.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sha256 } from '../../src/codec/index.js';
import { MerkleLevels, entryBundle, entryHash, parseEntryBundle, rfc6962Hasher, tileHashes, tilePath, tilesForSize, TILE_WIDTH } from '../../src/protocol/index.js';
import { formatCheckpoint, signNote, type EngineKey } from '../../src/receipt/index.js';

/** Writes the log of `leaves` under `out`, its checkpoint signed by `key` (named as the origin). */
export function writeLogDir(out: string, leaves: readonly Uint8Array[], key: EngineKey): void {
  const tree = new MerkleLevels(rfc6962Hasher(sha256));
  for (const l of leaves) tree.append(entryHash(sha256, l));
  for (const ref of tilesForSize(leaves.length)) {
    const p = join(out, tilePath(ref));
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, ref.kind === 'entries' ? entryBundle(leaves.slice(ref.index * TILE_WIDTH, ref.index * TILE_WIDTH + ref.width)) : tileHashes(tree, ref.level, ref.index, ref.width));
  }
  writeFileSync(join(out, 'checkpoint'), signNote(formatCheckpoint({ origin: key.name, size: leaves.length, root: tree.root(leaves.length) }), [key]));
}

/** The leaves of an exported log of fewer than 256 leaves (its one partial entry bundle). */
export function readLogDir(dir: string): Uint8Array[] {
  const size = Number(readFileSync(join(dir, 'checkpoint'), 'utf8').split('\n')[1]);
  const entries = parseEntryBundle(new Uint8Array(readFileSync(join(dir, tilePath({ kind: 'entries', index: 0, width: size })))));
  if (entries === undefined || entries.length !== size) throw new Error(`no entry bundle of ${size} leaves in ${dir}`);
  return entries;
}

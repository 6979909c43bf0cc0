/**
 * The engine log as C2SP tlog-tiles resources (docs/PROTOCOL.md §15.4): the
 * bytes of `tile/<L>/<N>[.p/<W>]` and `tile/entries/<N>[.p/<W>]` for a
 * checkpoint size, and writing every resource of a checkpoint to a
 * directory (`tally tiles export`) — the same bytes `tally serve` answers.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { TILE_WIDTH, entryBundle, parseTilePath, tileHashes, tilePath, tilesForSize, type TileRef } from '../protocol/index.js';
import type { EngineLog, LogCheckpoint } from './engine-log.js';

/** A resource of the log: its bytes and whether they can never change (full tiles). */
export interface TileResource {
  readonly body: Uint8Array;
  readonly immutable: boolean;
}

/**
 * Whether `ref` is a resource of the tree of `size` leaves: a full tile whose
 * range lies within the first `size` leaves, or a partial one whose hashes
 * do (every partial tile of a smaller checkpoint stays available, as the
 * same bytes). Empty tiles do not exist.
 */
export function tileWithin(ref: TileRef, size: number): boolean {
  const level = ref.kind === 'entries' ? 0 : ref.level;
  const per = TILE_WIDTH ** level;
  return (ref.index * TILE_WIDTH + ref.width) * per <= size;
}

/**
 * The bytes of `ref` (within the leaves the log has read): a full tile's
 * hashes from the store, a partial one's from the log's right edge, an entry
 * bundle's leaves checked against their tile.
 */
export async function tileBytes(log: EngineLog, ref: TileRef): Promise<Uint8Array> {
  if (ref.kind === 'entries') return entryBundle(await log.leaves(ref.index * TILE_WIDTH, ref.index * TILE_WIDTH + ref.width));
  return log.withNodes((r) => tileHashes(r, ref.level, ref.index, ref.width));
}

/** Full tiles are immutable: their bytes are kept per log, up to this many (about 8 KiB each). */
const FULL_TILE_CACHE = 1024;
const fullTiles = new WeakMap<EngineLog, Map<string, Uint8Array>>();

/**
 * The resource at `path` (below the prefix, e.g. `tile/0/000.p/3`) of the
 * log's latest signed checkpoint, or `undefined` when the path is not a
 * tile of it (or not spelled as the spec allows).
 */
export async function readTile(log: EngineLog, path: string): Promise<TileResource | undefined> {
  const ref = parseTilePath(path);
  if (!ref) return undefined;
  // A tile of the checkpoint this process last saw is served without a query; a larger one asks the store.
  let cp = await log.current();
  if (cp && !tileWithin(ref, cp.size)) cp = await log.latest();
  if (!cp || !tileWithin(ref, cp.size)) return undefined;
  if (ref.width !== TILE_WIDTH) return { body: await tileBytes(log, ref), immutable: false };
  let cache = fullTiles.get(log);
  if (!cache) fullTiles.set(log, (cache = new Map()));
  let body = cache.get(path);
  if (!body) {
    body = await tileBytes(log, ref);
    if (cache.size >= FULL_TILE_CACHE) cache.delete(cache.keys().next().value as string);
    cache.set(path, body);
  }
  return { body, immutable: true };
}

/**
 * Writes the log's checkpoint (signed now if the log grew: {@link EngineLog.checkpoint})
 * and every tile and entry bundle of its size under `dir`, with the partial
 * ones of every earlier size the log signed whose full tile is not there yet
 * ({@link exportedTiles}), each file written whole (temp file, then rename).
 * Returns the checkpoint and the paths written, relative to `dir`.
 */
export async function exportTiles(log: EngineLog, dir: string): Promise<{ readonly checkpoint: LogCheckpoint; readonly files: readonly string[] }> {
  const checkpoint = await log.checkpoint();
  // The partial tiles of every earlier size the log signed, as the server answers them (tlog-tiles' MUST).
  const files = await writeTileFiles(dir, checkpoint.size, checkpoint.signedCheckpoint, (ref) => tileBytes(log, ref), await log.signedSizes());
  return { checkpoint, files };
}

/**
 * Writes `checkpoint` and every tile and entry bundle of a tree of `size`
 * leaves (`tilesForSize`; `bytesOf` gives each one's bytes) under `dir`, each
 * file written whole (temp file, then rename), the checkpoint last — and
 * the partial tiles of the `earlier` signed sizes ({@link exportedTiles}); returns
 * the paths written, relative to `dir`. The one writer of the engine log's
 * and a session's tiles.
 */
export async function writeTileFiles(dir: string, size: number, signedCheckpoint: string, bytesOf: (ref: TileRef) => Uint8Array | Promise<Uint8Array>, earlier: readonly number[] = []): Promise<string[]> {
  const files: string[] = [];
  for (const ref of exportedTiles(size, earlier)) {
    const p = tilePath(ref);
    await writeWhole(join(dir, p), await bytesOf(ref));
    files.push(p);
  }
  await writeWhole(join(dir, 'checkpoint'), new TextEncoder().encode(signedCheckpoint));
  files.push('checkpoint');
  return files;
}

/**
 * Every tile and bundle of a tree of `size` leaves, then the partial ones of
 * each `earlier` signed size (≤ `size`) whose full tile the tree of `size`
 * does not have yet: tlog-tiles has a log serve the partial tiles of every
 * size it signed a checkpoint for, and lets it drop one once the full tile
 * is there. Each once, in that order.
 */
export function exportedTiles(size: number, earlier: readonly number[] = []): TileRef[] {
  const out = tilesForSize(size);
  const seen = new Set(out.map(tilePath));
  for (const s of earlier) {
    if (s >= size) continue;
    for (const ref of tilesForSize(s)) {
      if (ref.width === TILE_WIDTH || tileWithin({ ...ref, width: TILE_WIDTH }, size)) continue;
      const p = tilePath(ref);
      if (!seen.has(p)) {
        seen.add(p);
        out.push(ref);
      }
    }
  }
  return out;
}

async function writeWhole(path: string, body: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, body);
  await rename(tmp, path);
}

/**
 * A session's own tree as C2SP tlog-tiles (docs/PROTOCOL.md §15.4.1): the
 * latest session checkpoint the engine key signed (origin `<engine
 * name>/<session id>`, §11.3, as the signing log records it) as
 * `checkpoint`, hash tiles over the session tree's leaf hashes (the entry
 * hashes, §3), and entry bundles of the exact entry bytes those leaves hash
 * (`H(0x00 ‖ entryBytes)`: the bundle line without its "\n"). Tiles exist
 * only up to the size that checkpoint signs. The same bytes are served by
 * `tally serve` (src/server/http-session-tiles.ts) and written by `tally
 * tiles export --session`; the tile encoding is the engine log's (one copy,
 * src/protocol/log/tiles.ts).
 */
import { ENTRY_MAX_BYTES, TILE_WIDTH, TallyError, entryBundle, parseTilePath, tileHashes, toHex, type TileRef } from '../protocol/index.js';
import { entryLeafHash } from '../receipt/bytes.js';
import type { IssuedCheckpoint, Notary, NotaryEngine } from '../receipt/session/notary.js';
import type { PackedMerkleTree } from '../receipt/session/packed-tree.js';
import type { SessionTrees } from '../receipt/session/trees.js';
import { StoreCorruptionError } from '../session/errors.js';
import { tileWithin, writeTileFiles, type TileResource } from './tiles.js';

/** What a session's tiles are read from: the engine's store, the notary (engine key) and the tree cache the notary shares. */
export interface SessionTilesOptions {
  readonly engine: NotaryEngine;
  readonly notary: Notary;
  readonly trees: SessionTrees;
}

/** Why a session resource is not answered. */
export type SessionTileMiss =
  /** The path is not a tile of the signed checkpoint's tree, or is not spelled as the spec allows. */
  | 'no-such-tile'
  /** The store holds no such session, or the engine never signed a checkpoint of it. */
  | 'no-checkpoint'
  /** The entry bundle would hold an entry over 65535 bytes (the bundle's uint16 length); its hash tile still exists. */
  | 'entry-too-large';

/** Outcome of {@link readSessionTile}. */
export type SessionTileRead = { readonly ok: true; readonly resource: TileResource } | { readonly ok: false; readonly miss: SessionTileMiss; readonly message: string };

/** Thrown by {@link sessionTileBytes} for a bundle that cannot hold an entry (and by export, which writes nothing partial). */
export class EntryTooLargeError extends TallyError {
  constructor(sessionId: string, index: number, length: number) {
    super('TALLY_TILES_ENTRY_TOO_LARGE', `Entry ${index} of the session is ${length} bytes; a C2SP entry bundle holds entries of at most ${ENTRY_MAX_BYTES} bytes.`, { details: sessionId });
    this.name = 'EntryTooLargeError';
  }
}

/** The latest signed checkpoint of the session (with any cosignatures the notary collected), or `undefined`. */
export function sessionCheckpoint(o: SessionTilesOptions, sessionId: string): Promise<IssuedCheckpoint | undefined> {
  return o.notary.latestCheckpoint(o.engine, sessionId);
}

/**
 * The bytes of `ref` in the session's tree `tree` (synced from the store):
 * a hash tile from the tree's stored subtree hashes, or an entry bundle of
 * the stored entry bytes, each checked against the tree's leaf hash (a
 * store's bytes are never trusted: `StoreCorruptionError`). Throws
 * {@link EntryTooLargeError} for a bundle with an entry over 65535 bytes.
 */
export async function sessionTileBytes(o: SessionTilesOptions, sessionId: string, tree: PackedMerkleTree, ref: TileRef): Promise<Uint8Array> {
  const store = o.engine.store;
  const level = ref.kind === 'entries' ? 0 : ref.level;
  const hashes = await o.trees.read(store, sessionId, tree, () => tileHashes(tree, level, ref.index, ref.width));
  if (ref.kind === 'hash') return hashes;
  const from = ref.index * TILE_WIDTH;
  const rows = await store.readRange(sessionId, from, from + ref.width);
  if (rows.length !== ref.width) throw new StoreCorruptionError(sessionId, from + rows.length, `the store returns ${rows.length} of the ${ref.width} entries from ${from}`);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    if (row.index !== from + i || toHex(entryLeafHash(row.bytes)) !== toHex(hashes.subarray(i * 32, i * 32 + 32))) {
      throw new StoreCorruptionError(sessionId, from + i, 'the stored entry is not the leaf the session tree holds');
    }
    if (row.bytes.length > ENTRY_MAX_BYTES) throw new EntryTooLargeError(sessionId, from + i, row.bytes.length);
  }
  return entryBundle(rows.map((r) => r.bytes));
}

/**
 * The resource at `path` below a session's prefix (`checkpoint`,
 * `tile/0/000.p/3`, `tile/entries/000.p/3`): the latest signed checkpoint's
 * note, or a tile of its size. Full tiles are immutable; partial tiles and
 * the checkpoint are not.
 */
export async function readSessionTile(o: SessionTilesOptions, sessionId: string, path: string): Promise<SessionTileRead> {
  const ref = path === 'checkpoint' ? undefined : parseTilePath(path);
  if (path !== 'checkpoint' && !ref) return { ok: false, miss: 'no-such-tile', message: 'no such tile' };
  const cp = await sessionCheckpoint(o, sessionId);
  if (!cp) return { ok: false, miss: 'no-checkpoint', message: 'the engine has signed no checkpoint of this session (or the store holds no such session)' };
  if (!ref) return { ok: true, resource: { body: new TextEncoder().encode(cp.signedCheckpoint), immutable: false } };
  if (!tileWithin(ref, cp.size)) return { ok: false, miss: 'no-such-tile', message: `no such tile in the tree of size ${cp.size}` };
  const tree = await o.trees.sync(o.engine.store, sessionId);
  if (!tree) return { ok: false, miss: 'no-checkpoint', message: 'the store holds no such session' };
  try {
    return { ok: true, resource: { body: await sessionTileBytes(o, sessionId, tree, ref), immutable: ref.width === TILE_WIDTH } };
  } catch (e) {
    if (e instanceof EntryTooLargeError) return { ok: false, miss: 'entry-too-large', message: `${e.shortMessage} Read the entries from the session's bundle.` };
    throw e;
  }
}

/**
 * Signs a checkpoint of every entry of the session (the same bytes again
 * when that size is already signed; the signing log's rule), then writes
 * that checkpoint and every tile and entry bundle of its size under `dir`,
 * with the partial ones of every earlier signed size whose full tile is not
 * complete yet: files `tally serve` answers below the session's prefix. Throws
 * `TALLY_TILES_UNKNOWN_SESSION` for a session the store does not hold and
 * {@link EntryTooLargeError} (before the checkpoint file is written) for an
 * entry a bundle cannot hold.
 */
export async function exportSessionTiles(o: SessionTilesOptions, sessionId: string, dir: string): Promise<{ readonly checkpoint: IssuedCheckpoint; readonly files: readonly string[] }> {
  const cp = await o.notary.issueCheckpoint(o.engine, sessionId);
  if (!cp.ok) throw new TallyError('TALLY_TILES_UNKNOWN_SESSION', cp.message, { details: cp.code });
  const tree = await o.trees.sync(o.engine.store, sessionId);
  if (!tree) throw new TallyError('TALLY_TILES_UNKNOWN_SESSION', `no session ${sessionId}`);
  // The partial tiles of every earlier size the engine signed, as the server answers them (tlog-tiles' MUST).
  const earlier = (await o.engine.store.signedCheckpoints(cp.origin)).map((r) => r.size);
  const files = await writeTileFiles(dir, cp.size, cp.signedCheckpoint, (ref) => sessionTileBytes(o, sessionId, tree, ref), earlier);
  return { checkpoint: cp, files };
}

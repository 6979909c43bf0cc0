/**
 * The engine log's RFC 6962 tree kept as stored tiles (as Tessera and
 * Sunlight keep theirs): every full hash tile (256 hashes of 32 bytes at a
 * level, C2SP tlog-tiles) is written to the store once it is complete and
 * never changes; in memory there is only the right edge — per level the
 * hashes of its partial tile (fewer than 256) and the leaves of the partial
 * entry bundle. Nodes inside a full tile are read from the store.
 *
 * - Start-up reads the store's tile counts, the last full tiles below each
 *   level's partial tile at a boundary no larger than the size the caller
 *   trusts (the engine log: its last signed checkpoint's, whose root it then
 *   checks) and the leaves after that boundary;
 *   a tile the store lacks (a crash between a leaf's commit and its tile's
 *   write, or a database from before migration SQLite 8 / PostgreSQL 12)
 *   is rebuilt from the leaves below it, as any new one is.
 * - A tile is written with insert-if-absent and the stored bytes compared
 *   with the computed ones: the same bytes are idempotent (several engines
 *   on one database write the same tiles), other bytes are refused
 *   (`TALLY_LOG_TILE_MISMATCH`), never repaired.
 * - A full tile read back is checked against its hash one level up (in a
 *   stored tile checked the same way, or in the right edge), and leaves read
 *   back against their level-0 tile; the edge itself is what the engine log
 *   checks against every checkpoint it signs or serves.
 *
 * Roots and proofs are computed by the protocol's `*FromNodes` rules in two
 * passes: the first records which stored tiles the answer reads (which nodes
 * a proof reads depends on the sizes and index only), they are fetched, and
 * the second computes from them.
 */
import { MerkleLevels, TILE_HEIGHT, TILE_WIDTH, TallyError, type NodeReader } from '../protocol/index.js';
import { entryLeafHash } from '../receipt/bytes.js';
import { receiptHasher } from '../receipt/session/trees.js';
import type { EngineLogStore } from '../store/types.js';

/** Leaves read from the store per query while catching up. */
const READ_CHUNK = 4096;
/** Verified full tiles kept per tree (8 KiB each). */
const TILE_CACHE = 512;
const HASH = 32;
const ZERO = new Uint8Array(HASH);

/** The store a {@link StoredTree} reads leaves and tiles from. */
export type TreeStore = EngineLogStore;

/** The right edge of the tree: `size` leaves; per level the hashes of the partial tile; the leaves of the partial bundle. */
interface Edge {
  size: number;
  readonly partial: MerkleLevels[];
  tail: Uint8Array[];
}

interface FullTile {
  readonly level: number;
  readonly index: number;
  readonly bytes: Uint8Array;
}

/** Full tiles at `level` in a tree of `size` leaves. */
export function fullTiles(size: number, level: number): number {
  return Math.floor(size / TILE_WIDTH ** (level + 1));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The root of the perfect subtree over hashes `[from, from + 2^height)` of a tile's bytes. */
function subtreeOf(bytes: Uint8Array, height: number, from: number): Uint8Array {
  let row: Uint8Array[] = [];
  for (let i = 0; i < 2 ** height; i++) row.push(bytes.subarray((from + i) * HASH, (from + i + 1) * HASH));
  while (row.length > 1) {
    const up: Uint8Array[] = [];
    for (let i = 0; i < row.length; i += 2) up.push(receiptHasher.hashChildren(row[i]!, row[i + 1]!));
    row = up;
  }
  return row[0]!.slice();
}

function levelsOf(hashes: readonly Uint8Array[]): MerkleLevels {
  const t = new MerkleLevels(receiptHasher);
  for (const h of hashes) t.append(h);
  return t;
}

/** The hashes of a tile's bytes. */
function hashesOf(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += HASH) out.push(bytes.slice(i, i + HASH));
  return out;
}

function cloneEdge(e: Edge): Edge {
  return { size: e.size, partial: e.partial.map((t) => levelsOf(Array.from({ length: t.size }, (_, i) => t.leafHash(i)))), tail: [...e.tail] };
}

/** Appends one leaf to `e`, collecting the tiles it completes (lowest level first). */
function push(e: Edge, leaf: Uint8Array, done: FullTile[]): void {
  let h = entryLeafHash(leaf);
  e.size++;
  e.tail.push(leaf);
  for (let level = 0; ; level++) {
    const t = (e.partial[level] ??= new MerkleLevels(receiptHasher));
    t.append(h);
    if (t.size < TILE_WIDTH) return;
    const bytes = new Uint8Array(TILE_WIDTH * HASH);
    for (let i = 0; i < TILE_WIDTH; i++) bytes.set(t.leafHash(i), i * HASH);
    done.push({ level, index: fullTiles(e.size, level) - 1, bytes });
    h = t.root();
    e.partial[level] = new MerkleLevels(receiptHasher);
    if (level === 0) e.tail = [];
  }
}

/** The engine log's tree over a store's leaves and tiles. */
export class StoredTree {
  readonly #store: TreeStore;
  #edge: Edge = { size: 0, partial: [], tail: [] };
  #started = false;
  readonly #cache = new Map<string, Uint8Array>();

  constructor(store: TreeStore) {
    this.#store = store;
  }

  /** Leaves in the tree. */
  get size(): number {
    return this.#edge.size;
  }

  /**
   * Brings the tree to the store's `n` leaves (call one at a time). The first
   * call starts from the stored tiles of at most the first `trusted` leaves
   * (default all `n`): the caller checks the tree against a signed root of
   * that size; every tile past the start is rebuilt from the leaves and
   * compared with the stored one.
   */
  async extendTo(n: number, trusted: number = n): Promise<void> {
    if (!this.#started) await this.#start(n, Math.min(n, trusted));
    while (this.#edge.size < n) {
      const from = this.#edge.size;
      const to = Math.min(n, from + READ_CHUNK);
      const got = await this.#store.engineLogLeaves(from, to);
      if (got.length !== to - from) throw new TallyError('TALLY_LOG_GAP', 'The store answered a different number of engine log leaves than asked.', { details: `asked ${from} to ${to}, got ${got.length}` });
      // Readers keep using the current edge while this one's new tiles are written: a chunk that
      // completes no tile appends in place (append-only, no await in between); one that does
      // builds a copy and commits it once its tiles are stored.
      if (fullTiles(to, 0) === fullTiles(from, 0)) {
        const none: FullTile[] = [];
        for (const leaf of got) push(this.#edge, leaf, none);
        continue;
      }
      const next = cloneEdge(this.#edge);
      const done: FullTile[] = [];
      for (const leaf of got) push(next, leaf, done);
      for (const t of done) await this.#put(t);
      this.#edge = next;
    }
  }

  /**
   * Starts from the store's tiles: the largest tile boundary `s <= trusted`
   * below which every full tile of every level is stored; the edge at `s` is
   * read from those tiles, and the leaves after `s` are then appended as new
   * ones (their tiles rebuilt and compared with any stored).
   */
  async #start(n: number, trusted: number): Promise<void> {
    const counts = await this.#store.engineLogTileCounts();
    let s = trusted;
    for (let level = 0; TILE_WIDTH ** (level + 1) <= n || level < counts.length; level++) {
      const have = counts[level] ?? 0;
      if (have > fullTiles(n, level)) throw new TallyError('TALLY_LOG_ROLLED_BACK', 'The store holds engine log tiles of more leaves than it has; refusing to serve or sign a shorter log.', { details: `${have} full tiles at level ${level}, ${n} leaves` });
      s = Math.min(s, (have + 1) * TILE_WIDTH ** (level + 1) - 1);
    }
    s = fullTiles(s, 0) * TILE_WIDTH;
    const partial: MerkleLevels[] = [new MerkleLevels(receiptHasher)];
    for (let level = 1; Math.floor(s / TILE_WIDTH ** level) > 0; level++) {
      const from = fullTiles(s, level) * TILE_WIDTH;
      const to = Math.floor(s / TILE_WIDTH ** level);
      const below = await this.#store.engineLogTiles(level - 1, from, to);
      if (below.length !== to - from) throw new TallyError('TALLY_LOG_GAP', 'The store is missing engine log tiles below its last one.', { details: `level ${level - 1}: asked ${from} to ${to}, got ${below.length}` });
      partial.push(levelsOf(below.map((b) => levelsOf(hashesOf(b)).root())));
    }
    this.#edge = { size: s, partial, tail: [] };
    this.#started = true;
  }

  /** Writes a completed tile (idempotent) and refuses a stored one with other bytes. */
  async #put(t: FullTile): Promise<void> {
    const stored = await this.#store.putEngineLogTile(t.level, t.index, t.bytes);
    if (!sameBytes(stored, t.bytes)) throw tileMismatch(t.level, t.index, 'the stored tile is not the one its leaves make');
    this.#remember(`${t.level}/${t.index}`, t.bytes);
  }

  #remember(key: string, bytes: Uint8Array): void {
    if (this.#cache.size >= TILE_CACHE) this.#cache.delete(this.#cache.keys().next().value as string);
    this.#cache.set(key, bytes);
  }

  /** The full tile (`level`, `index`) of a tree whose edge is `e`, read from the store and checked one level up. */
  async #tile(e: Edge, level: number, index: number): Promise<Uint8Array> {
    const key = `${level}/${index}`;
    const hit = this.#cache.get(key);
    if (hit) return hit;
    const got = (await this.#store.engineLogTiles(level, index, index + 1))[0];
    if (!got) throw new TallyError('TALLY_LOG_GAP', 'The store is missing an engine log tile below its last one.', { details: `tile ${key}` });
    if (got.length !== TILE_WIDTH * HASH) throw tileMismatch(level, index, `the stored tile is ${got.length} bytes`);
    const above = await this.#hashAt(e, level + 1, index);
    if (!sameBytes(levelsOf(hashesOf(got)).root(), above)) throw tileMismatch(level, index, 'its root is not the hash one level up');
    this.#remember(key, got);
    return got;
  }

  /** Hash `index` of tile level `level` (the node of height 8·level). */
  async #hashAt(e: Edge, level: number, index: number): Promise<Uint8Array> {
    const t = Math.floor(index / TILE_WIDTH);
    if (t >= fullTiles(e.size, level)) return e.partial[level]!.leafHash(index - t * TILE_WIDTH);
    const bytes = await this.#tile(e, level, t);
    return bytes.slice((index % TILE_WIDTH) * HASH, (index % TILE_WIDTH + 1) * HASH);
  }

  /**
   * Runs `fn` over the nodes of the tree as it is now: once to learn which
   * stored tiles it reads, then again over them. `fn` must read the same
   * nodes whatever their values (the `*FromNodes` rules do).
   */
  async withNodes<T>(fn: (reader: NodeReader) => T): Promise<T> {
    const e = this.#edge;
    const size = e.size;
    const tiles = new Map<string, Uint8Array>();
    const missing = new Map<string, [number, number]>();
    const reader = (record: boolean): NodeReader => ({
      node: (height, index) => {
        const level = Math.floor(height / TILE_HEIGHT);
        const r = height % TILE_HEIGHT;
        const first = index * 2 ** r;
        const t = Math.floor(first / TILE_WIDTH);
        if (t >= fullTiles(size, level)) {
          const p = e.partial[level];
          if (!p) throw new TallyError('TALLY_MERKLE_OUT_OF_RANGE', 'No such complete subtree.', { details: `level ${height}, index ${index}, tree size ${size}` });
          return p.node(r, (first - t * TILE_WIDTH) / 2 ** r);
        }
        const key = `${level}/${t}`;
        const bytes = tiles.get(key) ?? this.#cache.get(key);
        if (bytes === undefined) {
          if (!record) throw new TallyError('TALLY_MERKLE_INTERNAL', 'A proof read a tile it did not ask for.', { details: key });
          missing.set(key, [level, t]);
          return ZERO;
        }
        tiles.set(key, bytes);
        return subtreeOf(bytes, r, first - t * TILE_WIDTH);
      },
    });
    fn(reader(true));
    for (const [key, [level, t]] of missing) tiles.set(key, await this.#tile(e, level, t));
    return fn(reader(false));
  }

  /** Leaves `from <= i < to` of the tree (`to <= size`), each checked against its level-0 hash. */
  async leaves(from: number, to: number): Promise<Uint8Array[]> {
    const e = this.#edge;
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to > e.size || from > to) throw new RangeError(`no engine log leaves ${String(from)} to ${String(to)} (size ${e.size})`);
    const stored = fullTiles(e.size, 0) * TILE_WIDTH;
    const out: Uint8Array[] = [];
    if (from < stored) {
      const end = Math.min(to, stored);
      const got = await this.#store.engineLogLeaves(from, end);
      if (got.length !== end - from) throw new TallyError('TALLY_LOG_GAP', 'The store answered a different number of engine log leaves than asked.', { details: `asked ${from} to ${end}, got ${got.length}` });
      for (let i = 0; i < got.length; i++) {
        const at = from + i;
        const tile = await this.#tile(e, 0, Math.floor(at / TILE_WIDTH));
        const want = tile.subarray((at % TILE_WIDTH) * HASH, (at % TILE_WIDTH + 1) * HASH);
        if (!sameBytes(entryLeafHash(got[i]!), want)) throw tileMismatch(0, Math.floor(at / TILE_WIDTH), `leaf ${at} does not hash to the tile's hash`);
        out.push(got[i]!);
      }
    }
    for (let i = Math.max(from, stored); i < to; i++) out.push(new Uint8Array(e.tail[i - stored]!));
    return out;
  }
}

function tileMismatch(level: number, index: number, why: string): TallyError {
  return new TallyError('TALLY_LOG_TILE_MISMATCH', 'An engine log tile in the store disagrees with the leaves and tiles below it; refusing to serve or sign from it.', { details: `tile ${level}/${index}: ${why}` });
}

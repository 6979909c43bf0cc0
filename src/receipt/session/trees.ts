import { TallyError, toHex } from '../../protocol/index.js';
import { KeyedMutex } from '../../session/mutex.js';
import { StoreCorruptionError } from '../../session/errors.js';
import type { StoredEntry, TranscriptStore } from '../../store/types.js';
import { entryLeafHash } from '../bytes.js';
import { ChunkNeededError, PackedMerkleTree } from './packed-tree.js';
import { receiptHasher } from './receipt-hasher.js';

export { receiptHasher } from './receipt-hasher.js';

/** Options of {@link SessionTrees}. */
export interface SessionTreesOptions {
  /** Most sessions whose trees are kept (least recently used dropped first; default 64). */
  readonly maxSessions?: number;
  /**
   * Most entries kept over all cached trees; least recently used trees are
   * dropped first, the one in use never. The default keeps the cache's
   * memory the same at any floor: 4,000,000 entries at floor 0 (a tree keeps
   * every node, 64–128 bytes per entry), 2^floor times as many at a larger
   * floor (a tree keeps only the levels from `floor` up), so with the default
   * floor 8 the cache is bounded by `maxSessions` long before entries.
   */
  readonly maxEntries?: number;
  /** Entries read from the store per batch while catching up (default 256: small pages keep the peak RSS of a long day low). */
  readonly batch?: number;
  /**
   * The trees' floor (see `PackedMerkleTreeOptions.floor`; default 8): only
   * subtrees of 2^floor leaves and up are kept, and the 2^floor entries of a
   * chunk a proof needs are read again from the store (default: 256 entries,
   * about 0.25 bytes per entry kept). 0 keeps every node (64 bytes per entry).
   */
  readonly floor?: number;
}

/** Chunk loads one read may need (a root, a proof and a consistency check touch at most three chunks). */
const MAX_CHUNK_LOADS = 16;

/**
 * The leaf hash of a stored row, checked in one pass: the row must be entry
 * `at` (the one expected next) and its stored hash the hash of its stored bytes
 * (a store's hashes are never trusted). Throws `StoreCorruptionError` otherwise.
 */
function checkedLeaf(sessionId: string, row: StoredEntry, at: number): Uint8Array {
  if (row.index !== at) throw new StoreCorruptionError(sessionId, at, `the store returned entry ${row.index} where ${at} was expected`);
  const h = entryLeafHash(row.bytes);
  if (toHex(h) !== row.hash) throw new StoreCorruptionError(sessionId, row.index, 'stored hash is not the hash of the stored bytes');
  return h;
}

interface Cached {
  readonly levels: PackedMerkleTree;
}

/**
 * One {@link PackedMerkleTree} per session, built once from the store and
 * then only extended: every perfect-subtree hash of 2^floor leaves and up
 * is kept, so a root or an inclusion/consistency proof at any size costs
 * O(log n) node reads, at most O(log n) hashes, and at most a few chunks of
 * 2^floor entries read again from the store.
 *
 * Honest costs: the first call for a session reads every entry and hashes it
 * (one leaf hash per entry, recomputed from the stored bytes and compared
 * with the stored hash — a store's hashes are never trusted) plus, amortised,
 * one interior hash per entry; later calls only read and hash the entries
 * appended since. Memory is about 64 / 2^floor bytes per entry per cached
 * session (default floor 8: a quarter of a byte; 64–128 bytes with floor 0)
 * plus a few loaded chunks; a proof below the floor re-reads one chunk of
 * 2^floor entries ({@link SessionTrees.read}). The store is append-only, so a cached tree
 * never goes stale; a sealed session's tree is final.
 *
 * @example
 * const trees = new SessionTrees();
 * const t = await trees.sync(engine.store, sessionId);
 * t?.inclusionProof(3, t.size);
 */
export class SessionTrees {
  readonly #cache = new WeakMap<TranscriptStore, Map<string, Cached>>();
  readonly #lock = new KeyedMutex();
  readonly #max: number;
  readonly #maxEntries: number;
  readonly #batch: number;
  readonly #floor: number;

  constructor(options: SessionTreesOptions = {}) {
    this.#floor = options.floor ?? 8;
    this.#max = Math.max(1, options.maxSessions ?? 64);
    this.#maxEntries = Math.max(1, options.maxEntries ?? 4_000_000 * 2 ** this.#floor);
    this.#batch = Math.max(1, options.batch ?? 256);
  }

  /**
   * The session's tree, extended to the store's current size; `undefined` for
   * an unknown session. Throws `StoreCorruptionError` when a stored hash is
   * not the hash of its stored bytes.
   */
  async sync(store: TranscriptStore, sessionId: string): Promise<PackedMerkleTree | undefined> {
    return this.#lock.run(sessionId, async () => {
      const head = await store.loadHead(sessionId);
      if (!head) return undefined;
      let byStore = this.#cache.get(store);
      if (!byStore) {
        byStore = new Map();
        this.#cache.set(store, byStore);
      }
      let cached = byStore.get(sessionId);
      if (cached) byStore.delete(sessionId); // re-insert below: most recently used last
      cached ??= { levels: new PackedMerkleTree(receiptHasher, { floor: this.#floor }) };
      const { levels } = cached;
      while (levels.size < head.size) {
        const from = levels.size;
        const rows = await store.readRange(sessionId, from, Math.min(head.size, from + this.#batch));
        if (rows.length === 0) throw new StoreCorruptionError(sessionId, from, `the store reports ${head.size} entries but returns none from ${from}`);
        for (const row of rows) levels.append(checkedLeaf(sessionId, row, levels.size));
      }
      byStore.set(sessionId, cached);
      let total = 0;
      for (const c of byStore.values()) total += c.levels.size;
      for (const [oldest, c] of byStore) {
        if (oldest === sessionId || (byStore.size <= this.#max && total <= this.#maxEntries)) break;
        byStore.delete(oldest);
        total -= c.levels.size;
      }
      return levels;
    });
  }

  /**
   * Runs `fn` — roots, proofs and leaf hashes of `tree`, the session's tree
   * from {@link sync} — and whenever it needs a chunk below the tree's floor,
   * reads that chunk's entries from the store (every leaf hash recomputed
   * from the stored bytes and compared with the stored hash, and the chunk
   * with the root the tree kept) and runs `fn` again. `fn` must not write
   * before it reads the tree (it may run more than once).
   */
  async read<T>(store: TranscriptStore, sessionId: string, tree: PackedMerkleTree, fn: () => T | Promise<T>): Promise<T> {
    for (let loads = 0; ; loads++) {
      try {
        return await fn();
      } catch (e) {
        if (!(e instanceof ChunkNeededError) || loads >= MAX_CHUNK_LOADS) throw e;
        await this.#loadChunk(store, sessionId, tree, e.chunk);
      }
    }
  }

  async #loadChunk(store: TranscriptStore, sessionId: string, tree: PackedMerkleTree, chunk: number): Promise<void> {
    const width = 2 ** tree.floor;
    const from = chunk * width;
    const rows = await store.readRange(sessionId, from, from + width);
    const leaves: Uint8Array[] = [];
    for (const row of rows) leaves.push(checkedLeaf(sessionId, row, from + leaves.length));
    if (leaves.length !== width) throw new StoreCorruptionError(sessionId, from + leaves.length, `the store returns ${leaves.length} of the ${width} entries from ${from}`);
    try {
      tree.loadChunk(chunk, leaves);
    } catch (e) {
      if (e instanceof TallyError && e.code === 'TALLY_MERKLE_CHUNK_MISMATCH') throw new StoreCorruptionError(sessionId, from, `entries ${from} to ${from + width - 1} changed since the tree was built`);
      throw e;
    }
  }

  /** Drops cached trees (one session, or all of them for `store`). */
  evict(store: TranscriptStore, sessionId?: string): void {
    if (sessionId === undefined) this.#cache.delete(store);
    else this.#cache.get(store)?.delete(sessionId);
  }
}

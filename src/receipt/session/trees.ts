import { sha256 } from '../../codec/sha256.js';
import { rfc6962Hasher, toHex, type MerkleHasher } from '../../protocol/index.js';
import { KeyedMutex } from '../../session/mutex.js';
import { StoreCorruptionError } from '../../session/errors.js';
import type { TranscriptStore } from '../../store/types.js';
import { entryLeafHash } from '../bytes.js';
import { PackedMerkleTree } from './packed-tree.js';

/** The RFC 6962 hasher over node:crypto SHA-256 that every receipt tree uses. */
export const receiptHasher: MerkleHasher = rfc6962Hasher(sha256);

/** Options of {@link SessionTrees}. */
export interface SessionTreesOptions {
  /** Most sessions whose trees are kept (least recently used dropped first; default 64). */
  readonly maxSessions?: number;
  /**
   * Most entries kept over all cached trees (default 4,000,000 ≈ 256–512 MB);
   * least recently used trees are dropped first, the one in use never.
   */
  readonly maxEntries?: number;
  /** Entries read from the store per batch while catching up (default 4096). */
  readonly batch?: number;
}

interface Cached {
  readonly levels: PackedMerkleTree;
}

/**
 * One {@link PackedMerkleTree} per session, built once from the store and
 * then only extended: every perfect-subtree hash is kept, so a root or an
 * inclusion/consistency proof at any size costs O(log n) node reads and at
 * most O(log n) hashes.
 *
 * Honest costs: the first call for a session reads every entry and hashes it
 * (one leaf hash per entry, recomputed from the stored bytes and compared
 * with the stored hash — a store's hashes are never trusted) plus, amortised,
 * one interior hash per entry; later calls only read and hash the entries
 * appended since. Memory is 64–128 bytes per entry per cached session
 * (packed hashes; capacity doubles), bounded by `maxEntries` overall. The store is append-only, so a cached tree
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

  constructor(options: SessionTreesOptions = {}) {
    this.#max = Math.max(1, options.maxSessions ?? 64);
    this.#maxEntries = Math.max(1, options.maxEntries ?? 4_000_000);
    this.#batch = Math.max(1, options.batch ?? 4096);
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
      cached ??= { levels: new PackedMerkleTree(receiptHasher) };
      const { levels } = cached;
      while (levels.size < head.size) {
        const from = levels.size;
        const rows = await store.readRange(sessionId, from, Math.min(head.size, from + this.#batch));
        if (rows.length === 0) throw new StoreCorruptionError(sessionId, from, `the store reports ${head.size} entries but returns none from ${from}`);
        for (const row of rows) {
          if (row.index !== levels.size) throw new StoreCorruptionError(sessionId, levels.size, `the store returned entry ${row.index} where ${levels.size} was expected`);
          const h = entryLeafHash(row.bytes);
          if (toHex(h) !== row.hash) throw new StoreCorruptionError(sessionId, row.index, 'stored hash is not the hash of the stored bytes');
          levels.append(h);
        }
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

  /** Drops cached trees (one session, or all of them for `store`). */
  evict(store: TranscriptStore, sessionId?: string): void {
    if (sessionId === undefined) this.#cache.delete(store);
    else this.#cache.get(store)?.delete(sessionId);
  }
}

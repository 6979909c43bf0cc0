/**
 * The engine log: one long-lived RFC 6962 tree over every leaf the store's
 * engine log holds (a session opened, a session checkpoint signed; see
 * `src/protocol/log/leaf.ts`), with one fixed origin, signed by an Ed25519
 * key whose note name IS that origin (C2SP tlog-checkpoint: the key name
 * SHOULD match the origin; litewitness refuses one that does not).
 *
 * The tree is kept as stored tiles ({@link StoredTree}, `stored-tree.ts`):
 * full hash tiles are written to the store once complete, only the right
 * edge is in memory, and start-up reads the last full tiles up to the last
 * signed checkpoint and the leaves after them, not the whole log, and checks
 * that checkpoint's root before it serves or signs. A store that answers fewer leaves than
 * were read before is refused (`TALLY_LOG_ROLLED_BACK`), a stored tile that
 * disagrees with its leaves too (`TALLY_LOG_TILE_MISMATCH`). Every
 * checkpoint of the log passes the signing log like any other signature of
 * the engine: recorded first, refused if it would equivocate or be
 * inconsistent with the last one signed (an RFC 6962 consistency proof from
 * this tree against the recorded root).
 */
import { TallyError, consistencyProofFromNodes, fromHex, inclusionProofFromNodes, isDigestHex, rootFromNodes, toHex, type NodeReader } from '../protocol/index.js';
import { formatCheckpoint, isValidOrigin } from '../receipt/checkpoint/index.js';
import type { EngineKey } from '../receipt/keys/engineKey.js';
import { signNote } from '../receipt/note/sign.js';
import { receiptHasher } from '../receipt/session/trees.js';
import { SigningLog } from '../receipt/signing/log.js';
import { hasEngineLog, type EngineLogStore, type SignedCheckpointRecord, type SigningLogStore } from '../store/types.js';
import { StoredTree } from './stored-tree.js';

/** Options of {@link EngineLog}. */
export interface EngineLogOptions {
  /** The store whose engine log (leaves and full tiles) and signing log this is. */
  readonly store: SigningLogStore & EngineLogStore;
  /** The log key; its note name is the log's origin. */
  readonly key: EngineKey;
  /** The clock of the signing log's `signedAt` (epoch ms; default `Date.now`). */
  readonly now?: () => number;
  /** Sign a new checkpoint at most once per this many milliseconds ({@link EngineLog.publish}; default 5000). */
  readonly minIntervalMs?: number;
}

/** A signed checkpoint of the engine log. */
export interface LogCheckpoint {
  readonly origin: string;
  readonly size: number;
  /** Root, 64 lowercase hex. */
  readonly root: string;
  /** The C2SP signed note: tlog-checkpoint text and the log key's signature line. */
  readonly signedCheckpoint: string;
}

/**
 * The engine log of one store.
 *
 * @example
 * const log = new EngineLog({ store, key: await loadOrCreateEngineKey('.tally/log.key', 'tally.example/desk/log') });
 * const cp = await log.checkpoint();          // sign now (if it grew, a new size)
 * const proof = await log.inclusionProof(3, cp.size);
 */
export class EngineLog {
  /** The log's origin (= the key's note name). */
  readonly origin: string;
  /** The verifier key graders and witnesses pin. */
  readonly verifierKey: string;
  readonly #store: SigningLogStore & EngineLogStore;
  readonly #key: EngineKey;
  readonly #signing: SigningLog;
  readonly #now: () => number;
  readonly #interval: number;
  readonly #tree: StoredTree;
  #syncing: Promise<number> | undefined;
  /** Whether the first catch-up (start-up from the stored tiles) passed. */
  #started = false;
  /** The last checkpoint signed or read by this instance. */
  #last: LogCheckpoint | undefined;

  constructor(options: EngineLogOptions) {
    const { store, key } = options;
    if (!store || !hasEngineLog(store)) throw new TallyError('TALLY_LOG_NO_STORE', 'The store keeps no engine log (engineLogSize, engineLogLeaves) or no tiles of it (engineLogTileCounts, engineLogTiles, putEngineLogTile).');
    if (!key || typeof key.sign !== 'function' || !isValidOrigin(key.name)) throw new TallyError('TALLY_LOG_KEY_INVALID', 'The engine log needs an engine key whose name is a valid checkpoint origin.');
    this.origin = key.name;
    this.verifierKey = key.verifierKey;
    this.#store = store;
    this.#tree = new StoredTree(store);
    this.#key = key;
    this.#now = options.now ?? Date.now;
    this.#signing = new SigningLog(store, { now: this.#now });
    const interval = options.minIntervalMs ?? 5000;
    if (!Number.isSafeInteger(interval) || interval < 0) throw new RangeError(`minIntervalMs must be a non-negative integer, got ${String(interval)}`);
    this.#interval = interval;
  }

  /** Leaves read so far. */
  get size(): number {
    return this.#tree.size;
  }

  /** Reads the leaves the store added since the last call (one catch-up at a time); resolves to the new size. */
  sync(): Promise<number> {
    this.#syncing ??= this.#catchUp().finally(() => {
      this.#syncing = undefined;
    });
    return this.#syncing;
  }

  async #catchUp(): Promise<number> {
    const n = await this.#store.engineLogSize();
    if (n < this.#tree.size) throw new TallyError('TALLY_LOG_ROLLED_BACK', 'The store holds fewer engine log leaves than were read from it before; refusing to serve or sign a shorter log.', { details: `read ${this.#tree.size}, store has ${n}` });
    if (this.#started) {
      await this.#tree.extendTo(n);
      return n;
    }
    // Start-up (§15.3): a store's log has one origin and key, recorded by the first engine log that opens it.
    const claimed = await this.#store.claimEngineLogKey(this.origin, this.verifierKey);
    if (claimed.origin !== this.origin || claimed.verifierKey !== this.verifierKey) {
      throw new TallyError('TALLY_LOG_KEY_MISMATCH', 'This store\'s engine log is signed with another log key; refusing to sign or serve it under a second origin or key (a new shard is a new store, §15.9).', {
        details: `the store's log key is ${claimed.verifierKey} (origin ${claimed.origin}); this one is ${this.verifierKey}`,
      });
    }
    // Stored tiles are trusted only as far as the last checkpoint the log key signed, and only once the tree they
    // give has that checkpoint's root; every tile past it is rebuilt from the leaves and compared.
    const last = await this.#signing.latest(this.origin);
    await this.#tree.extendTo(n, last?.size ?? 0);
    if (last) await this.#checkSigned(last);
    this.#started = true;
    return n;
  }

  /** The leaf bytes at `index` (read so far), checked against its tile. */
  async leaf(index: number): Promise<Uint8Array> {
    if (!Number.isSafeInteger(index) || index < 0 || index >= this.size) throw new RangeError(`no engine log leaf ${String(index)} (size ${this.size})`);
    return (await this.#tree.leaves(index, index + 1))[0]!;
  }

  /** Leaves `from <= i < to` (read so far; both capped at the size, as a slice is), checked against their tiles. */
  async leaves(from: number, to: number): Promise<Uint8Array[]> {
    const end = Math.min(to, this.size);
    return this.#tree.leaves(Math.min(from, end), end);
  }

  /**
   * Runs `fn` over the perfect-subtree nodes of the tree read so far (full
   * tiles from the store, the right edge from memory); `fn` must read the
   * same nodes whatever their values, as the protocol's `*FromNodes` rules
   * and `tileHashes` do.
   */
  withNodes<T>(fn: (reader: NodeReader) => T): Promise<T> {
    return this.#tree.withNodes(fn);
  }

  /** Root of the first `size` leaves (default: all read so far); requires `0 <= size <= this.size`. */
  root(size: number = this.size): Promise<Uint8Array> {
    inRange(size, 0, this.size, 'size');
    return this.withNodes((r) => rootFromNodes(receiptHasher, r, size));
  }

  /** Inclusion proof of leaf `index` in the tree of `size` leaves; requires `0 <= index < size <= this.size`. */
  inclusionProof(index: number, size: number = this.size): Promise<Uint8Array[]> {
    inRange(size, 1, this.size, 'size');
    inRange(index, 0, size - 1, 'index');
    return this.withNodes((r) => inclusionProofFromNodes(receiptHasher, r, index, size));
  }

  /** Consistency proof from `size1` to `size2` leaves; requires `0 < size1 <= size2 <= this.size` or both 0. */
  consistencyProof(size1: number, size2: number = this.size): Promise<Uint8Array[]> {
    inRange(size2, 0, this.size, 'size2');
    inRange(size1, size2 === 0 ? 0 : 1, size2, 'size1');
    return this.withNodes((r) => consistencyProofFromNodes(receiptHasher, r, size1, size2));
  }

  /** Every size a checkpoint of this log was signed at, ascending (the signing log's records of its origin). */
  async signedSizes(): Promise<number[]> {
    return (await this.#store.signedCheckpoints(this.origin)).map((r) => r.size);
  }

  /**
   * Catches up and signs a checkpoint of every leaf (the signing log records
   * it first; the same size again is the same signed bytes). Throws
   * `TALLY_LOG_EMPTY` when the log has no leaf yet, `SigningRefusedError`
   * when the signing log refuses.
   */
  async checkpoint(): Promise<LogCheckpoint> {
    const size = await this.sync();
    if (size < 1) throw new TallyError('TALLY_LOG_EMPTY', 'The engine log has no leaf yet; nothing to sign.');
    return this.#sign(size);
  }

  /**
   * The cadence rule: signs a new checkpoint only when the log grew since the
   * last signed one and at least `minIntervalMs` passed since it was signed;
   * otherwise answers the last signed one again (re-signed: the same bytes).
   * Resolves `undefined` while nothing was ever signed and the log is empty.
   */
  async publish(): Promise<LogCheckpoint | undefined> {
    const last = await this.#signing.latest(this.origin);
    const size = await this.sync();
    if (last && (size === last.size || this.#now() - last.signedAt < this.#interval)) return this.#resign(last);
    if (size < 1) return undefined;
    return this.#sign(size);
  }

  /** The latest checkpoint the log key signed (re-signed: Ed25519 is deterministic), or `undefined`. */
  async latest(): Promise<LogCheckpoint | undefined> {
    if (!this.#started) await this.sync();
    const last = await this.#signing.latest(this.origin);
    return last && this.#resign(last);
  }

  /**
   * The last checkpoint this instance signed or read, without asking the
   * store (what tile reads are cut to); {@link latest} when there is none yet.
   */
  async current(): Promise<LogCheckpoint | undefined> {
    return this.#last ?? this.latest();
  }

  async #sign(size: number): Promise<LogCheckpoint> {
    const root = await this.root(size);
    const r = await this.#signing.record({ origin: this.origin, size, root }, { size: this.size, consistencyProof: (a, b) => this.consistencyProof(a, b) });
    if (!r.ok) throw SigningLog.refusalError(r);
    return this.#note(size, root);
  }

  /** The signed note of a recorded checkpoint, after checking the tree read from the store still has it. */
  async #resign(rec: SignedCheckpointRecord): Promise<LogCheckpoint> {
    if (rec.size > this.#tree.size) await this.sync();
    await this.#checkSigned(rec);
    return this.#note(rec.size, fromHex(rec.root));
  }

  /** Refuses a tree (the store's leaves and tiles, as read) that does not have a signed checkpoint's root at its size. */
  async #checkSigned(rec: SignedCheckpointRecord): Promise<void> {
    if (rec.size > this.#tree.size || !isDigestHex(rec.root) || toHex(await this.root(rec.size)) !== rec.root) {
      throw new TallyError('TALLY_LOG_ROLLED_BACK', 'The engine log in the store does not hold the tree its last signed checkpoint commits to.', { details: `signed size ${rec.size} root ${rec.root}, store has ${this.#tree.size} leaves` });
    }
  }

  #note(size: number, root: Uint8Array): LogCheckpoint {
    if (this.#last?.size === size) return this.#last;
    const text = formatCheckpoint({ origin: this.origin, size, root });
    const cp = { origin: this.origin, size, root: toHex(root), signedCheckpoint: signNote(text, [this.#key]) };
    if (!this.#last || size > this.#last.size) this.#last = cp;
    return cp;
  }
}

function inRange(n: number, min: number, max: number, name: string): void {
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${String(n)}`);
}

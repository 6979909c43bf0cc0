/**
 * The engine log: one long-lived RFC 6962 tree over every leaf the store's
 * engine log holds (a session opened, a session checkpoint signed; see
 * `src/protocol/log/leaf.ts`), with one fixed origin, signed by an Ed25519
 * key whose note name IS that origin (C2SP tlog-checkpoint: the key name
 * SHOULD match the origin; litewitness refuses one that does not).
 *
 * The tree is rebuilt here from the stored leaf bytes (every leaf hash
 * recomputed) and extended as the store grows; a store that answers fewer
 * leaves than were read before is refused (`TALLY_LOG_ROLLED_BACK`). Every
 * checkpoint of the log passes the signing log like any other signature of
 * the engine: recorded first, refused if it would equivocate or be
 * inconsistent with the last one signed (an RFC 6962 consistency proof from
 * this tree against the recorded root).
 */
import { MerkleLevels, TallyError, isDigestHex, toHex } from '../protocol/index.js';
import { formatCheckpoint, isValidOrigin } from '../receipt/checkpoint/index.js';
import type { EngineKey } from '../receipt/keys/engineKey.js';
import { signNote } from '../receipt/note/sign.js';
import { receiptHasher } from '../receipt/session/trees.js';
import { SigningLog } from '../receipt/signing/log.js';
import { entryLeafHash } from '../receipt/bytes.js';
import type { EngineLogStore, SignedCheckpointRecord, SigningLogStore } from '../store/types.js';

/** Leaves read from the store per query while catching up. */
const READ_CHUNK = 4096;

/** Options of {@link EngineLog}. */
export interface EngineLogOptions {
  /** The store whose engine log (and signing log) this is. */
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
 * const tile = await log.tile(parseTilePath('tile/0/000.p/3')!, cp.size);
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
  readonly #tree = new MerkleLevels(receiptHasher);
  readonly #leaves: Uint8Array[] = [];
  #syncing: Promise<number> | undefined;
  /** The last checkpoint signed or read by this instance. */
  #last: LogCheckpoint | undefined;

  constructor(options: EngineLogOptions) {
    const { store, key } = options;
    if (!store || typeof store.engineLogSize !== 'function' || typeof store.engineLogLeaves !== 'function') throw new TallyError('TALLY_LOG_NO_STORE', 'The store keeps no engine log (engineLogSize, engineLogLeaves).');
    if (!key || typeof key.sign !== 'function' || !isValidOrigin(key.name)) throw new TallyError('TALLY_LOG_KEY_INVALID', 'The engine log needs an engine key whose name is a valid checkpoint origin.');
    this.origin = key.name;
    this.verifierKey = key.verifierKey;
    this.#store = store;
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
    while (this.#tree.size < n) {
      const from = this.#tree.size;
      const to = Math.min(n, from + READ_CHUNK);
      const got = await this.#store.engineLogLeaves(from, to);
      if (got.length !== to - from) throw new TallyError('TALLY_LOG_GAP', 'The store answered a different number of engine log leaves than asked.', { details: `asked ${from} to ${to}, got ${got.length}` });
      for (const leaf of got) {
        this.#tree.append(entryLeafHash(leaf));
        this.#leaves.push(leaf);
      }
    }
    return n;
  }

  /** The leaf bytes at `index` (read so far). */
  leaf(index: number): Uint8Array {
    const l = this.#leaves[index];
    if (l === undefined) throw new RangeError(`no engine log leaf ${String(index)} (size ${this.size})`);
    return new Uint8Array(l);
  }

  /** Leaves `from <= i < to` (read so far). */
  leaves(from: number, to: number): Uint8Array[] {
    return this.#leaves.slice(from, to).map((l) => new Uint8Array(l));
  }

  /** The tree read so far: roots, proofs and the stored subtree hashes tiles are cut from. */
  get tree(): MerkleLevels {
    return this.#tree;
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
    const root = this.#tree.root(size);
    const r = await this.#signing.record({ origin: this.origin, size, root }, this.#tree);
    if (!r.ok) throw SigningLog.refusalError(r);
    return this.#note(size, toHex(root));
  }

  /** The signed note of a recorded checkpoint, after checking the tree read from the store still has it. */
  async #resign(rec: SignedCheckpointRecord): Promise<LogCheckpoint> {
    if (rec.size > this.#tree.size) await this.sync();
    if (rec.size > this.#tree.size || !isDigestHex(rec.root) || toHex(this.#tree.root(rec.size)) !== rec.root) {
      throw new TallyError('TALLY_LOG_ROLLED_BACK', 'The engine log in the store does not hold the tree its last signed checkpoint commits to.', { details: `signed size ${rec.size} root ${rec.root}, store has ${this.#tree.size} leaves` });
    }
    return this.#note(rec.size, rec.root);
  }

  #note(size: number, root: string): LogCheckpoint {
    if (this.#last?.size === size) return this.#last;
    const text = formatCheckpoint({ origin: this.origin, size, root: this.#tree.root(size) });
    const cp = { origin: this.origin, size, root, signedCheckpoint: signNote(text, [this.#key]) };
    if (!this.#last || size > this.#last.size) this.#last = cp;
    return cp;
  }
}

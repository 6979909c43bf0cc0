/**
 * The storage contract every transcript store implements (memory, SQLite,
 * PostgreSQL). Written as MUST / MUST NOT so an implementation can be checked
 * against it; the conformance suite in tests/store exercises every clause.
 *
 * A store keeps bytes; it never decides. The engine computes every hash and
 * ruling, and re-derives every hash when it loads a session (a store's hashes
 * are never trusted).
 */
import type { SessionPhase } from '../protocol/index.js';

/** One stored entry. */
export interface StoredEntry {
  /** 0-based position in its session (genesis is 0). */
  readonly index: number;
  /** Entry hash, 64 lowercase hex (the RFC 6962 leaf hash of `bytes`). */
  readonly hash: string;
  /** The exact canonical entry bytes. */
  readonly bytes: Uint8Array;
  /** The entry kind, for slot lookups. */
  readonly kind: 'genesis' | 'frame' | 'turn' | 'finalize';
  /** Frame or turn ordinal; absent for genesis and finalize. */
  readonly ordinal?: number;
}

/** The mutable head of a session: what compare-and-append compares. */
export interface SessionHead {
  readonly sessionId: string;
  /** Number of entries. */
  readonly size: number;
  /** Hash of the last entry. */
  readonly head: string;
  /** RFC 6962 compact range (frontier) over all `size` entries, as hex. */
  readonly frontier: readonly string[];
  readonly phase: SessionPhase;
}

/** A nonce an admitted intent consumes; reserved atomically with its entry. */
export interface NonceClaim {
  readonly agentId: string;
  readonly nonce: string;
  readonly intentHash: string;
}

/** Who used a nonce first. */
export interface NonceOwner {
  readonly intentHash: string;
  readonly sessionId: string;
  readonly index: number;
}

/** One atomic compare-and-append. */
export interface AppendRequest {
  readonly sessionId: string;
  /** The head the engine built this entry on. */
  readonly expected: { readonly size: number; readonly head: string };
  /** `entry.index` MUST equal `expected.size`. */
  readonly entry: StoredEntry;
  /** The head after the append (size + 1, entry hash, new frontier, new phase). */
  readonly next: SessionHead;
  /** Nonces to reserve in the same transaction. */
  readonly nonces: readonly NonceClaim[];
}

/** Outcome of an append. Expected races are results, not exceptions. */
export type AppendOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: 'head-moved' }
  | { readonly ok: false; readonly reason: 'nonce-taken'; readonly agentId: string; readonly nonce: string; readonly owner: NonceOwner }
  | { readonly ok: false; readonly reason: 'sealed' }
  | { readonly ok: false; readonly reason: 'unknown-session' };

/** Outcome of {@link TranscriptStore.reserve}: all reserved, or nothing (the first claim already held, and by whom). */
export type ReserveOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: 'nonce-taken'; readonly agentId: string; readonly nonce: string; readonly owner: NonceOwner };

/** Whether a store can commit now (see {@link TranscriptStore.health}). */
export type StoreHealth = { readonly ok: true } | { readonly ok: false; readonly code: string; readonly message: string };

/**
 * How a store's commits are replicated (PostgreSQL: the primary's view of its
 * streaming standbys). A failover to an asynchronous standby can lose
 * acknowledged commits — entries and signing-log rows — and the engine then
 * re-fills their slots: `tally serve` warns and `/readyz` fails while
 * `standbys > 0` and `protected` is false (docs/PROTOCOL.md §11.3).
 */
export interface ReplicationStatus {
  /** Standbys streaming from this server right now. */
  readonly standbys: number;
  /** Those among them in the synchronous set (`sync` or `quorum`). */
  readonly synchronous: number;
  /** The server's `synchronous_commit` setting. */
  readonly synchronousCommit: string;
  /** True when a commit waits for a synchronous standby (one is connected and `synchronous_commit` is `on`, `remote_write` or `remote_apply`). */
  readonly protected: boolean;
}

/**
 * One checkpoint the engine signed: a row of the signing log. The engine key
 * signs a checkpoint only after its row is recorded (durable first), so the
 * log holds every checkpoint the key ever signed from this store.
 */
export interface SignedCheckpointRecord {
  /** The checkpoint origin, `<engine name>/<session id>`. */
  readonly origin: string;
  /** Tree size, >= 1. */
  readonly size: number;
  /** RFC 6962 root over the first `size` entries, 64 lowercase hex. */
  readonly root: string;
  /** When it was first recorded, epoch milliseconds. */
  readonly signedAt: number;
  /**
   * Where the database was in its own history when the row was written
   * (stamped by the store inside the recording transaction; absent on rows
   * written before SQLite migration 7 / PostgreSQL migration 11, and on
   * stores that keep no history position).
   */
  readonly position?: StorePosition;
}

/**
 * A database's identity and position in its own history: what a failover, a
 * restored backup or another database changes.
 */
export interface StorePosition {
  /**
   * Which database: PostgreSQL's system identifier (decimal, from
   * `pg_control_system()`, kept by streaming standbys and `pg_basebackup`,
   * new for every `initdb`); for SQLite `sqlite:<store id>:<device>:<inode>`
   * (a random id made by migration 7, and the file that holds it: a restored
   * or moved copy is another file).
   */
  readonly system: string;
  /** PostgreSQL's timeline (a promotion or point-in-time recovery starts a new one); SQLite: 1. */
  readonly timeline: number;
  /** PostgreSQL's WAL insert position (`X/Y`) as the row was written; SQLite: the row's sequence number. */
  readonly lsn: string;
}

/** An event of the store's continuity record (append-only). */
export interface ContinuityEvent {
  /**
   * `refused`: a signer found the store on a history that lost what it had
   * signed (signing stays refused on this system and timeline);
   * `acknowledged`: an operator checked the store and let signing go on here.
   */
  readonly kind: 'refused' | 'acknowledged';
  /** The store's position when the event was recorded. */
  readonly position: StorePosition;
  /** Epoch milliseconds. */
  readonly at: number;
  /** What was found (and, for an acknowledgement, the operator's reason). */
  readonly detail: string;
  /** For `refused`: the signed checkpoint the store no longer holds. */
  readonly lost?: { readonly origin: string; readonly size: number; readonly root: string };
}

/** What a signer checks before each signature ({@link ContinuityStore.continuityState}). */
export interface ContinuityState {
  /** Where the store is now. */
  readonly current: StorePosition;
  /** The signing log's last row (the latest written, any origin), if any. */
  readonly last?: SignedCheckpointRecord;
  /** The last row this store object wrote, and whether the store still holds it (same origin, size and root). */
  readonly mine?: { readonly record: SignedCheckpointRecord; readonly held: boolean };
  /** Every continuity event, oldest first. */
  readonly events: readonly ContinuityEvent[];
}

/**
 * A store that knows its database's identity and history position
 * ({@link StorePosition}) and stamps every signing-log row with it.
 *
 * - `recordCheckpoint` MUST stamp a written row with the position inside the
 *   recording transaction, and answer it in `record.position`.
 * - `continuityState` MUST read `current`, `last`, `mine` and `events` from
 *   the database it would record on (one statement or transaction).
 * - Events MUST NOT be changed or deleted.
 */
export interface ContinuityStore {
  continuityState(): Promise<ContinuityState>;
  recordContinuityEvent(event: ContinuityEvent): Promise<void>;
  /** The latest signing-log row of every origin. */
  signingLogHeads(): Promise<SignedCheckpointRecord[]>;
}

/** Whether `store` keeps a continuity record. */
export function hasContinuity(store: object): store is ContinuityStore {
  return typeof (store as Partial<ContinuityStore>).continuityState === 'function' && typeof (store as Partial<ContinuityStore>).recordContinuityEvent === 'function';
}

/** The record a signer compared against: `undefined` when the origin had none. */
export type ExpectedLatest = { readonly size: number; readonly root: string } | undefined;

/** Outcome of {@link SigningLogStore.recordCheckpoint}. Refusals are results, not exceptions. */
export type RecordCheckpointOutcome =
  /** Recorded now, or already recorded with the same root (`duplicate`, `record` is the first one). */
  | { readonly ok: true; readonly duplicate: boolean; readonly record: SignedCheckpointRecord }
  /** Another root is already recorded for this (origin, size): signing would equivocate. */
  | { readonly ok: false; readonly reason: 'equivocation'; readonly record: SignedCheckpointRecord }
  /** The origin's latest record is no longer `expected`: check consistency against `latest` and try again. */
  | { readonly ok: false; readonly reason: 'latest-moved'; readonly latest: SignedCheckpointRecord | undefined };

/**
 * The signing log: every checkpoint the engine key has signed from this
 * store, append-only, keyed by (origin, size).
 *
 * - `recordCheckpoint` MUST be one atomic compare-and-record: if a record
 *   for (origin, size) exists it MUST write nothing and answer `duplicate`
 *   (same root) or `equivocation` (another root); otherwise, if the origin's
 *   largest-size record is not `expected` (by size and root, `undefined` =
 *   none), it MUST write nothing and answer `latest-moved`; otherwise it
 *   MUST write the record. Of concurrent calls for one (origin, size) with
 *   different roots, at most one MUST succeed — across processes sharing one
 *   database too.
 * - A recorded row MUST be durable when `recordCheckpoint` resolves `ok`
 *   (the caller signs only then), and MUST NOT be changed or deleted.
 */
export interface SigningLogStore {
  /**
   * Atomic compare-and-record of a checkpoint about to be signed; see the
   * interface contract. A store that keeps the engine log
   * ({@link EngineLogStore}) appends `logLeaf` (if given) in the same
   * transaction exactly when it writes the record.
   */
  recordCheckpoint(record: SignedCheckpointRecord, expected: ExpectedLatest, logLeaf?: Uint8Array): Promise<RecordCheckpointOutcome>;
  /** The origin's record of the largest size, if any. */
  latestCheckpoint(origin: string): Promise<SignedCheckpointRecord | undefined>;
  /** Every record of the origin, by size. */
  signedCheckpoints(origin: string): Promise<SignedCheckpointRecord[]>;
}

/**
 * The engine log's full hash tiles (C2SP tlog-tiles: 256 hashes of 32 bytes
 * at a level), kept so an engine starts from them and the leaves after them
 * rather than from every leaf. Tiles are derived from the leaves, written by
 * the log layer once each is complete.
 *
 * - `putEngineLogTile` MUST write the tile only if none is stored at
 *   (level, index), and MUST answer the bytes stored there afterwards (the
 *   caller compares; a store MUST NOT overwrite a stored tile).
 * - A stored tile MUST NOT be changed or deleted.
 * - `engineLogTileCounts()[level]` is one more than the largest index stored
 *   at that level (0 or absent for none). The log layer writes a level's
 *   tiles in index order, so that is the number of tiles stored there.
 */
export interface EngineLogTileStore {
  /** Per level from 0: one more than the largest stored tile index (the array ends at the last level with a tile). */
  engineLogTileCounts(): Promise<number[]>;
  /** The full tiles of `level` at indices `from <= i < to`, in order (fewer if fewer are stored). */
  engineLogTiles(level: number, from: number, to: number): Promise<Uint8Array[]>;
  /** Writes the tile unless one is stored at (level, index); resolves to the bytes stored there. */
  putEngineLogTile(level: number, index: number, hashes: Uint8Array): Promise<Uint8Array>;
}

/**
 * The engine log's leaves (docs/PROTOCOL.md §15), kept beside the signing
 * log: one sequence per database, positions 0, 1, 2, … The store keeps
 * bytes; the log layer (`src/log`) hashes them.
 *
 * - `createSession(genesis, head, logLeaf)` MUST append `logLeaf` in the
 *   transaction that creates the session, and MUST NOT append it when the
 *   session `exists`.
 * - `recordCheckpoint(record, expected, logLeaf)` MUST append `logLeaf` in
 *   the transaction that writes the record, and MUST NOT append it for a
 *   duplicate or a refusal.
 * - A leaf takes the next position: never a gap, never two leaves at one
 *   position, one order for every process sharing the database; a reader
 *   MUST NOT see a position before every lower one is visible.
 * - A leaf MUST NOT be changed or deleted, and is durable with its record.
 */
/** The key an engine log is signed with, as its store first recorded it (§15.3: one origin, one key, never changed). */
export interface EngineLogKeyRecord {
  /** The log's origin (= the key's note name). */
  readonly origin: string;
  /** The log key's verifier key (§11.1). */
  readonly verifierKey: string;
}

export interface EngineLogStore extends EngineLogTileStore {
  /**
   * Records (origin, verifierKey) as the key of this store's engine log unless
   * one is recorded, and answers the one recorded (the caller compares). A
   * store MUST NOT change or delete it.
   */
  claimEngineLogKey(origin: string, verifierKey: string): Promise<EngineLogKeyRecord>;
  /** Number of leaves. */
  engineLogSize(): Promise<number>;
  /** The leaves at positions `from <= i < to`, in order (fewer if the log is shorter). */
  engineLogLeaves(from: number, to: number): Promise<Uint8Array[]>;
}

/** Whether `store` keeps the engine log (its leaves and its tiles). */
export function hasEngineLog(store: object): store is EngineLogStore {
  const s = store as Partial<EngineLogStore>;
  return typeof s.engineLogSize === 'function' && typeof s.engineLogLeaves === 'function' && typeof s.engineLogTileCounts === 'function' && typeof s.engineLogTiles === 'function' && typeof s.putEngineLogTile === 'function' && typeof s.claimEngineLogKey === 'function';
}

/** One witness cosignature of a signed checkpoint, as the engine collected it. */
export interface CosignatureRecord {
  readonly origin: string;
  readonly size: number;
  /** The checkpoint's root, lowercase hex (the cosignature signs it). */
  readonly root: string;
  /** The witness (its cosigner key name). */
  readonly witness: string;
  /** The cosignature line as the witness sent it (`— <name> <base64>`). */
  readonly line: string;
}

/**
 * The engine's record of witness cosignatures (beside the signing log):
 * insert-only. `recordCosignature` keeps the first line for an (origin, size,
 * witness) and ignores later ones; `recordWitnessSize` adds that `witness`
 * cosigned `origin` at `size`, and `witnessSize` answers the largest.
 */
export interface CosignatureStore {
  recordCosignature(record: CosignatureRecord): Promise<void>;
  cosignatures(origin: string, size: number): Promise<CosignatureRecord[]>;
  recordWitnessSize(witness: string, origin: string, size: number): Promise<void>;
  witnessSize(witness: string, origin: string): Promise<number | undefined>;
}

/**
 * A transcript store.
 *
 * - `createSession` MUST be idempotent: creating an existing session id
 *   returns `'exists'` and changes nothing.
 * - `append` MUST be atomic: the entry, the new head (size, hash, frontier,
 *   phase) and every nonce reservation are written together or not at all.
 * - `append` MUST compare before it writes: if the stored head is not
 *   `expected`, it MUST write nothing and return `head-moved`; if any nonce is
 *   already reserved (in ANY session), it MUST write nothing and return
 *   `nonce-taken` naming the first owner. Of N concurrent appends on one head,
 *   exactly one MUST succeed.
 * - A store MUST NOT change or delete an entry once written, and MUST refuse
 *   (`sealed`) any append to a session whose phase is `sealed`.
 * - A store MUST refuse (`TALLY_STORE_MISUSE`) a request that is not one
 *   consistent step before it looks at its data (`./request.ts`): the entry
 *   at `expected.size`, a frame or turn at the index its ordinal gives, and
 *   the phase that kind of entry leaves.
 * - Reads MUST return exactly the bytes written.
 * - Across processes sharing one database the same guarantees MUST hold.
 * - It keeps the engine's signing log ({@link SigningLogStore}) beside the
 *   entries the signed checkpoints commit to: one source of truth.
 */
export interface TranscriptStore extends SigningLogStore {
  /** A short name for messages, e.g. `memory`, `sqlite:/path`. */
  readonly name: string;
  /** Creates a session from its genesis entry and initial head (and, in a store that keeps the engine log, appends `logLeaf` with it). */
  createSession(genesis: StoredEntry, head: SessionHead, logLeaf?: Uint8Array): Promise<'created' | 'exists'>;
  /** Atomic compare-and-append; see the interface contract. */
  append(request: AppendRequest): Promise<AppendOutcome>;
  /** The current head, or `undefined` for an unknown session. */
  loadHead(sessionId: string): Promise<SessionHead | undefined>;
  /**
   * The schema version the database records and the one this release
   * migrates to (stores without a schema omit it); for readiness checks.
   */
  schemaStatus?(): Promise<{ readonly version: number; readonly expected: number }>;
  /** Entries with `from <= index < to`, in order (fewer if the session is shorter). */
  readRange(sessionId: string, from: number, to: number): Promise<StoredEntry[]>;
  /** The frame or turn recorded for `ordinal`, if any. */
  readSlot(sessionId: string, kind: 'frame' | 'turn', ordinal: number): Promise<StoredEntry | undefined>;
  /** The first owner of `(agentId, nonce)`, if reserved. */
  nonceOwner(agentId: string, nonce: string): Promise<NonceOwner | undefined>;
  /**
   * Reserves `claims` for the entry the session will write at `index`, ahead
   * of that append (the referee reserves a judge call's rate slots and its
   * intent's nonce before it asks the judge). MUST be atomic: every claim or
   * none; if any is already reserved (in ANY session, by any owner) it MUST
   * write nothing and answer `nonce-taken` naming that claim's owner. Of
   * concurrent reservations of one claim, exactly one MUST succeed — across
   * processes sharing one database too. A reservation is never released,
   * whether or not the entry is ever written. Stores without it reserve
   * only in `append`.
   */
  reserve?(sessionId: string, index: number, claims: readonly NonceClaim[]): Promise<ReserveOutcome>;
  /** Every session id, in creation order. */
  listSessions(): Promise<string[]>;
  /** Releases resources; the store is unusable afterwards. */
  close(): Promise<void>;
  /**
   * Whether the store can commit right now (for a readiness probe); stores
   * without it are taken as healthy. Never throws.
   */
  health?(): Promise<StoreHealth>;
  /** How commits are replicated (replicated stores only; PostgreSQL). Throws on I/O. */
  replication?(): Promise<ReplicationStatus>;
}

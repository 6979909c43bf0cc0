/**
 * The embedded durable store: one SQLite file (better-sqlite3, WAL mode).
 * Several OS processes may share the file: every write transaction starts
 * with `BEGIN IMMEDIATE` (it takes the write lock before reading the head it
 * compares), and `busy_timeout` makes a second writer wait instead of fail.
 * SQLite's lock is not fair (a waiting process sleeps and retries), so under
 * sustained writes from many processes prefer PostgreSQL.
 *
 * Appends are group-committed: those arriving in the same event-loop turn
 * are compared and applied one by one inside ONE transaction (each in its
 * own savepoint, each answered on its own), so one fsync covers them all.
 *
 * The connection, its statements and transactions are in connection.ts; the
 * write guard that distrusts it after a failed write and recovers it, in
 * guard.ts.
 */
import { TallyError } from '../../protocol/errors.js';
import type {
  AppendOutcome,
  AppendRequest,
  ExpectedLatest,
  NonceOwner,
  ReserveOutcome,
  NonceClaim,
  RecordCheckpointOutcome,
  SessionHead,
  StoreHealth,
  SignedCheckpointRecord,
  ContinuityEvent,
  ContinuityState,
  ContinuityStore,
  CosignatureRecord,
  CosignatureStore,
  EngineLogKeyRecord,
  EngineLogStore,
  EngineLogTileStore,
  StoredEntry,
  TranscriptStore,
} from '../types.js';
import { checkAppendRequest, checkLogLeaf, checkNewSession, checkTile } from '../request.js';
import { checkSignedRecord, toEntry, toOwner } from '../rows.js';
import { activeSpan, recordBatch } from '../../telemetry/index.js';
import type { Settled } from './connection.js';
import { ioError, WriteGuard } from './guard.js';
import { SQLITE_SCHEMA_VERSION } from './migrations.js';

/** Options of {@link SqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * `PRAGMA synchronous`. `FULL` (the default) fsyncs the write-ahead log on
   * every commit: an acknowledged append survives power loss. `NORMAL` in WAL
   * mode fsyncs only at checkpoints: several times faster per commit, and a
   * power loss (or OS crash) can lose the last acknowledged commits — but it
   * never corrupts the database, and a crash of the process alone loses
   * nothing. Choose `NORMAL` only if losing the last seconds of a transcript
   * after a power cut is acceptable.
   */
  readonly synchronous?: 'FULL' | 'NORMAL';
  /** How long a writer waits for another process's write lock, in ms (default 5000). Blocks the thread while waiting. */
  readonly busyTimeoutMs?: number;
  /**
   * Group commit (default `true`): appends that arrive while the store is
   * busy (in the same event-loop turn) are applied in ONE `BEGIN IMMEDIATE`
   * transaction, each still compared and answered on its own; one fsync
   * then covers them all. `false` commits every append separately.
   */
  readonly groupCommit?: boolean;
  /**
   * SQLite page cache of the store's connection, in KiB (`PRAGMA cache_size = -N`;
   * default: the driver's, 16 MiB). A long-running writer that only appends and
   * reads recent entries (the demo) needs far less; the cache is process memory.
   */
  readonly cacheKiB?: number;
  /**
   * After a write failed below SQLite, the least time between two recovery
   * attempts (reopen, `quick_check` over the whole file, one no-op write)
   * while they fail, in ms (default 1000). Calls in between (a `/readyz`
   * poll, an append, a read) get the last attempt's answer without touching
   * the file; the first after the interval tries again, so recovery is seen
   * within about one interval.
   */
  readonly recoveryIntervalMs?: number;
}

/** Counters of a {@link SqliteStore} since it was opened. */
export interface SqliteStoreStats {
  /** Appends answered (any outcome). */
  readonly appends: number;
  /** Write transactions committed for appends (equal to `appends` without group commit). */
  readonly commits: number;
  /** Connections reopened after a failed write. */
  readonly reopens: number;
}

interface Queued {
  readonly request: AppendRequest;
  readonly resolve: (o: AppendOutcome) => void;
  /** The caller's append span (telemetry), to note the batch size on. */
  readonly span: ReturnType<typeof activeSpan>;
  readonly reject: (e: unknown) => void;
}

/**
 * A {@link TranscriptStore} in one SQLite file. Opening runs any pending
 * numbered migrations (a file written by an older release is brought
 * forward; a file from a newer release is refused).
 *
 * @example
 * const store = new SqliteStore('.tally/tally.db', { synchronous: 'FULL' });
 * const engine = createEngine({ store });
 * // …
 * await store.close();
 */
export class SqliteStore implements TranscriptStore, CosignatureStore, EngineLogStore, EngineLogTileStore, ContinuityStore {
  readonly name: string;
  /** The database file. */
  readonly path: string;
  private readonly groupCommit: boolean;
  private readonly guard: WriteGuard;
  private queue: Queued[] = [];
  private scheduled = false;
  private closed = false;
  private appends = 0;
  private commits = 0;
  /** The last signing-log row this store object wrote (the signer's own evidence across a replaced file). */
  private mine: SignedCheckpointRecord | undefined;

  /** Opens (creating if needed) and migrates the database at `path`. Throws `TallyError` on I/O or a too-new schema. */
  constructor(path: string, options: SqliteStoreOptions = {}) {
    const synchronous = options.synchronous ?? 'FULL';
    if (synchronous !== 'FULL' && synchronous !== 'NORMAL') throw new TypeError(`synchronous must be 'FULL' or 'NORMAL', got ${String(synchronous)}`);
    const busy = options.busyTimeoutMs ?? 5000;
    if (!Number.isSafeInteger(busy) || busy < 0) throw new RangeError(`busyTimeoutMs must be a non-negative integer, got ${busy}`);
    const cacheKiB = options.cacheKiB;
    if (cacheKiB !== undefined && (!Number.isSafeInteger(cacheKiB) || cacheKiB < 1)) throw new RangeError(`cacheKiB must be a positive integer, got ${cacheKiB}`);
    this.path = path;
    this.name = `sqlite:${path}`;
    this.groupCommit = options.groupCommit ?? true;
    this.guard = new WriteGuard(path, { synchronous, busyTimeoutMs: busy, ...(cacheKiB === undefined ? {} : { cacheKiB }) }, options.recoveryIntervalMs === undefined ? {} : { intervalMs: options.recoveryIntervalMs });
  }

  /**
   * Whether the store can commit right now. Cheap while the last write
   * succeeded. After a write failed below SQLite it tries to recover
   * (close, reopen, `quick_check`, one no-op write that must reach the disk)
   * and reports the failure until that succeeds — at most one attempt per
   * `recoveryIntervalMs`, the last answer in between. A readiness probe calls this.
   */
  async health(): Promise<StoreHealth> {
    if (this.closed) return { ok: false, code: 'TALLY_STORE_CLOSED', message: `${this.name} is closed.` };
    return this.guard.health();
  }

  /** Append counters (to see group commit at work). */
  get stats(): SqliteStoreStats {
    return { appends: this.appends, commits: this.commits, reopens: this.guard.reopens };
  }

  /** The schema version recorded in the file. */
  schemaVersion(): number {
    this.live();
    return this.guard.connection.schemaVersion();
  }

  async createSession(genesis: StoredEntry, head: SessionHead, logLeaf?: Uint8Array): Promise<'created' | 'exists'> {
    this.live();
    checkNewSession(genesis, head);
    checkLogLeaf(logLeaf);
    return this.guard.write('create a session', (c) => c.createTx(genesis, head, logLeaf));
  }

  append(request: AppendRequest): Promise<AppendOutcome> {
    try {
      this.live();
      checkAppendRequest(request);
    } catch (e) {
      return Promise.reject(e);
    }
    if (!this.groupCommit) {
      try {
        const [settled] = this.commitBatch([request]);
        recordBatch(1, [activeSpan()]);
        return settled!.ok ? Promise.resolve(settled!.outcome) : Promise.reject(settled!.error);
      } catch (e) {
        return Promise.reject(e);
      }
    }
    return new Promise<AppendOutcome>((resolve, reject) => {
      this.queue.push({ request, resolve, reject, span: activeSpan() });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** {@inheritDoc TranscriptStore.schemaStatus} */
  async schemaStatus(): Promise<{ readonly version: number; readonly expected: number }> {
    this.live();
    const version = this.guard.io('read the schema version', (c) => c.schemaVersion());
    return { version, expected: SQLITE_SCHEMA_VERSION };
  }

  async loadHead(sessionId: string): Promise<SessionHead | undefined> {
    this.live();
    const r = this.guard.io('read a head', (c) => c.q.head.get(sessionId));
    if (!r) return undefined;
    return { sessionId, size: r.size, head: r.head, frontier: parseFrontier(sessionId, r.frontier), phase: r.phase };
  }

  async readRange(sessionId: string, from: number, to: number): Promise<StoredEntry[]> {
    this.live();
    if (to <= from) return [];
    return this.guard.io('read entries', (c) => c.q.range.all(sessionId, Math.max(0, from), to)).map(toEntry);
  }

  async readSlot(sessionId: string, kind: 'frame' | 'turn', ordinal: number): Promise<StoredEntry | undefined> {
    this.live();
    const r = this.guard.io('read a slot', (c) => c.q.slot.get(sessionId, kind, ordinal));
    return r ? toEntry(r) : undefined;
  }

  async nonceOwner(agentId: string, nonce: string): Promise<NonceOwner | undefined> {
    this.live();
    const r = this.guard.io('read a nonce', (c) => c.q.owner.get(agentId, nonce));
    return r ? toOwner(r) : undefined;
  }

  async reserve(sessionId: string, index: number, claims: readonly NonceClaim[]): Promise<ReserveOutcome> {
    this.live();
    return this.guard.write('reserve nonces', (c) => c.reserveTx(sessionId, index, claims));
  }

  async listSessions(): Promise<string[]> {
    this.live();
    return this.guard.io('list sessions', (c) => c.q.list.all()).map((r) => r.id);
  }

  /** Records a checkpoint in the signing log (see `SigningLogStore`); fsynced even under `synchronous: 'NORMAL'`. */
  async recordCheckpoint(record: SignedCheckpointRecord, expected: ExpectedLatest, logLeaf?: Uint8Array): Promise<RecordCheckpointOutcome> {
    this.live();
    checkSignedRecord(record, (m) => new TallyError('TALLY_STORE_MISUSE', m));
    checkLogLeaf(logLeaf);
    const out = this.guard.write('record a signed checkpoint', (c) => c.signing.record(record, expected, logLeaf));
    if (out.ok && !out.duplicate) this.mine = out.record;
    return out;
  }

  /** {@inheritDoc ContinuityStore.continuityState} */
  async continuityState(): Promise<ContinuityState> {
    this.live();
    return this.guard.io('read the store position', (c) => c.continuity.state(this.mine));
  }

  /** {@inheritDoc ContinuityStore.recordContinuityEvent} */
  async recordContinuityEvent(event: ContinuityEvent): Promise<void> {
    this.live();
    this.guard.write('record a continuity event', (c) => c.continuity.record(event));
  }

  /** {@inheritDoc ContinuityStore.signingLogHeads} */
  async signingLogHeads(): Promise<SignedCheckpointRecord[]> {
    this.live();
    return this.guard.io('read the signing log', (c) => c.continuity.heads());
  }

  async engineLogSize(): Promise<number> {
    this.live();
    return this.guard.io('read the engine log', (c) => c.engineLog.size());
  }

  async engineLogLeaves(from: number, to: number): Promise<Uint8Array[]> {
    this.live();
    return this.guard.io('read the engine log', (c) => c.engineLog.range(from, to));
  }

  /** {@inheritDoc EngineLogTileStore.engineLogTileCounts} */
  async engineLogTileCounts(): Promise<number[]> {
    this.live();
    return this.guard.io('read the engine log tiles', (c) => c.engineLog.tileCounts());
  }

  /** {@inheritDoc EngineLogTileStore.engineLogTiles} */
  async engineLogTiles(level: number, from: number, to: number): Promise<Uint8Array[]> {
    this.live();
    return this.guard.io('read the engine log tiles', (c) => c.engineLog.tiles(level, from, to));
  }

  /** {@inheritDoc EngineLogStore.claimEngineLogKey} */
  async claimEngineLogKey(origin: string, verifierKey: string): Promise<EngineLogKeyRecord> {
    this.live();
    return this.guard.write('record the engine log key', (c) => c.engineLog.claimKey(origin, verifierKey));
  }

  /** {@inheritDoc EngineLogTileStore.putEngineLogTile} */
  async putEngineLogTile(level: number, index: number, hashes: Uint8Array): Promise<Uint8Array> {
    this.live();
    checkTile(level, index, hashes);
    return this.guard.write('write an engine log tile', (c) => c.engineLog.putTile(level, index, hashes));
  }

  async latestCheckpoint(origin: string): Promise<SignedCheckpointRecord | undefined> {
    this.live();
    return this.guard.io('read the signing log', (c) => c.signing.latest(origin));
  }

  async signedCheckpoints(origin: string): Promise<SignedCheckpointRecord[]> {
    this.live();
    return this.guard.io('read the signing log', (c) => c.signing.all(origin));
  }

  /** Keeps a collected cosignature (the first line per origin, size and witness). */
  async recordCosignature(r: CosignatureRecord): Promise<void> {
    this.live();
    this.guard.write('record a cosignature', (c) => c.q.insertCosignature.run(r.origin, r.size, r.root, r.witness, r.line));
  }

  async cosignatures(origin: string, size: number): Promise<CosignatureRecord[]> {
    this.live();
    return this.guard.io('read cosignatures', (c) => c.q.cosignatures.all(origin, size));
  }

  async recordWitnessSize(witness: string, origin: string, size: number): Promise<void> {
    this.live();
    this.guard.write('record a witness size', (c) => c.q.insertWitnessSize.run(witness, origin, size));
  }

  async witnessSize(witness: string, origin: string): Promise<number | undefined> {
    this.live();
    const r = this.guard.io('read witness sizes', (c) => c.q.witnessSize.get(witness, origin));
    return r?.size ?? undefined;
  }

  /** Commits any queued appends, then closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    try {
      this.guard.connection.db.close();
    } catch {
      // Already closed by a failed recovery.
    }
  }

  private live(): void {
    if (this.closed) throw new TallyError('TALLY_STORE_CLOSED', `${this.name} is closed.`);
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    let settled: Settled[];
    try {
      settled = this.commitBatch(batch.map((q) => q.request));
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    recordBatch(batch.length, batch.map((q) => q.span));
    settled.forEach((s, i) => (s.ok ? batch[i]!.resolve(s.outcome) : batch[i]!.reject(s.error)));
  }

  /** One IMMEDIATE transaction for the whole batch; throws only if the transaction itself failed. */
  private commitBatch(batch: readonly AppendRequest[]): Settled[] {
    const settled = this.guard.write(`commit ${batch.length} append(s)`, (c) => c.batchTx(batch));
    this.commits++;
    this.appends += batch.length;
    return settled.map((s) => {
      if (s.ok) return s;
      if (s.error instanceof TallyError) return { ok: false, error: s.error };
      const error = ioError(this.path, 'append', s.error);
      this.guard.noteFailure(error);
      return { ok: false, error };
    });
  }
}

function parseFrontier(sessionId: string, text: string): string[] {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    v = undefined;
  }
  if (!Array.isArray(v) || !v.every((h): h is string => typeof h === 'string')) {
    throw new TallyError('TALLY_STORE_CORRUPT', `The stored Merkle frontier of session ${sessionId.slice(0, 16)}… is not a list of hashes.`);
  }
  return v;
}

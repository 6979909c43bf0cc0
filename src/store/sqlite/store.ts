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
 */
import Database from 'better-sqlite3';
import { TallyError } from '../../protocol/errors.js';
import type { SessionPhase } from '../../protocol/index.js';
import type {
  AppendOutcome,
  AppendRequest,
  ExpectedLatest,
  NonceClaim,
  NonceOwner,
  RecordCheckpointOutcome,
  SessionHead,
  StoreHealth,
  SignedCheckpointRecord,
  CosignatureRecord,
  CosignatureStore,
  StoredEntry,
  TranscriptStore,
} from '../types.js';
import { checkSignedRecord, toEntry, toOwner, type EntryRow, type OwnerRow } from '../rows.js';
import { SqliteSigningLog } from './signing-log.js';
import { activeSpan, recordBatch } from '../../telemetry/index.js';
import { assertSameFile, fileIdentity, probeWrite, quickCheck, type FileIdentity } from './recovery.js';
import { SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION, SQLITE_VERSION_TABLE_SQL } from './migrations.js';

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

interface HeadRow {
  readonly size: number;
  readonly head: string;
  readonly frontier: string;
  readonly phase: SessionPhase;
}

interface Queued {
  readonly request: AppendRequest;
  readonly resolve: (o: AppendOutcome) => void;
  /** The caller's append span (telemetry), to note the batch size on. */
  readonly span: ReturnType<typeof activeSpan>;
  readonly reject: (e: unknown) => void;
}

type Settled = { readonly ok: true; readonly outcome: AppendOutcome } | { readonly ok: false; readonly error: unknown };

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
export class SqliteStore implements TranscriptStore, CosignatureStore {
  readonly name: string;
  /** The database file. */
  readonly path: string;
  private db!: Database.Database;
  private readonly synchronous: 'FULL' | 'NORMAL';
  private readonly busyTimeoutMs: number;
  private readonly groupCommit: boolean;
  /** The device and inode of the file this connection opened (a replaced or removed file is noticed before a commit). */
  private identity!: FileIdentity;
  /** Set when a write failed below SQLite (I/O, full disk, failed fsync): the connection is not trusted again until {@link recover} succeeds. */
  private failure: { readonly code: string; readonly message: string; readonly at: string } | undefined;
  /** True when the connection was opened (and quick-checked) after the last failed write: reads may use it; writes still need the probe. */
  private fresh = true;
  private queue: Queued[] = [];
  private scheduled = false;
  private closed = false;
  private appends = 0;
  private commits = 0;
  private reopens = 0;
  private q!: {
    readonly head: Database.Statement<[string], HeadRow>;
    readonly owner: Database.Statement<[string, string], OwnerRow>;
    readonly insertSession: Database.Statement<[string, number, string, string, string]>;
    readonly insertEntry: Database.Statement<[string, number, string, string, number | null, Buffer]>;
    readonly insertNonce: Database.Statement<[string, string, string, string, number]>;
    readonly updateHead: Database.Statement<[number, string, string, string, string, number, string]>;
    readonly range: Database.Statement<[string, number, number], EntryRow>;
    readonly slot: Database.Statement<[string, string, number], EntryRow>;
    readonly list: Database.Statement<[], { readonly id: string }>;
  };
  private signing!: SqliteSigningLog;
  private createTx!: (genesis: StoredEntry, head: SessionHead) => 'created' | 'exists';
  private applyOneTx!: (request: AppendRequest) => AppendOutcome;
  private batchTx!: (batch: readonly AppendRequest[]) => Settled[];

  /** Opens (creating if needed) and migrates the database at `path`. Throws `TallyError` on I/O or a too-new schema. */
  constructor(path: string, options: SqliteStoreOptions = {}) {
    const synchronous = options.synchronous ?? 'FULL';
    if (synchronous !== 'FULL' && synchronous !== 'NORMAL') throw new TypeError(`synchronous must be 'FULL' or 'NORMAL', got ${String(synchronous)}`);
    const busy = options.busyTimeoutMs ?? 5000;
    if (!Number.isSafeInteger(busy) || busy < 0) throw new RangeError(`busyTimeoutMs must be a non-negative integer, got ${busy}`);
    this.path = path;
    this.name = `sqlite:${path}`;
    this.synchronous = synchronous;
    this.busyTimeoutMs = busy;
    this.groupCommit = options.groupCommit ?? true;
    this.connect(false);
  }

  /**
   * Opens a connection (the first may create the file; a reopen never does:
   * a removed database is an outage, not an empty store), migrates, and
   * prepares every statement.
   */
  private connect(mustExist: boolean): void {
    const path = this.path;
    let db: Database.Database;
    try {
      db = new Database(path, { fileMustExist: mustExist });
    } catch (cause) {
      throw new TallyError(mustExist ? 'TALLY_STORE_IO' : 'TALLY_STORE_OPEN', `Cannot open SQLite database ${path}.`, { details: String(cause), cause });
    }
    try {
      db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${this.synchronous}`);
      db.pragma('foreign_keys = ON');
      migrate(db, path);
      this.identity = fileIdentity(path);
    } catch (cause) {
      db.close();
      if (cause instanceof TallyError) throw cause;
      throw new TallyError(mustExist ? 'TALLY_STORE_IO' : 'TALLY_STORE_OPEN', `Cannot open SQLite database ${path}.`, { details: String(cause), cause });
    }
    this.db = db;
    this.q = {
      head: db.prepare('SELECT size, head, frontier, phase FROM sessions WHERE id = ?'),
      owner: db.prepare('SELECT intent_hash, session_id, idx FROM nonces WHERE agent_id = ? AND nonce = ?'),
      insertSession: db.prepare('INSERT OR IGNORE INTO sessions (id, size, head, frontier, phase) VALUES (?, ?, ?, ?, ?)'),
      insertEntry: db.prepare('INSERT INTO entries (session_id, idx, hash, kind, ordinal, bytes) VALUES (?, ?, ?, ?, ?, ?)'),
      insertNonce: db.prepare('INSERT INTO nonces (agent_id, nonce, intent_hash, session_id, idx) VALUES (?, ?, ?, ?, ?)'),
      updateHead: db.prepare('UPDATE sessions SET size = ?, head = ?, frontier = ?, phase = ? WHERE id = ? AND size = ? AND head = ?'),
      range: db.prepare('SELECT idx, hash, kind, ordinal, bytes FROM entries WHERE session_id = ? AND idx >= ? AND idx < ? ORDER BY idx'),
      slot: db.prepare('SELECT idx, hash, kind, ordinal, bytes FROM entries WHERE session_id = ? AND kind = ? AND ordinal = ?'),
      list: db.prepare('SELECT id FROM sessions ORDER BY seq'),
    };
    this.signing = new SqliteSigningLog(db, this.synchronous);
    this.createTx = db.transaction((genesis: StoredEntry, head: SessionHead) => {
      const r = this.q.insertSession.run(head.sessionId, head.size, head.head, JSON.stringify(head.frontier), head.phase);
      if (r.changes === 0) return 'exists' as const;
      this.q.insertEntry.run(head.sessionId, genesis.index, genesis.hash, genesis.kind, genesis.ordinal ?? null, blob(genesis.bytes));
      return 'created' as const;
    }).immediate;
    // Nested inside batchTx this runs as a SAVEPOINT: a request that throws
    // half-way leaves nothing behind and the others in the batch still commit.
    this.applyOneTx = db.transaction((request: AppendRequest) => this.applyOne(request));
    this.batchTx = db.transaction((batch: readonly AppendRequest[]) =>
      batch.map((request): Settled => {
        try {
          return { ok: true, outcome: this.applyOneTx(request) };
        } catch (error) {
          return { ok: false, error };
        }
      }),
    ).immediate;
  }

  /**
   * Whether the store can commit right now. Cheap while the last write
   * succeeded. After a write failed below SQLite it tries {@link recover}
   * (close, reopen, `quick_check`, one no-op write that must reach the disk)
   * and reports the failure until that succeeds. A readiness probe calls this.
   */
  async health(): Promise<StoreHealth> {
    if (this.closed) return { ok: false, code: 'TALLY_STORE_CLOSED', message: `${this.name} is closed.` };
    if (this.failure === undefined) return { ok: true };
    try {
      this.recover();
      return { ok: true };
    } catch (e) {
      const code = e instanceof TallyError ? e.code : 'TALLY_STORE_IO';
      return { ok: false, code, message: `${this.failure?.message ?? String(e)} (since ${this.failure?.at ?? '?'})` };
    }
  }

  /**
   * After a failed write the connection (and the page cache behind it) is not
   * trusted: close it, open the file again (it must still exist), check the
   * b-trees from disk (`PRAGMA quick_check`); reads may then go on. Before
   * anything is acknowledged again (`probe`), one no-op write must be
   * written and fsync'd. Throws a transient `TALLY_STORE_IO` while the fault
   * lasts.
   */
  private recover(probe = true): void {
    if (this.failure === undefined) return;
    if (!this.fresh) {
      try {
        this.db.close();
      } catch {
        // The old connection is abandoned either way.
      }
      this.connect(true);
      this.reopens++;
      this.io0('check the file', () => quickCheck(this.db, this.path));
      this.fresh = true;
    }
    if (!probe) return;
    try {
      this.io0('write after reopening', () => probeWrite(this.db));
    } catch (e) {
      // A connection whose write failed is not trusted either: SQLite may have
      // opened a file it could not write read-only, and stays so until reopened.
      this.fresh = false;
      throw e;
    }
    this.failure = undefined;
  }

  private io0<T>(what: string, fn: () => T): T {
    try {
      return fn();
    } catch (cause) {
      throw ioError(this.path, what, cause);
    }
  }

  /** Marks the connection untrusted after a failed write (anything but lock contention or misuse). */
  private noteFailure(error: TallyError): void {
    if (error.code === 'TALLY_STORE_BUSY' || error.code === 'TALLY_STORE_MISUSE') return;
    this.fresh = false;
    this.failure = { code: error.code, message: error.message + (error.details ? ` ${String(error.details)}` : ''), at: new Date().toISOString() };
  }

  /** Append counters (to see group commit at work). */
  get stats(): SqliteStoreStats {
    return { appends: this.appends, commits: this.commits, reopens: this.reopens };
  }

  /** The schema version recorded in the file. */
  schemaVersion(): number {
    this.live();
    const r = this.db.prepare('SELECT MAX(version) AS v FROM tally_schema').get() as { v: number | null };
    return r.v ?? 0;
  }

  async createSession(genesis: StoredEntry, head: SessionHead): Promise<'created' | 'exists'> {
    this.live();
    if (genesis.index !== 0 || head.size !== 1 || head.head !== genesis.hash) {
      throw new TallyError('TALLY_STORE_MISUSE', 'createSession needs the genesis entry (index 0) and the head of size 1 it makes.');
    }
    return this.write('create a session', () => this.createTx(genesis, head));
  }

  append(request: AppendRequest): Promise<AppendOutcome> {
    try {
      this.live();
      checkRequest(request);
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
    const r = this.io('read the schema version', () => this.db.prepare('SELECT MAX(version) AS v FROM tally_schema').get() as { v: number | null });
    return { version: r.v ?? 0, expected: SQLITE_SCHEMA_VERSION };
  }

  async loadHead(sessionId: string): Promise<SessionHead | undefined> {
    this.live();
    const r = this.io('read a head', () => this.q.head.get(sessionId));
    if (!r) return undefined;
    return { sessionId, size: r.size, head: r.head, frontier: parseFrontier(sessionId, r.frontier), phase: r.phase };
  }

  async readRange(sessionId: string, from: number, to: number): Promise<StoredEntry[]> {
    this.live();
    if (to <= from) return [];
    return this.io('read entries', () => this.q.range.all(sessionId, Math.max(0, from), to)).map(toEntry);
  }

  async readSlot(sessionId: string, kind: 'frame' | 'turn', ordinal: number): Promise<StoredEntry | undefined> {
    this.live();
    const r = this.io('read a slot', () => this.q.slot.get(sessionId, kind, ordinal));
    return r ? toEntry(r) : undefined;
  }

  async nonceOwner(agentId: string, nonce: string): Promise<NonceOwner | undefined> {
    this.live();
    const r = this.io('read a nonce', () => this.q.owner.get(agentId, nonce));
    return r ? toOwner(r) : undefined;
  }

  async listSessions(): Promise<string[]> {
    this.live();
    return this.io('list sessions', () => this.q.list.all()).map((r) => r.id);
  }

  /** Records a checkpoint in the signing log (see `SigningLogStore`); fsynced even under `synchronous: 'NORMAL'`. */
  async recordCheckpoint(record: SignedCheckpointRecord, expected: ExpectedLatest): Promise<RecordCheckpointOutcome> {
    this.live();
    checkSignedRecord(record, (m) => new TallyError('TALLY_STORE_MISUSE', m));
    return this.write('record a signed checkpoint', () => this.signing.record(record, expected));
  }

  async latestCheckpoint(origin: string): Promise<SignedCheckpointRecord | undefined> {
    this.live();
    return this.io('read the signing log', () => this.signing.latest(origin));
  }

  async signedCheckpoints(origin: string): Promise<SignedCheckpointRecord[]> {
    this.live();
    return this.io('read the signing log', () => this.signing.all(origin));
  }

  /** Keeps a collected cosignature (the first line per origin, size and witness). */
  async recordCosignature(r: CosignatureRecord): Promise<void> {
    this.live();
    this.write('record a cosignature', () => this.db.prepare('INSERT OR IGNORE INTO cosignatures (origin, size, root, witness, line) VALUES (?, ?, ?, ?, ?)').run(r.origin, r.size, r.root, r.witness, r.line));
  }

  async cosignatures(origin: string, size: number): Promise<CosignatureRecord[]> {
    this.live();
    return this.io('read cosignatures', () => this.db.prepare<[string, number], CosignatureRecord>('SELECT origin, size, root, witness, line FROM cosignatures WHERE origin = ? AND size = ? ORDER BY witness').all(origin, size));
  }

  async recordWitnessSize(witness: string, origin: string, size: number): Promise<void> {
    this.live();
    this.write('record a witness size', () => this.db.prepare('INSERT OR IGNORE INTO witness_sizes (witness, origin, size) VALUES (?, ?, ?)').run(witness, origin, size));
  }

  async witnessSize(witness: string, origin: string): Promise<number | undefined> {
    this.live();
    const r = this.io('read witness sizes', () => this.db.prepare<[string, string], { size: number | null }>('SELECT max(size) AS size FROM witness_sizes WHERE witness = ? AND origin = ?').get(witness, origin));
    return r?.size ?? undefined;
  }

  /** Commits any queued appends, then closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    try {
      this.db.close();
    } catch {
      // Already closed by a failed recovery.
    }
  }

  private live(): void {
    if (this.closed) throw new TallyError('TALLY_STORE_CLOSED', `${this.name} is closed.`);
  }

  private io<T>(what: string, fn: () => T): T {
    this.recover(false);
    try {
      return fn();
    } catch (cause) {
      throw ioError(this.path, what, cause);
    }
  }

  /** A write transaction: only on a trusted connection to the file still at `path`; a failure leaves the connection untrusted. */
  private write<T>(what: string, fn: () => T): T {
    try {
      this.recover();
      // Refuse to commit into a file that is no longer the one at `path` (removed or replaced).
      assertSameFile(this.path, this.identity);
      return fn();
    } catch (cause) {
      const error = ioError(this.path, what, cause);
      this.noteFailure(error);
      throw error;
    }
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
    const settled = this.write(`commit ${batch.length} append(s)`, () => this.batchTx(batch));
    this.commits++;
    this.appends += batch.length;
    return settled.map((s) => {
      if (s.ok) return s;
      if (s.error instanceof TallyError) return { ok: false, error: s.error };
      const error = ioError(this.path, 'append', s.error);
      this.noteFailure(error);
      return { ok: false, error };
    });
  }

  // Runs inside the write transaction: compare first, write only if everything matches.
  private applyOne(req: AppendRequest): AppendOutcome {
    const row = this.q.head.get(req.sessionId);
    if (!row) return { ok: false, reason: 'unknown-session' };
    if (row.phase === 'sealed') return { ok: false, reason: 'sealed' };
    if (row.size !== req.expected.size || row.head !== req.expected.head || req.entry.index !== row.size) return { ok: false, reason: 'head-moved' };
    const nonces = distinctNonces(req.nonces);
    for (const n of nonces) {
      const o = this.q.owner.get(n.agentId, n.nonce);
      if (o) return { ok: false, reason: 'nonce-taken', agentId: n.agentId, nonce: n.nonce, owner: toOwner(o) };
    }
    const e = req.entry;
    this.q.insertEntry.run(req.sessionId, e.index, e.hash, e.kind, e.ordinal ?? null, blob(e.bytes));
    for (const n of nonces) this.q.insertNonce.run(n.agentId, n.nonce, n.intentHash, req.sessionId, e.index);
    const next = req.next;
    const u = this.q.updateHead.run(next.size, next.head, JSON.stringify(next.frontier), next.phase, req.sessionId, row.size, row.head);
    if (u.changes !== 1) throw new TallyError('TALLY_STORE_IO', 'The session head changed inside its own write transaction.');
    return { ok: true };
  }
}

function migrate(db: Database.Database, path: string): void {
  db.transaction(() => {
    db.exec(SQLITE_VERSION_TABLE_SQL);
    const current = (db.prepare('SELECT MAX(version) AS v FROM tally_schema').get() as { v: number | null }).v ?? 0;
    if (current > SQLITE_SCHEMA_VERSION) {
      throw new TallyError('TALLY_STORE_SCHEMA_TOO_NEW', `SQLite database ${path} has schema version ${current}; this release understands up to ${SQLITE_SCHEMA_VERSION}.`);
    }
    const record = db.prepare('INSERT INTO tally_schema (version, name, applied_at) VALUES (?, ?, ?)');
    for (const m of SQLITE_MIGRATIONS) {
      if (m.version <= current) continue;
      db.exec(m.sql);
      record.run(m.version, m.name, new Date().toISOString());
    }
  }).immediate();
}

/** Misuse checks shared by every append: the request must describe one consistent step. */
function checkRequest(r: AppendRequest): void {
  const e = r.entry;
  if (e.index !== r.expected.size || r.next.size !== r.expected.size + 1 || r.next.head !== e.hash || r.next.sessionId !== r.sessionId) {
    throw new TallyError('TALLY_STORE_MISUSE', 'An append request must add entry `expected.size` and produce the head (size + 1, entry hash) of the same session.');
  }
}

function distinctNonces(claims: readonly NonceClaim[]): NonceClaim[] {
  const seen = new Set<string>();
  const out: NonceClaim[] = [];
  for (const c of claims) {
    const k = `${c.agentId.length}:${c.agentId}:${c.nonce}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(c);
  }
  return out;
}

function blob(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
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

function ioError(path: string, what: string, cause: unknown): TallyError {
  if (cause instanceof TallyError) return cause;
  const code = (cause as { code?: unknown } | null)?.code;
  const busy = code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
  return new TallyError(busy ? 'TALLY_STORE_BUSY' : 'TALLY_STORE_IO', `SQLite could not ${what} (${path}).`, { details: String(cause), cause });
}

/**
 * One connection of a SQLite store to its file: opened with the store's
 * pragmas, migrated, with every statement prepared once (a reopened
 * connection prepares its own) and the write
 * transactions (create a session; a group-committed batch of appends, each in
 * its own savepoint) bound to it. The store replaces the whole connection
 * when it reopens the file after a failed write (guard.ts).
 */
import Database from 'better-sqlite3';
import { TallyError } from '../../protocol/errors.js';
import type { SessionPhase } from '../../protocol/index.js';
import type { AppendOutcome, AppendRequest, CosignatureRecord, NonceClaim, ReserveOutcome, SessionHead, StoredEntry } from '../types.js';
import { toOwner, type EntryRow, type OwnerRow } from '../rows.js';
import { SqliteSigningLog } from './signing-log.js';
import { SqliteContinuity } from './continuity.js';
import { EngineLogStatements } from './engine-log.js';
import { fileIdentity, type FileIdentity } from './recovery.js';
import { SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION, SQLITE_VERSION_TABLE_SQL } from './migrations.js';

/** A session's row in `sessions`. */
export interface HeadRow {
  readonly size: number;
  readonly head: string;
  readonly frontier: string;
  readonly phase: SessionPhase;
}

/** How one append of a batch ended: its outcome, or what it threw (its savepoint rolled back). */
export type Settled = { readonly ok: true; readonly outcome: AppendOutcome } | { readonly ok: false; readonly error: unknown };

/** The pragmas a connection is opened with. */
export interface ConnectionSettings {
  readonly synchronous: 'FULL' | 'NORMAL';
  readonly busyTimeoutMs: number;
  /** `PRAGMA cache_size` in KiB (absent: the driver's default). */
  readonly cacheKiB?: number;
}

/** The prepared statements of a connection. */
export interface Statements {
  readonly head: Database.Statement<[string], HeadRow>;
  readonly owner: Database.Statement<[string, string], OwnerRow>;
  readonly insertSession: Database.Statement<[string, number, string, string, string]>;
  readonly insertEntry: Database.Statement<[string, number, string, string, number | null, Buffer]>;
  readonly insertNonce: Database.Statement<[string, string, string, string, number]>;
  readonly updateHead: Database.Statement<[number, string, string, string, string, number, string]>;
  readonly range: Database.Statement<[string, number, number], EntryRow>;
  readonly slot: Database.Statement<[string, string, number], EntryRow>;
  readonly list: Database.Statement<[], { readonly id: string }>;
  readonly insertCosignature: Database.Statement<[string, number, string, string, string]>;
  readonly cosignatures: Database.Statement<[string, number], CosignatureRecord>;
  readonly insertWitnessSize: Database.Statement<[string, string, number]>;
  readonly witnessSize: Database.Statement<[string, string], { readonly size: number | null }>;
  readonly schemaVersion: Database.Statement<[], { readonly v: number | null }>;
}

/** An open, migrated connection to the store's file. */
export class SqliteConnection {
  readonly db: Database.Database;
  /** The device and inode of the file this connection opened (a replaced or removed file is noticed before a commit). */
  readonly identity: FileIdentity;
  readonly q: Statements;
  readonly signing: SqliteSigningLog;
  readonly continuity: SqliteContinuity;
  readonly engineLog: EngineLogStatements;
  /** Creates a session with its genesis entry (and its engine-log leaf) in one IMMEDIATE transaction. */
  readonly createTx: (genesis: StoredEntry, head: SessionHead, logLeaf: Uint8Array | undefined) => 'created' | 'exists';
  /** All claims for (session, index) in one IMMEDIATE transaction, or none (see `TranscriptStore.reserve`). */
  readonly reserveTx: (sessionId: string, index: number, claims: readonly NonceClaim[]) => ReserveOutcome;
  /** One IMMEDIATE transaction for a batch of appends, each in its own savepoint and settled on its own. */
  readonly batchTx: (batch: readonly AppendRequest[]) => Settled[];
  private readonly applyOneTx: (request: AppendRequest) => AppendOutcome;

  /**
   * Opens the file (the first open may create it; a reopen, `mustExist`,
   * never does: a removed database is an outage, not an empty store),
   * migrates, and prepares every statement. Throws `TallyError`
   * (`TALLY_STORE_OPEN`, or `TALLY_STORE_IO` on a reopen, or a schema error).
   */
  constructor(path: string, settings: ConnectionSettings, mustExist: boolean) {
    let db: Database.Database;
    try {
      db = new Database(path, { fileMustExist: mustExist });
    } catch (cause) {
      throw new TallyError(mustExist ? 'TALLY_STORE_IO' : 'TALLY_STORE_OPEN', `Cannot open SQLite database ${path}.`, { details: String(cause), cause });
    }
    try {
      db.pragma(`busy_timeout = ${settings.busyTimeoutMs}`);
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${settings.synchronous}`);
      db.pragma('foreign_keys = ON');
      if (settings.cacheKiB !== undefined) db.pragma(`cache_size = -${settings.cacheKiB}`);
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
      insertCosignature: db.prepare('INSERT OR IGNORE INTO cosignatures (origin, size, root, witness, line) VALUES (?, ?, ?, ?, ?)'),
      cosignatures: db.prepare('SELECT origin, size, root, witness, line FROM cosignatures WHERE origin = ? AND size = ? ORDER BY witness'),
      insertWitnessSize: db.prepare('INSERT OR IGNORE INTO witness_sizes (witness, origin, size) VALUES (?, ?, ?)'),
      witnessSize: db.prepare('SELECT max(size) AS size FROM witness_sizes WHERE witness = ? AND origin = ?'),
      schemaVersion: db.prepare('SELECT MAX(version) AS v FROM tally_schema'),
    };
    this.continuity = new SqliteContinuity(db, path, this.identity);
    this.signing = new SqliteSigningLog(db, settings.synchronous, this.continuity);
    this.engineLog = new EngineLogStatements(db);
    this.createTx = db.transaction((genesis: StoredEntry, head: SessionHead, logLeaf: Uint8Array | undefined) => {
      const r = this.q.insertSession.run(head.sessionId, head.size, head.head, JSON.stringify(head.frontier), head.phase);
      if (r.changes === 0) return 'exists' as const;
      this.q.insertEntry.run(head.sessionId, genesis.index, genesis.hash, genesis.kind, genesis.ordinal ?? null, blob(genesis.bytes));
      if (logLeaf) this.engineLog.append(logLeaf);
      return 'created' as const;
    }).immediate;
    this.reserveTx = db.transaction((sessionId: string, index: number, claims: readonly NonceClaim[]): ReserveOutcome => {
      for (const n of claims) {
        const o = this.q.owner.get(n.agentId, n.nonce);
        if (o) return { ok: false, reason: 'nonce-taken', agentId: n.agentId, nonce: n.nonce, owner: { intentHash: o.intent_hash, sessionId: o.session_id, index: o.idx } };
      }
      for (const n of claims) this.q.insertNonce.run(n.agentId, n.nonce, n.intentHash, sessionId, index);
      return { ok: true };
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

  /** The schema version recorded in the file. */
  schemaVersion(): number {
    return this.q.schemaVersion.get()?.v ?? 0;
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

/**
 * The SQLite store's signing log (table `signed_checkpoints`, migration 3):
 * the statements and the compare-and-record transaction, kept apart from the
 * transcript's append path. `SqliteStore` delegates its `SigningLogStore`
 * methods here.
 */
import type Database from 'better-sqlite3';
import { isExpectedLatest, toSigned, type SignedRow } from '../rows.js';
import type { ExpectedLatest, RecordCheckpointOutcome, SignedCheckpointRecord } from '../types.js';
import { EngineLogStatements } from './engine-log.js';
import type { SqliteContinuity } from './continuity.js';

const COLS = 'origin, size, root, signed_at';

/** The signing-log statements of one SQLite connection. */
export class SqliteSigningLog {
  readonly #db: Database.Database;
  readonly #synchronous: 'FULL' | 'NORMAL';
  readonly #at: Database.Statement<[string, number], SignedRow>;
  readonly #latest: Database.Statement<[string], SignedRow>;
  readonly #all: Database.Statement<[string], SignedRow>;
  readonly #insert: Database.Statement<[string, number, string, number, number, string, number, string]>;
  readonly #leaf: EngineLogStatements;
  readonly #recordTx: (record: SignedCheckpointRecord, expected: ExpectedLatest, logLeaf: Uint8Array | undefined) => RecordCheckpointOutcome;

  /** Prepares the statements on `db` (already migrated), whose `PRAGMA synchronous` is `synchronous`. */
  constructor(db: Database.Database, synchronous: 'FULL' | 'NORMAL', continuity: SqliteContinuity) {
    this.#db = db;
    this.#synchronous = synchronous;
    this.#at = db.prepare(`SELECT ${COLS} FROM signed_checkpoints WHERE origin = ? AND size = ?`);
    this.#latest = db.prepare(`SELECT ${COLS} FROM signed_checkpoints WHERE origin = ? ORDER BY size DESC LIMIT 1`);
    this.#all = db.prepare(`SELECT ${COLS} FROM signed_checkpoints WHERE origin = ? ORDER BY size`);
    this.#insert = db.prepare(`INSERT INTO signed_checkpoints (${COLS}, seq, db_system, db_timeline, db_lsn) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    this.#leaf = new EngineLogStatements(db);
    // Compare-and-record under the write lock (BEGIN IMMEDIATE): another process
    // recording for the same origin waits, then sees this row.
    this.#recordTx = db.transaction((record: SignedCheckpointRecord, expected: ExpectedLatest, logLeaf: Uint8Array | undefined): RecordCheckpointOutcome => {
      const at = this.#at.get(record.origin, record.size);
      if (at) {
        const existing = toSigned(at);
        return existing.root === record.root ? { ok: true, duplicate: true, record: existing } : { ok: false, reason: 'equivocation', record: existing };
      }
      const latest = this.latest(record.origin);
      if (!isExpectedLatest(latest, expected)) return { ok: false, reason: 'latest-moved', latest };
      // Stamped with the file's identity and the row's sequence number (./continuity.ts).
      const { seq, ...position } = continuity.nextPosition();
      this.#insert.run(record.origin, record.size, record.root, record.signedAt, seq, position.system, position.timeline, position.lsn);
      if (logLeaf) this.#leaf.append(logLeaf);
      return { ok: true, duplicate: false, record: { origin: record.origin, size: record.size, root: record.root, signedAt: record.signedAt, position } };
    }).immediate;
  }

  /**
   * One compare-and-record transaction, fsynced even when the connection
   * runs `synchronous = NORMAL` (FULL for this commit, which also makes every
   * earlier commit durable): the engine signs only after this returns.
   */
  record(record: SignedCheckpointRecord, expected: ExpectedLatest, logLeaf?: Uint8Array): RecordCheckpointOutcome {
    if (this.#synchronous === 'FULL') return this.#recordTx(record, expected, logLeaf);
    this.#db.pragma('synchronous = FULL');
    try {
      return this.#recordTx(record, expected, logLeaf);
    } finally {
      this.#db.pragma(`synchronous = ${this.#synchronous}`);
    }
  }

  /** The origin's record of the largest size. */
  latest(origin: string): SignedCheckpointRecord | undefined {
    const r = this.#latest.get(origin);
    return r ? toSigned(r) : undefined;
  }

  /** Every record of the origin, by size. */
  all(origin: string): SignedCheckpointRecord[] {
    return this.#all.all(origin).map(toSigned);
  }
}

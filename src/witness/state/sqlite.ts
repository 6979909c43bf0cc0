import Database from 'better-sqlite3';
import { TallyError } from '../../protocol/errors.js';
import type { WitnessHead, WitnessRecord, WitnessStore } from './types.js';

/** Schema version this release writes (`PRAGMA user_version`). */
export const WITNESS_SQLITE_SCHEMA = 1;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS witness_latest (
  origin            TEXT PRIMARY KEY,
  size              INTEGER NOT NULL CHECK (size >= 0),
  root              BLOB NOT NULL CHECK (length(root) = 32),
  signed_checkpoint TEXT NOT NULL,
  time              INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS witness_log_keys (
  seq  INTEGER PRIMARY KEY AUTOINCREMENT,
  vkey TEXT NOT NULL UNIQUE
) STRICT;
`;

interface Row {
  size: number;
  root: Buffer;
  signed_checkpoint: string;
  time: number;
}

/**
 * Witness state in one SQLite file (the default): WAL journal,
 * `synchronous = FULL` (a swap that returned `true` survives a power cut),
 * a busy timeout so several witness processes can share the file. The swap is
 * one conditional `UPDATE` (or `INSERT … ON CONFLICT DO NOTHING` for a first
 * record), so it is atomic across processes.
 */
export class SqliteWitnessStore implements WitnessStore {
  readonly name: string;
  private readonly db: Database.Database;

  private constructor(db: Database.Database, path: string) {
    this.db = db;
    this.name = `sqlite:${path}`;
  }

  /** Opens (creating if needed) the witness database at `path`. Throws `TALLY_WITNESS_STORE_OPEN`. */
  static open(path: string): SqliteWitnessStore {
    let db: Database.Database | undefined;
    try {
      db = new Database(path);
      db.pragma('busy_timeout = 5000');
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version > WITNESS_SQLITE_SCHEMA) throw new TallyError('TALLY_WITNESS_STORE_TOO_NEW', `Witness database schema ${version} is newer than this release (${WITNESS_SQLITE_SCHEMA}).`);
      db.exec(`BEGIN IMMEDIATE; ${SCHEMA} PRAGMA user_version = ${WITNESS_SQLITE_SCHEMA}; COMMIT;`);
      return new SqliteWitnessStore(db, path);
    } catch (cause) {
      db?.close();
      if (cause instanceof TallyError) throw cause;
      throw new TallyError('TALLY_WITNESS_STORE_OPEN', 'Cannot open the witness database.', { details: `${path}: ${String(cause)}`, cause });
    }
  }

  async latest(origin: string): Promise<WitnessRecord | undefined> {
    const r = this.db.prepare('SELECT size, root, signed_checkpoint, time FROM witness_latest WHERE origin = ?').get(origin) as Row | undefined;
    return r === undefined ? undefined : { size: r.size, root: new Uint8Array(r.root), signedCheckpoint: r.signed_checkpoint, time: r.time };
  }

  async compareAndSwap(origin: string, expected: WitnessHead | undefined, next: WitnessRecord): Promise<boolean> {
    const root = Buffer.from(next.root);
    const r =
      expected === undefined
        ? this.db.prepare('INSERT INTO witness_latest (origin, size, root, signed_checkpoint, time) VALUES (?, ?, ?, ?, ?) ON CONFLICT (origin) DO NOTHING').run(origin, next.size, root, next.signedCheckpoint, next.time)
        : this.db
            .prepare('UPDATE witness_latest SET size = ?, root = ?, signed_checkpoint = ?, time = ? WHERE origin = ? AND size = ? AND root = ?')
            .run(next.size, root, next.signedCheckpoint, next.time, origin, expected.size, Buffer.from(expected.root));
    return r.changes === 1;
  }

  async logKeys(): Promise<string[]> {
    return (this.db.prepare('SELECT vkey FROM witness_log_keys ORDER BY seq').all() as { vkey: string }[]).map((r) => r.vkey);
  }

  async addLogKey(vkey: string): Promise<void> {
    this.db.prepare('INSERT INTO witness_log_keys (vkey) VALUES (?) ON CONFLICT (vkey) DO NOTHING').run(vkey);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

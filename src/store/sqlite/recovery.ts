/**
 * What a SQLite store checks after a write failed below it (I/O error, full
 * disk, failed fsync), and before every commit: that the file at its path is
 * still the one it opened, that the reopened file's b-trees are sound, and
 * that one write can again reach the disk.
 */
import type Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { TallyError } from '../../protocol/errors.js';

/** Device and inode of a file: a file removed, moved away or replaced has other ones (or none). */
export interface FileIdentity {
  readonly dev: number;
  readonly ino: number;
}

/** The identity of the file at `path` now. */
export function fileIdentity(path: string): FileIdentity {
  const st = statSync(path);
  return { dev: st.dev, ino: st.ino };
}

/** Throws a transient `TALLY_STORE_IO` unless `path` still names the file `opened` describes. */
export function assertSameFile(path: string, opened: FileIdentity): void {
  let now: FileIdentity;
  try {
    now = fileIdentity(path);
  } catch (cause) {
    throw new TallyError('TALLY_STORE_IO', `SQLite database ${path} is gone.`, { details: String(cause), cause });
  }
  if (now.dev !== opened.dev || now.ino !== opened.ino) throw new TallyError('TALLY_STORE_IO', `SQLite database ${path} was replaced by another file.`);
}

/**
 * `PRAGMA quick_check` on a freshly opened connection; `TALLY_STORE_CORRUPT`
 * unless it answers `ok` (also when SQLite itself finds the file malformed
 * while checking it).
 */
export function quickCheck(db: Database.Database, path: string): void {
  let rows: { quick_check: string }[];
  try {
    rows = db.prepare('PRAGMA quick_check').all() as { quick_check: string }[];
  } catch (cause) {
    const code = String((cause as { code?: unknown } | null)?.code ?? '');
    if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
      throw new TallyError('TALLY_STORE_CORRUPT', `SQLite database ${path} is malformed on disk after a failed write.`, { details: String(cause), cause });
    }
    throw cause;
  }
  if (rows.length !== 1 || rows[0]!.quick_check !== 'ok') {
    throw new TallyError('TALLY_STORE_CORRUPT', `SQLite database ${path} fails quick_check after a failed write.`, { details: rows.map((r) => r.quick_check).join('; ') });
  }
}

/** One committed write that changes nothing (it still goes through the WAL and its fsync). */
export function probeWrite(db: Database.Database): void {
  db.prepare('UPDATE tally_schema SET version = version WHERE version = (SELECT MAX(version) FROM tally_schema)').run();
}

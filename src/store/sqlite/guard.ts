/**
 * The write guard of a SQLite store: every read and write goes through it.
 * A write commits only on a trusted connection to the file still at the
 * store's path. A write that fails below SQLite (I/O error, full disk, failed
 * fsync) leaves the connection untrusted: before the next read the file is
 * reopened and quick-checked, and before anything is acknowledged again one
 * no-op write must reach the disk (the checks themselves are in recovery.ts).
 * While recovery keeps failing it is tried at most once per interval (a
 * quick_check reads the whole file): in between, callers get the last
 * attempt's error without the file being touched.
 */
import { TallyError } from '../../protocol/errors.js';
import type { StoreHealth } from '../types.js';
import { SqliteConnection, type ConnectionSettings } from './connection.js';
import { assertSameFile, probeWrite, quickCheck } from './recovery.js';

/** How often a failing recovery is tried again. */
export interface RecoveryPacing {
  /** Least time between two recovery attempts while they fail, in ms (default 1000). */
  readonly intervalMs?: number;
  /** Monotonic milliseconds (default `performance.now`); tests inject one. */
  readonly clock?: () => number;
}

/** The default of {@link RecoveryPacing.intervalMs}. */
export const DEFAULT_RECOVERY_INTERVAL_MS = 1_000;

/** The last failed recovery attempt, answered again until `until`. */
interface FailedAttempt {
  readonly until: number;
  readonly error: TallyError;
  /** True when the reopen and quick_check passed and only the probe write failed: reads may use that connection until `until`. */
  readonly readable: boolean;
}

/** Owns a store's connection and decides when it may be trusted. */
export class WriteGuard {
  /** The connection in use (replaced on recovery). */
  private conn: SqliteConnection;
  /** Set when a write failed below SQLite (I/O, full disk, failed fsync): the connection is not trusted again until {@link recover} succeeds. */
  private failure: { readonly code: string; readonly message: string; readonly at: string } | undefined;
  /** True when the connection was opened (and quick-checked) after the last failed write: reads may use it; writes still need the probe. */
  private fresh = true;
  private reopenCount = 0;
  /** The last failed recovery attempt while it is still the answer (cleared once recovery succeeds). */
  private lastAttempt: FailedAttempt | undefined;
  private readonly intervalMs: number;
  private readonly clock: () => number;

  /** Opens the first connection (which may create the file). */
  constructor(
    private readonly path: string,
    private readonly settings: ConnectionSettings,
    pacing: RecoveryPacing = {},
  ) {
    const interval = pacing.intervalMs ?? DEFAULT_RECOVERY_INTERVAL_MS;
    if (!Number.isSafeInteger(interval) || interval < 0) throw new RangeError(`the recovery interval must be a non-negative integer of ms, got ${interval}`);
    this.intervalMs = interval;
    this.clock = pacing.clock ?? (() => performance.now());
    this.conn = new SqliteConnection(path, settings, false);
  }

  /** The connection as it is, without any check (for closing, and for reads that never needed one). */
  get connection(): SqliteConnection {
    return this.conn;
  }

  /** Connections reopened after a failed write. */
  get reopens(): number {
    return this.reopenCount;
  }

  /** Ok while the last write succeeded; after a failed one, ok only once {@link recover} succeeds now. */
  health(): StoreHealth {
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
   * lasts. A failed attempt is the answer for one interval: until then the
   * file is neither reopened nor checked nor probed again (reads go on on a
   * connection that passed its quick_check when only the probe write failed).
   */
  private recover(probe = true): void {
    if (this.failure === undefined) return;
    if (!probe && this.fresh) return;
    const last = this.lastAttempt;
    if (last !== undefined && this.clock() < last.until) {
      // Within the interval of a failed attempt: its answer again, the file untouched.
      if (!probe && last.readable) return;
      throw last.error;
    }
    let checked = this.fresh;
    try {
      this.attempt(probe, () => (checked = true));
    } catch (e) {
      this.lastAttempt = { until: this.clock() + this.intervalMs, error: ioError(this.path, 'recover', e), readable: checked };
      throw this.lastAttempt.error;
    }
  }

  /** One recovery attempt (see {@link recover}); `onChecked` is called once the connection is reopened and quick-checked. */
  private attempt(probe: boolean, onChecked: () => void): void {
    if (!this.fresh) {
      try {
        this.conn.db.close();
      } catch {
        // The old connection is abandoned either way.
      }
      this.conn = new SqliteConnection(this.path, this.settings, true);
      this.reopenCount++;
      this.io0('check the file', () => quickCheck(this.conn.db, this.path));
      this.fresh = true;
      onChecked();
    }
    if (!probe) return;
    try {
      this.io0('write after reopening', () => probeWrite(this.conn.db));
    } catch (e) {
      // A connection whose write failed is not trusted either: SQLite may have
      // opened a file it could not write read-only, and stays so until reopened.
      this.fresh = false;
      throw e;
    }
    this.failure = undefined;
    this.lastAttempt = undefined;
  }

  private io0<T>(what: string, fn: () => T): T {
    try {
      return fn();
    } catch (cause) {
      throw ioError(this.path, what, cause);
    }
  }

  /** Marks the connection untrusted after a failed write (anything but lock contention or misuse). */
  noteFailure(error: TallyError): void {
    if (error.code === 'TALLY_STORE_BUSY' || error.code === 'TALLY_STORE_MISUSE') return;
    this.fresh = false;
    this.failure = { code: error.code, message: error.message + (error.details ? ` ${String(error.details)}` : ''), at: new Date().toISOString() };
  }

  /** A read: on a reopened, quick-checked connection after a failed write (no probe write needed). */
  io<T>(what: string, fn: (conn: SqliteConnection) => T): T {
    this.recover(false);
    try {
      return fn(this.conn);
    } catch (cause) {
      throw ioError(this.path, what, cause);
    }
  }

  /** A write transaction: only on a trusted connection to the file still at `path`; a failure leaves the connection untrusted. */
  write<T>(what: string, fn: (conn: SqliteConnection) => T): T {
    try {
      this.recover();
      // Refuse to commit into a file that is no longer the one at `path` (removed or replaced).
      assertSameFile(this.path, this.conn.identity);
      return fn(this.conn);
    } catch (cause) {
      const error = ioError(this.path, what, cause);
      this.noteFailure(error);
      throw error;
    }
  }
}

/** A SQLite failure as a `TallyError`: `TALLY_STORE_BUSY` for lock contention, else `TALLY_STORE_IO` (a `TallyError` passes unchanged). */
export function ioError(path: string, what: string, cause: unknown): TallyError {
  if (cause instanceof TallyError) return cause;
  const code = (cause as { code?: unknown } | null)?.code;
  const busy = code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
  return new TallyError(busy ? 'TALLY_STORE_BUSY' : 'TALLY_STORE_IO', `SQLite could not ${what} (${path}).`, { details: String(cause), cause });
}

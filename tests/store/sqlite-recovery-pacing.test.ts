/**
 * A SQLite store that cannot recover from a failed write tries again at most
 * once per interval: a recovery attempt reopens the file and runs
 * `PRAGMA quick_check` over all of it, so a monitoring loop polling `/readyz`
 * (`health()`), appends and reads must not each pay for one while the fault
 * lasts. Calls in between get the last attempt's answer; the first call after
 * the interval tries for real, so recovery is still seen within one interval.
 * The write guard is driven on an injected clock; the failed write itself is
 * injected (`noteFailure`), the faults that keep recovery failing are real:
 * a page damaged on disk (quick_check fails) and a trigger that refuses the
 * probe write (quick_check passes, the write does not).
 */
import Database from 'better-sqlite3';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TallyError } from '../../src/protocol/errors.js';
import { SqliteStore } from '../../src/store/index.js';
import { WriteGuard } from '../../src/store/sqlite/guard.js';
import { removeTempDirs, tempDir } from './helpers/tmp.js';

afterAll(removeTempDirs);

const SETTINGS = { synchronous: 'FULL', busyTimeoutMs: 1_000 } as const;
const POLLS = 50;

/** A guard on a fresh file, on a clock the test moves. */
function guarded(intervalMs = 1_000): { db: string; guard: WriteGuard; tick: (ms: number) => void } {
  const db = join(tempDir('pacing'), 'tally.db');
  let now = 0;
  const guard = new WriteGuard(db, SETTINGS, { intervalMs, clock: () => now });
  return { db, guard, tick: (ms) => (now += ms) };
}

/** Runs `sql` on `db` through a connection of its own. */
function exec(db: string, sql: string): void {
  const other = new Database(db);
  try {
    other.exec(sql);
  } finally {
    other.close();
  }
}

/** Checkpoints the WAL into the file and returns the page size and the root page of the empty witness_sizes table. */
function layout(db: string): { page: number; root: number } {
  const other = new Database(db);
  try {
    other.pragma('wal_checkpoint(TRUNCATE)');
    const page = other.pragma('page_size', { simple: true }) as number;
    const root = (other.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'witness_sizes'").get() as { rootpage: number }).rootpage;
    return { page, root };
  } finally {
    other.close();
  }
}

/** Overwrites page `root` of `db` with `bytes` (default 0xff), returning what was there. */
function overwrite(db: string, page: number, root: number, bytes: Uint8Array = Buffer.alloc(page, 0xff)): Buffer {
  const fd = openSync(db, 'r+');
  try {
    const old = Buffer.alloc(page);
    readSync(fd, old, 0, page, (root - 1) * page);
    writeSync(fd, bytes, 0, page, (root - 1) * page);
    return old;
  } finally {
    closeSync(fd);
  }
}

const failedWrite = (): TallyError => new TallyError('TALLY_STORE_IO', 'injected: a write failed below SQLite');
const code = (fn: () => unknown): string => {
  try {
    fn();
    return 'ok';
  } catch (e) {
    return e instanceof TallyError ? e.code : String(e);
  }
};

describe('recovery after a failed write is paced', () => {
  it('a corrupt file: one reopen and quick_check per interval however many polls, appends and reads; the first call after it tries again', () => {
    const { db, guard, tick } = guarded();
    try {
      const { page, root } = layout(db);
      const good = overwrite(db, page, root);
      guard.noteFailure(failedWrite());
      expect(guard.health()).toMatchObject({ ok: false, code: 'TALLY_STORE_CORRUPT' });
      expect(guard.reopens).toBe(1);
      for (let i = 0; i < POLLS; i++) {
        tick(10);
        expect(guard.health()).toMatchObject({ ok: false, code: 'TALLY_STORE_CORRUPT' });
        expect(code(() => guard.write('append', () => undefined))).toBe('TALLY_STORE_CORRUPT');
        expect(code(() => guard.io('read', () => undefined))).toBe('TALLY_STORE_CORRUPT');
      }
      expect(guard.reopens, `${POLLS} polls, appends and reads within one interval reopened the file`).toBe(1);
      // The file is repaired: seen at the first call after the interval, not before.
      overwrite(db, page, root, good);
      tick(1_000 - POLLS * 10 - 1);
      expect(guard.health()).toMatchObject({ ok: false, code: 'TALLY_STORE_CORRUPT' });
      expect(guard.reopens).toBe(1);
      tick(1);
      expect(guard.health()).toEqual({ ok: true });
      expect(guard.reopens).toBe(2);
      expect(code(() => guard.write('append', (c) => c.db.prepare("INSERT INTO witness_sizes (witness, origin, size) VALUES ('w', 'o', 1)").run()))).toBe('ok');
    } finally {
      guard.connection.db.close();
    }
  });

  it('a probe write that fails: reads go on on the checked connection, health and writes answer the last attempt, one reopen per interval', () => {
    const { db, guard, tick } = guarded();
    try {
      exec(db, "CREATE TRIGGER refuse_probe BEFORE UPDATE ON tally_schema BEGIN SELECT RAISE(ABORT, 'injected: the probe write fails'); END;");
      guard.noteFailure(failedWrite());
      expect(guard.health()).toMatchObject({ ok: false, code: 'TALLY_STORE_IO' });
      expect(guard.reopens).toBe(1);
      for (let i = 0; i < POLLS; i++) {
        tick(10);
        expect(guard.health()).toMatchObject({ ok: false, code: 'TALLY_STORE_IO' });
        expect(code(() => guard.write('append', () => undefined))).toBe('TALLY_STORE_IO');
        expect(guard.io('read', (c) => c.schemaVersion())).toBeGreaterThan(0);
      }
      expect(guard.reopens, `${POLLS} polls, appends and reads within one interval reopened the file`).toBe(1);
      tick(1_000);
      expect(guard.health()).toMatchObject({ ok: false, code: 'TALLY_STORE_IO' });
      expect(guard.reopens).toBe(2);
      exec(db, 'DROP TRIGGER refuse_probe;');
      expect(guard.health()).toMatchObject({ ok: false, code: 'TALLY_STORE_IO' });
      tick(1_000);
      expect(guard.health()).toEqual({ ok: true });
      expect(guard.reopens).toBe(3);
    } finally {
      guard.connection.db.close();
    }
  });

  it('the first attempt after a failed write is immediate; a healthy store never reopens; the interval is an option of the store', async () => {
    const { guard } = guarded();
    try {
      for (let i = 0; i < POLLS; i++) expect(guard.health()).toEqual({ ok: true });
      expect(guard.reopens).toBe(0);
      guard.noteFailure(failedWrite());
      expect(guard.health()).toEqual({ ok: true });
      expect(guard.reopens).toBe(1);
    } finally {
      guard.connection.db.close();
    }
    expect(() => new SqliteStore(join(tempDir('pacing'), 'bad.db'), { recoveryIntervalMs: -1 })).toThrow(RangeError);
    // The store's option reaches its guard: while the probe write keeps failing, a long interval
    // answers the second poll from the first attempt; an interval of 0 tries on every poll.
    for (const [intervalMs, reopens] of [[60_000, 1], [0, 2]] as const) {
      const file = join(tempDir('pacing'), `store-${intervalMs}.db`);
      const store = new SqliteStore(file, { recoveryIntervalMs: intervalMs });
      expect(await store.health()).toEqual({ ok: true });
      exec(file, "CREATE TRIGGER refuse_probe BEFORE UPDATE ON tally_schema BEGIN SELECT RAISE(ABORT, 'injected: the probe write fails'); END;");
      (store as unknown as { guard: WriteGuard }).guard.noteFailure(failedWrite());
      expect(await store.health()).toMatchObject({ ok: false, code: 'TALLY_STORE_IO' });
      expect(await store.health()).toMatchObject({ ok: false, code: 'TALLY_STORE_IO' });
      expect(store.stats.reopens, `recoveryIntervalMs ${intervalMs}`).toBe(reopens);
      await store.close();
    }
  });
});

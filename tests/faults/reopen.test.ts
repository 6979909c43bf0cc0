/**
 * The reopen step alone: after a write failed below SQLite the store must not
 * trust its connection or the page cache behind it. Before it acknowledges
 * anything again it closes the file, opens it again and checks it from disk
 * (`PRAGMA quick_check`). Shown from outside, without a seam: the write is
 * made to fail for real (`chattr +i` on the write-ahead log, so the WAL write
 * fails with EPERM), then, once writes work again, a page the next append
 * never reads is damaged on disk. A store that skipped the reopen (or the
 * check) would find nothing wrong in its cache and acknowledge the append; a
 * store that reopens finds the damage and refuses with
 * `TALLY_STORE_CORRUPT` (under `tally serve`: 500 internal, `/readyz` not
 * ready). Without the damage the next append goes through a reopen and is
 * acknowledged.
 */
import Database from 'better-sqlite3';
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { TallyError } from '../../src/protocol/errors.js';
import { SqliteStore } from '../../src/store/index.js';
import { TOKENS, cleanup, get, rpc, startServer, tempDir } from '../server/helpers.js';
import { AckLog, Day, openDay, type DriveStats } from './helpers/drive.js';
import { immutableRoot, setImmutable, storeDirIn } from './helpers/immutable.js';
import { warnSkips } from './helpers/tools.js';

const where = immutableRoot();
warnSkips('reopen.test.ts', ['skip' in where ? where.skip : undefined]);
afterAll(() => {
  cleanup();
  if ('release' in where) where.release();
});

/** Checkpoints the WAL of `db` into the file (so every page is on disk); the page size and the root page of the empty witness_sizes table. */
function checkpoint(db: string): { page: number; root: number } {
  const other = new Database(db);
  try {
    expect(other.pragma('wal_checkpoint(TRUNCATE)', { simple: false })).toEqual([{ busy: 0, log: 0, checkpointed: 0 }]);
    const page = other.pragma('page_size', { simple: true }) as number;
    const root = (other.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'witness_sizes'").get() as { rootpage: number }).rootpage;
    return { page, root };
  } finally {
    other.close();
  }
}

/** Overwrites page `root` of `db` on disk with 0xff bytes. */
function damage(db: string, page: number, root: number): void {
  const fd = openSync(db, 'r+');
  try {
    writeSync(fd, Buffer.alloc(page, 0xff), 0, page, (root - 1) * page);
  } finally {
    closeSync(fd);
  }
}

/** A store with one session of `steps` frame+turn pairs, its WAL checkpointed into the database file (so every page is on disk). */
async function day(steps: number) {
  const db = join(storeDirIn(where, 'reopen'), 'tally.db');
  const store = new SqliteStore(db);
  const engine = createEngine({ store });
  const o = await engine.open({ name: 'reopen-day', day: '2026-11-30', run: String(process.pid) });
  if (!o.ok) throw new Error(o.message);
  const sid = o.sessionId;
  let ordinal = -1;
  const step = async () => {
    const f = await engine.frame({ sessionId: sid, ordinal, time: 1_000 + (ordinal + 2) * 60_000, data: { ordinal } });
    if (!f.ok) throw new Error(f.message);
    const t = await engine.turn({ sessionId: sid, ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: new TextEncoder().encode(`step ${ordinal}`) } });
    if (!t.ok) throw new Error(t.message);
    ordinal++;
  };
  for (let i = 0; i < steps; i++) await step();
  const { page, root } = checkpoint(db);
  return { db, store, engine, sid, step, page, root };
}

/** Makes the next append fail for real: the WAL is immutable while `fn` runs. */
async function failingWrite(db: string, fn: () => Promise<unknown>): Promise<unknown> {
  setImmutable([`${db}-wal`], true);
  try {
    return await fn().then(
      () => undefined,
      (e: unknown) => e,
    );
  } finally {
    setImmutable([`${db}-wal`], false);
  }
}

describe.skipIf('skip' in where)('SQLite after a failed write: close, reopen, quick_check before the next acknowledgement', () => {
  it('damage on disk that the old connection would not see is found before anything is acknowledged again', async () => {
    const { db, store, step, page, root } = await day(6);
    try {
      const failed = await failingWrite(db, step);
      expect(failed).toBeInstanceOf(TallyError);
      expect((failed as TallyError).code).toBe('TALLY_STORE_IO');
      // Writes work again; now a page no append reads (the empty witness_sizes table's root) is damaged on disk.
      damage(db, page, root);
      const next = await step().then(
        () => 'acknowledged',
        (e: unknown) => (e instanceof TallyError ? e.code : String(e)),
      );
      expect(next, 'the append after a failed write was acknowledged without re-checking the file from disk').toBe('TALLY_STORE_CORRUPT');
      expect(await store.health()).toMatchObject({ ok: false, code: 'TALLY_STORE_CORRUPT' });
      expect(store.stats.reopens).toBeGreaterThanOrEqual(1);
    } finally {
      await store.close();
    }
  });

  it('without damage the next append goes through one reopen and is acknowledged; the day is whole', async () => {
    const { db, store, engine, sid, step } = await day(3);
    try {
      expect(store.stats.reopens).toBe(0);
      const failed = await failingWrite(db, step);
      expect((failed as TallyError).code).toBe('TALLY_STORE_IO');
      await step();
      expect(store.stats.reopens).toBe(1);
      await step();
      expect(store.stats.reopens).toBe(1);
      const d = await engine.describe(sid);
      expect(d.ok && d.size).toBe(1 + 2 * 5);
    } finally {
      await store.close();
    }
  });

  it('the reopened connection has its own prepared statements: cosignatures, witness sizes and the schema version work after the reopen', async () => {
    const { db, store, step } = await day(2);
    const cos = (witness: string, size: number) => ({ origin: 'reopen.example/log', size, root: 'ab'.repeat(32), witness, line: `— ${witness} AAAA` });
    try {
      // Used once on the first connection, so a statement kept from it would outlive its (closed) database.
      await store.recordCosignature(cos('w1', 5));
      await store.recordWitnessSize('w1', 'reopen.example/log', 5);
      expect(await store.schemaStatus()).toMatchObject({ version: store.schemaVersion() });
      const failed = await failingWrite(db, step);
      expect((failed as TallyError).code).toBe('TALLY_STORE_IO');
      await step();
      expect(store.stats.reopens).toBe(1);
      await store.recordCosignature(cos('w2', 5));
      await store.recordWitnessSize('w2', 'reopen.example/log', 7);
      expect((await store.cosignatures('reopen.example/log', 5)).map((c) => c.witness)).toEqual(['w1', 'w2']);
      expect(await store.witnessSize('w1', 'reopen.example/log')).toBe(5);
      expect(await store.witnessSize('w2', 'reopen.example/log')).toBe(7);
      const status = await store.schemaStatus();
      expect(status.version).toBe(status.expected);
      expect(store.schemaVersion()).toBe(status.expected);
    } finally {
      await store.close();
    }
  });

  it('under tally serve: the call after the damage is 500 internal TALLY_STORE_CORRUPT, /readyz not ready, nothing acknowledged', async () => {
    const dir = tempDir('reopen-serve');
    const db = join(storeDirIn(where, 'reopen-serve'), 'tally.db');
    const srv = await startServer({ dir, db });
    const stats: DriveStats = { acks: 0, duplicates: 0, unavailable: 0 };
    const log = new AckLog(join(dir, 'acks.log'));
    try {
      const sid = await openDay(srv.url, `reopen-serve-${process.pid}`, stats);
      const day = new Day(srv.url, sid, log, stats);
      await day.driveTo(3);
      const { page, root } = checkpoint(db);
      setImmutable([`${db}-wal`], true);
      try {
        expect(await day.step()).toBe('unavailable');
      } finally {
        setImmutable([`${db}-wal`], false);
      }
      damage(db, page, root);
      const r = await rpc(srv.url, TOKENS.runtime, 'session/frame', { sessionId: sid, ordinal: day.ordinal, time: 1_000 + (day.ordinal + 2) * 60_000, data: { ordinal: day.ordinal } });
      expect({ status: r.status, type: r.body.error?.data.type, message: r.body.error?.message }).toEqual({ status: 500, type: 'internal', message: 'store error (TALLY_STORE_CORRUPT)' });
      const ready = await get(srv.url, undefined, '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.text).toContain('TALLY_STORE_CORRUPT');
      expect(srv.proc.exitCode).toBe(null);
    } finally {
      log.close();
      await srv.stop('SIGKILL');
    }
  });
});

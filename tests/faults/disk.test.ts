/**
 * The disk under a running `tally serve` on SQLite: a small tmpfs filled to
 * ENOSPC, and the database file moved away from its path. While the store
 * cannot commit, every append is 503 `unavailable` (never acknowledged, never
 * a crash); the server never creates an empty database in place of a
 * vanished one; when the fault ends the same server (no restart) completes
 * the clients' retries exactly once, and the file holds every acknowledged
 * entry, whole.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, startServer, tempDir } from '../server/helpers.js';
import { AckLog, Day, checkStore, expectNoStackTrace, openDay, untilOk, untilReady, type DriveStats } from './helpers/drive.js';
import { mountSkip, warnSkips } from './helpers/tools.js';

warnSkips('disk.test.ts', [mountSkip]);
afterAll(cleanup);

/** Steps until `n` calls in a row were 503 (the fault is really felt); fails if it takes more than `max` calls. */
async function untilFailing(day: Day, n: number, max: number): Promise<number> {
  let row = 0;
  for (let calls = 1; calls <= max; calls++) {
    row = (await day.step()) === 'unavailable' ? row + 1 : 0;
    if (row >= n) return calls;
  }
  throw new Error(`the fault never made ${n} appends in a row fail (${max} calls)`);
}

/** Writes zeros until the filesystem says ENOSPC; returns the bytes written. */
function fill(path: string): number {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(16 * 1024);
  let total = 0;
  try {
    for (;;) {
      try {
        total += writeSync(fd, chunk);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOSPC') return total;
        throw e;
      }
    }
  } finally {
    closeSync(fd);
  }
}

describe.skipIf(mountSkip !== undefined)('SQLite on a full disk (tmpfs, ENOSPC)', () => {
  it('appends fail as 503 unavailable while the disk is full; freeing space resumes without a restart; nothing acknowledged is lost', async () => {
    const dir = tempDir('enospc');
    const mnt = join(dir, 'mnt');
    mkdirSync(mnt);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mnt]);
    const db = join(mnt, 'tally.db');
    const srv = await startServer({ dir, db });
    const log = new AckLog(join(dir, 'acks.log'));
    const stats: DriveStats = { acks: 0, duplicates: 0, unavailable: 0 };
    try {
      const sid = await openDay(srv.url, `enospc-${process.pid}`, stats);
      const day = new Day(srv.url, sid, log, stats);
      await day.driveTo(4);
      const filler = join(mnt, 'filler');
      const filled = fill(filler);
      const calls = await untilFailing(day, 5, 400);
      const full = { ...stats };
      // Readiness says so: reads still work, and describe reports the store cannot commit.
      const during = await untilOk(srv.url, 'session/describe', { sessionId: sid }, stats);
      expect(during['store']).toMatchObject({ ok: false, code: 'TALLY_STORE_IO' });
      expect(during['size']).toBeGreaterThanOrEqual(1 + full.acks);
      rmSync(filler);
      // Recovery is retried at most once per interval (1 s): ready again within about one.
      await untilReady(srv.url);
      const after = await untilOk(srv.url, 'session/describe', { sessionId: sid }, stats);
      expect(after['store']).toEqual({ ok: true });
      await day.driveTo(12);
      expect(srv.proc.exitCode).toBe(null);
      expect(await srv.stop()).toBe(0);
      expectNoStackTrace(srv.stderr());
      const r = await checkStore(db, sid, log.path, day.steps);
      console.log(`[faults] sqlite ENOSPC (tmpfs 4 MiB, ${filled} filler bytes): ${calls} calls until 5 failed in a row, ${full.unavailable} × 503 unavailable while full, ${stats.acks} acks (${stats.duplicates} duplicates), 0 lost, ${r.size} entries verified`);
    } finally {
      log.close();
      await srv.stop('SIGKILL');
      execFileSync('umount', ['-l', mnt]);
    }
  });
});

describe('SQLite file moved away under a running server', () => {
  it('appends fail as 503 unavailable, no empty database is created in its place, moving it back resumes; nothing acknowledged is lost', async () => {
    const dir = tempDir('moved');
    const db = join(dir, 'tally.db');
    const srv = await startServer({ dir, db });
    const log = new AckLog(join(dir, 'acks.log'));
    const stats: DriveStats = { acks: 0, duplicates: 0, unavailable: 0 };
    try {
      const sid = await openDay(srv.url, `moved-${process.pid}`, stats);
      const day = new Day(srv.url, sid, log, stats);
      await day.driveTo(4);
      const away = join(dir, 'elsewhere.db');
      renameSync(db, away);
      for (let i = 0; i < 5; i++) expect(await day.step()).toBe('unavailable');
      expect(existsSync(db), 'the server created a new empty database where the old one was').toBe(false);
      renameSync(away, db);
      await day.driveTo(10);
      expect(await srv.stop()).toBe(0);
      expectNoStackTrace(srv.stderr());
      const r = await checkStore(db, sid, log.path, day.steps);
      console.log(`[faults] sqlite file moved away: 5 of 5 appends 503 unavailable, ${stats.acks} acks, 0 lost, ${r.size} entries verified`);
    } finally {
      log.close();
      await srv.stop('SIGKILL');
    }
  });
});

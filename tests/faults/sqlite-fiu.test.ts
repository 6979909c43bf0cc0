/**
 * libfiu inside a real `tally serve` on SQLite: `fsync`/`fdatasync` and
 * `pwrite`/`pwritev`/`ftruncate` fail at random (the calls SQLite makes to
 * write and sync its WAL and database; node's own `write`/`read` on sockets
 * and pipes, and V8's `mmap`, are left alone so the server itself keeps
 * talking). While faults are on, every failed append is answered 503
 * `unavailable`, never acknowledged and never a crash; when they stop, the
 * same server (no restart) completes the clients' retries exactly once; the
 * file re-read afterwards holds every acknowledged entry, whole.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, startServer, tempDir } from '../server/helpers.js';
import { AckLog, checkStore, driveSteps, expectNoStackTrace, openDay, type DriveStats } from './helpers/drive.js';
import { fiuCtrl, fiuEnv, fiuSkip, warnSkips } from './helpers/tools.js';

warnSkips('sqlite-fiu.test.ts', [fiuSkip]);
afterAll(cleanup);

const POINTS = ['posix/io/sync/*', 'posix/io/rw/pwrite', 'posix/io/rw/pwritev', 'posix/io/rw/ftruncate'];

describe.skipIf(fiuSkip !== undefined)('SQLite under libfiu (tally serve)', () => {
  it.each([
    { name: 'failing fsync', points: ['posix/io/sync/*'], probability: 0.35 },
    { name: 'failing writes and fsync', points: POINTS, probability: 0.05 },
  ])('$name: failures are 503 unavailable, the server recovers by itself, nothing acknowledged is lost', async ({ name, points, probability }) => {
    const dir = tempDir('fiu');
    const db = join(dir, 'tally.db');
    const fifo = join(dir, 'fiu');
    const srv = await startServer({ dir, db, env: fiuEnv(fifo) });
    const log = new AckLog(join(dir, 'acks.log'));
    const stats: DriveStats = { acks: 0, duplicates: 0, unavailable: 0 };
    try {
      const sid = await openDay(srv.url, `fiu-${name}-${process.pid}`, stats);
      await driveSteps(srv.url, sid, -1, 2, log, stats);
      for (const p of points) fiuCtrl(fifo, srv.proc.pid!, `enable_random name=${p},probability=${probability}`);
      await driveSteps(srv.url, sid, 2, 30, log, stats);
      for (const p of points) fiuCtrl(fifo, srv.proc.pid!, `disable name=${p}`);
      const during = { ...stats };
      await driveSteps(srv.url, sid, 30, 35, log, stats);
      // Recovery needed no restart, and after the fault nothing more failed.
      expect(stats.unavailable).toBe(during.unavailable);
      expect(srv.proc.exitCode).toBe(null);
      expect(await srv.stop()).toBe(0);
      expect(during.unavailable, 'the faults were really hit').toBeGreaterThan(0);
      expectNoStackTrace(srv.stderr());
      const r = await checkStore(db, sid, log.path, 36);
      expect(r.acked).toBe(r.size - 1);
      console.log(`[faults] sqlite libfiu ${name} p=${probability}: ${stats.acks} acks (${stats.duplicates} answered as duplicates of a failed-but-landed append), ${during.unavailable} × 503 unavailable, 0 lost, ${r.size} entries verified`);
    } finally {
      log.close();
      await srv.stop('SIGKILL');
    }
  });
});

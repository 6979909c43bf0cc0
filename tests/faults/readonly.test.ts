/**
 * The store file made read-only under a running `tally serve` on SQLite:
 * `chattr +i` on the database and its `-wal` (root ignores `chmod`, and Linux
 * refuses `remount,ro` while the server holds the file open for writing; see
 * helpers/immutable.ts for where the files live when the temp directory's
 * filesystem ignores the flag). Writes through the server's open descriptors
 * then fail with EPERM, and a reopen falls back to a read-only connection.
 * While it lasts every append is 503 `unavailable` (never acknowledged, never
 * a crash), `/readyz` is not ready, and `tally frame` on the same file exits
 * 3; when the flag is cleared the same server (no restart) is ready again at
 * once, completes the clients' retries exactly once, and the file holds every
 * acknowledged entry, whole.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TALLY, cleanup, get, startServer, tempDir } from '../server/helpers.js';
import { AckLog, Day, checkStore, expectNoStackTrace, openDay, untilOk, untilReady, type DriveStats } from './helpers/drive.js';
import { immutableRoot, setImmutable, sqliteDataFiles, storeDirIn } from './helpers/immutable.js';
import { warnSkips } from './helpers/tools.js';

const where = immutableRoot();
warnSkips('readonly.test.ts', ['skip' in where ? where.skip : undefined]);
afterAll(() => {
  cleanup();
  if ('release' in where) where.release();
});

describe.skipIf('skip' in where)('SQLite file made read-only under a running server (chattr +i)', () => {
  it('appends 503 unavailable, /readyz not ready, the CLI exits 3; clearing the flag resumes without a restart; nothing acknowledged is lost', async () => {
    const dir = tempDir('readonly');
    const db = join(storeDirIn(where, 'readonly'), 'tally.db');
    const srv = await startServer({ dir, db });
    const log = new AckLog(join(dir, 'acks.log'));
    const stats: DriveStats = { acks: 0, duplicates: 0, unavailable: 0 };
    try {
      const sid = await openDay(srv.url, `readonly-${process.pid}`, stats);
      const day = new Day(srv.url, sid, log, stats);
      await day.driveTo(4);
      expect((await get(srv.url, undefined, '/readyz')).status).toBe(200);
      const locked = setImmutable(sqliteDataFiles(db), true);
      expect(locked).toContain(db);
      const before = { ...stats };
      for (let i = 0; i < 5; i++) expect(await day.step()).toBe('unavailable');
      const ready = await get(srv.url, undefined, '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.text).toMatch(/TALLY_STORE_IO/);
      const during = await untilOk(srv.url, 'session/describe', { sessionId: sid }, stats);
      expect(during['store']).toMatchObject({ ok: false, code: 'TALLY_STORE_IO' });
      expect(during['size']).toBe(1 + before.acks);
      // The CLI on the same read-only file: exit 3; with --json the error is one JSON line on stdout, nothing on stderr.
      const cli = spawnSync(process.execPath, [TALLY, 'frame', '--session', sid, `--ordinal=${day.ordinal}`, '--time', '99000000', '--db', db, '--json'], { encoding: 'utf8', env: { ...process.env, TALLY_DEBUG: '' } });
      expect(cli.status, cli.stderr).toBe(3);
      expect(cli.stderr).toBe('');
      expect(cli.stdout.endsWith('\n') && cli.stdout.split('\n').length === 2).toBe(true);
      expect(JSON.parse(cli.stdout)).toMatchObject({ ok: false, code: expect.stringMatching(/^TALLY_STORE_(IO|OPEN)$/), exit: 3 });
      setImmutable(sqliteDataFiles(db), false);
      // Recovery is retried at most once per interval (1 s): ready again within about one.
      await untilReady(srv.url);
      await day.driveTo(10);
      expect(stats.unavailable - before.unavailable, 'only the five appends while read-only failed').toBe(5);
      expect(srv.proc.exitCode).toBe(null);
      expect(await srv.stop()).toBe(0);
      expectNoStackTrace(srv.stderr());
      const r = await checkStore(db, sid, log.path, day.steps);
      expect(r.acked).toBe(r.size - 1);
      console.log(`[faults] sqlite read-only file (chattr +i on ${locked.length} files, in ${'how' in where ? where.how : '?'}): 5 of 5 appends 503 unavailable, /readyz 503, tally frame exit 3; ${stats.acks} acks (${stats.duplicates} duplicates), 0 lost, ${r.size} entries verified`);
    } finally {
      setImmutable(sqliteDataFiles(db), false);
      log.close();
      await srv.stop('SIGKILL');
    }
  });
});

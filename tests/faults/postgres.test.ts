/**
 * PostgreSQL under a running `tally serve`: the server's backends are
 * terminated again and again while appends are in flight, and the database
 * is flipped to `default_transaction_read_only`. Only this test's own
 * database and backends are touched (its own `application_name`; the shared
 * server is never restarted). Every failed append is 503 `unavailable`; the
 * pool recovers by itself; the clients' retries land exactly once; every
 * acknowledged entry is there afterwards, whole.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, startServer, tempDir } from '../server/helpers.js';
import { PG_URL, pgExec, pgReady, warnIfSkipped } from '../store/helpers/pg.js';
import { AckLog, Day, checkStore, expectNoStackTrace, openDay, untilOk, type DriveStats } from './helpers/drive.js';

warnIfSkipped('faults/postgres.test.ts');
afterAll(cleanup);

function ownDatabase(): { name: string; app: string; url: string } {
  const tag = `${process.pid}_${randomBytes(4).toString('hex')}`;
  const name = `tally_faults_${tag}`;
  const app = `tally-faults-${tag}`;
  const u = new URL(PG_URL!);
  u.pathname = `/${name}`;
  u.searchParams.set('application_name', app);
  return { name, app, url: u.toString() };
}

/** Terminates this test's backends only (by application_name); returns how many. */
async function terminateOwn(app: string): Promise<number> {
  const r = await pgExec('SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()', [app]);
  return (r.rows[0] as { n: number }).n;
}

describe.skipIf(!pgReady)('PostgreSQL faults under tally serve (own database, own backends)', () => {
  it('backends terminated mid-append, then the database read-only: 503 unavailable, the pool recovers, retries land exactly once, nothing acknowledged is lost', async () => {
    const { name, app, url } = ownDatabase();
    await pgExec(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    const dir = tempDir('pgfault');
    const srv = await startServer({ dir, db: url });
    const log = new AckLog(join(dir, 'acks.log'));
    const stats: DriveStats = { acks: 0, duplicates: 0, unavailable: 0 };
    try {
      const sid = await openDay(srv.url, `pgfault-${name}`, stats);
      const day = new Day(srv.url, sid, log, stats);
      await day.driveTo(3);
      // 1. Backends killed every few ms while the client appends.
      let killing = true;
      let killed = 0;
      const killer = (async () => {
        while (killing) {
          killed += await terminateOwn(app);
          await sleep(15);
        }
      })();
      await day.driveTo(20);
      killing = false;
      await killer;
      const afterKills = { ...stats };
      // 2. Read-only: new sessions of this database refuse writes.
      await pgExec(`ALTER DATABASE ${pg.escapeIdentifier(name)} SET default_transaction_read_only = on`);
      await terminateOwn(app);
      for (let i = 0; i < 5; i++) expect(await day.step()).toBe('unavailable');
      const d = await untilOk(srv.url, 'session/describe', { sessionId: sid }, stats);
      expect(d['size']).toBe(1 + stats.acks);
      expect(d['store']).toMatchObject({ ok: false, code: 'TALLY_STORE_IO' });
      await pgExec(`ALTER DATABASE ${pg.escapeIdentifier(name)} SET default_transaction_read_only = off`);
      await terminateOwn(app);
      await day.driveTo(26);
      expect((await untilOk(srv.url, 'session/describe', { sessionId: sid }, stats))['store']).toEqual({ ok: true });
      expect(srv.proc.exitCode).toBe(null);
      expect(await srv.stop()).toBe(0);
      expectNoStackTrace(srv.stderr());
      expect(killed, 'backends were really terminated').toBeGreaterThan(0);
      const u = new URL(url);
      u.searchParams.delete('application_name');
      const r = await checkStore(u.toString(), sid, log.path, day.steps);
      console.log(`[faults] postgres: ${killed} backends terminated during 17 steps → ${afterKills.unavailable} × 503 unavailable; read-only database → 5 of 5 appends 503; ${stats.acks} acks (${stats.duplicates} duplicates), 0 lost, ${r.size} entries verified`);
    } finally {
      log.close();
      await srv.stop('SIGKILL');
      await pgExec(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    }
  });
});

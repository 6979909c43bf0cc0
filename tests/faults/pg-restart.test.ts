/**
 * A real PostgreSQL restart under a running `tally serve`: a PRIVATE cluster
 * (initdb into a temp dir, its own port, run as the postgres user; the shared
 * server is never touched) is restarted (`pg_ctl restart -m fast`, which
 * aborts open transactions) while a client appends. Appends in flight fail
 * as 503 `unavailable`; the pool reconnects by itself; the retries land
 * exactly once; every acknowledged entry is there afterwards.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chmodSync, existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, startServer, tempDir } from '../server/helpers.js';
import { AckLog, Day, checkStore, expectNoStackTrace, openDay, type DriveStats } from './helpers/drive.js';
import { warnSkips } from './helpers/tools.js';

const BIN = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').map((v) => `/usr/lib/postgresql/${v}/bin`).find((b) => existsSync(`${b}/initdb`)) : undefined;
const skip = BIN === undefined ? 'no PostgreSQL server binaries (initdb, pg_ctl) under /usr/lib/postgresql' : process.getuid?.() !== 0 ? 'not root: cannot run a private cluster as the postgres user' : undefined;
warnSkips('pg-restart.test.ts', [skip]);
afterAll(cleanup);

function asPostgres(args: string[]): string {
  return execFileSync('runuser', ['-u', 'postgres', '--', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe.skipIf(skip !== undefined)('PostgreSQL restarted under tally serve (private cluster)', () => {
  it('appends in flight fail as 503 unavailable, the pool recovers, retries land once, nothing acknowledged is lost', async () => {
    const dir = tempDir('pgrestart');
    chmodSync(dir, 0o777);
    const data = join(dir, 'pgdata');
    const port = await freePort();
    asPostgres([`${BIN}/initdb`, '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    const ctl = (cmd: string): string => asPostgres([`${BIN}/pg_ctl`, '-D', data, '-l', join(data, 'log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, '-w', '-m', 'fast', cmd]);
    ctl('start');
    // The restart runs in the background (async) so the client keeps appending through it.
    const restart = (): Promise<unknown> =>
      promisify(execFile)('runuser', ['-u', 'postgres', '--', `${BIN}/pg_ctl`, '-D', data, '-l', join(data, 'log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, '-w', '-m', 'fast', 'restart'], { timeout: 60_000 });
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const srv = await startServer({ dir, db: url });
    const log = new AckLog(join(dir, 'acks.log'));
    const stats: DriveStats = { acks: 0, duplicates: 0, unavailable: 0 };
    try {
      const sid = await openDay(srv.url, `pgrestart-${process.pid}`, stats);
      const day = new Day(srv.url, sid, log, stats);
      await day.driveTo(3);
      const restarts = 2;
      for (let k = 0; k < restarts; k++) {
        const before = stats.acks;
        const restarting = restart();
        await day.driveTo(day.steps + 2);
        await restarting;
        await day.driveTo(day.steps + 3);
        expect(stats.acks).toBeGreaterThan(before);
      }
      await day.driveTo(day.steps + 3);
      expect(stats.unavailable, 'appends really hit the restart').toBeGreaterThan(0);
      expect(srv.proc.exitCode).toBe(null);
      expect(await srv.stop()).toBe(0);
      expectNoStackTrace(srv.stderr());
      const r = await checkStore(url, sid, log.path, day.steps);
      console.log(`[faults] postgres private cluster restarted ${restarts}× mid-append: ${stats.unavailable} × 503 unavailable, ${stats.acks} acks (${stats.duplicates} duplicates), 0 lost, ${r.size} entries verified`);
    } finally {
      log.close();
      await srv.stop('SIGKILL');
      try {
        ctl('stop');
      } catch {
        // already stopped
      }
    }
  });
});

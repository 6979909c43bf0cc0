/**
 * libfiu's `open` and `mmap` fault points inside a real `tally serve` on
 * SQLite. A running store opens and maps its files once, so these calls
 * matter when it reopens after a failed write: every `fsync` fails for one
 * append (503), then `open` fails with EROFS (a read-only filesystem:
 * `posix/io/oc/open`), or a file-backed `mmap` fails with ENOMEM (SQLite maps
 * the `-shm` index of its write-ahead log on every open:
 * `tally/mm/mmap-file`, a libfiu point of ours, because libfiu's
 * `posix/mm/mmap` also fails V8's heap mappings and node dies of it, see
 * helpers/fiu-mmap-file.c). While that lasts every append is 503 `unavailable`,
 * never acknowledged and never a crash, and `/readyz` is not ready; when the
 * fault ends the same server (no restart) reopens, checks the file, and
 * completes the clients' retries exactly once; the file re-read afterwards
 * holds every acknowledged entry, whole.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, get, startServer, tempDir } from '../server/helpers.js';
import { AckLog, Day, checkStore, expectNoStackTrace, openDay, untilReady, type DriveStats } from './helpers/drive.js';
import { fiuCtrl, fiuEnv, fiuMmapFile, fiuSkip, warnSkips } from './helpers/tools.js';

const mmapFile = fiuMmapFile(tempDir('fiu-mmap-lib'));
warnSkips('fiu-open-mmap.test.ts', [fiuSkip, 'skip' in mmapFile ? `the mmap case: ${mmapFile.skip}` : undefined]);
afterAll(cleanup);

const EROFS = 30;
const ENOMEM = 12;

const RULES = '503 unavailable while it lasts, /readyz not ready, recovery without a restart; nothing acknowledged is lost';

describe.skipIf(fiuSkip !== undefined)('SQLite reopening under libfiu open/mmap faults (tally serve)', () => {
  it(`open fails (EROFS): ${RULES}`, () => reopenUnder('open fails (EROFS)', 'posix/io/oc/open', EROFS, []));
  it.skipIf('skip' in mmapFile)(`file mmap fails (ENOMEM): ${RULES}`, () => reopenUnder('file mmap fails (ENOMEM)', 'tally/mm/mmap-file', ENOMEM, 'lib' in mmapFile ? [mmapFile.lib] : []));
});

/** Drives a day into one failed append, then keeps `point` failing (errno `errno`) while the store tries to reopen; then lets it recover. */
async function reopenUnder(name: string, point: string, errno: number, extra: readonly string[]): Promise<void> {
  const dir = tempDir('fiu-oc');
  const db = join(dir, 'tally.db');
  const fifo = join(dir, 'fiu');
  const srv = await startServer({ dir, db, env: fiuEnv(fifo, extra) });
  const pid = srv.proc.pid!;
  const log = new AckLog(join(dir, 'acks.log'));
  const stats: DriveStats = { acks: 0, duplicates: 0, unavailable: 0 };
  try {
    const sid = await openDay(srv.url, `fiu-oc-${point}-${process.pid}`, stats);
    const day = new Day(srv.url, sid, log, stats);
    await day.driveTo(3);
    // One failed append makes the store distrust its connection…
    fiuCtrl(fifo, pid, 'enable name=posix/io/sync/*');
    expect(await day.step()).toBe('unavailable');
    // …and its reopen meets the fault.
    fiuCtrl(fifo, pid, `enable name=${point},failinfo=${errno}`);
    fiuCtrl(fifo, pid, 'disable name=posix/io/sync/*');
    for (let i = 0; i < 5; i++) expect(await day.step()).toBe('unavailable');
    const ready = await get(srv.url, undefined, '/readyz');
    fiuCtrl(fifo, pid, `disable name=${point}`);
    expect(ready.status).toBe(503);
    expect(ready.text).toMatch(/TALLY_STORE_IO/);
    // Recovery is retried at most once per interval (1 s): ready again within about one, and then nothing fails.
    await untilReady(srv.url);
    const failed = stats.unavailable;
    await day.driveTo(10);
    expect(stats.unavailable, 'after the fault nothing more failed').toBe(failed);
    expect((await get(srv.url, undefined, '/readyz')).status).toBe(200);
    expect(srv.proc.exitCode).toBe(null);
    expect(await srv.stop()).toBe(0);
    expectNoStackTrace(srv.stderr());
    // The five failures were the reopen meeting the fault (SQLite: EROFS on open is "unable to open", a failed -shm map an I/O error).
    const detail = point.endsWith('open') ? 'unable to open database file' : 'disk I/O error';
    const reopens = srv.stderr().split('\n').filter((l) => l.includes('"status":503') && l.includes('Cannot open SQLite database') && l.includes(detail));
    expect(reopens.length).toBeGreaterThanOrEqual(5);
    const r = await checkStore(db, sid, log.path, day.steps);
    expect(r.acked).toBe(r.size - 1);
    console.log(`[faults] sqlite libfiu ${name} during the reopen: 6 of 6 appends 503 unavailable, /readyz 503; ${stats.acks} acks (${stats.duplicates} duplicates), 0 lost, ${r.size} entries verified`);
  } finally {
    log.close();
    await srv.stop('SIGKILL');
  }
}

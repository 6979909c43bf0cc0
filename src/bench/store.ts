/**
 * Store benchmarks (issue: durable stores): durable appends per second for
 * SQLite (synchronous FULL and NORMAL) and PostgreSQL, for one session and for
 * many concurrent sessions, beside the raw fsync rate of the same disk
 * measured in the same run (PostgreSQL: beside the server's raw commit rate,
 * `./store-pg.ts`). One commit per append cannot beat the fsync rate;
 * group commit (many appends per transaction) is how the many-session figures
 * do. Prints nothing: the caller prints the returned numbers.
 */
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore, type SqliteStoreOptions } from '../store/sqlite/store.js';
import type { Figure } from './core.js';
import { record, replay, type Recorded } from './recorded.js';
import { benchPostgres, type PostgresBenchResult } from './store-pg.js';

/** Options of {@link benchStores}. */
export interface BenchStoresOptions {
  /** Directory for the SQLite files and the fsync probe (default: a fresh directory under the OS temp dir). */
  readonly dir?: string;
  /** PostgreSQL URL (default: env `TALLY_PG_URL`); without one the Postgres figures are skipped. */
  readonly postgresUrl?: string;
  /** Pool size of the Postgres store in the many-session run (default 16). */
  readonly postgresPoolSize?: number;
  /** Appends in the one-session runs (default 500). */
  readonly oneSessionAppends?: number;
  /** Appends of the PostgreSQL one-session figure (default 3,000: its ten rounds must each outlast the server's jitter). */
  readonly postgresOneSessionAppends?: number;
  /** Concurrent sessions in the many-session runs (default 64). */
  readonly sessions?: number;
  /** Appends per session in the many-session runs (default 50). */
  readonly appendsPerSession?: number;
  /** How long the fsync probe runs, in ms (default 1000). */
  readonly fsyncMs?: number;
}

/** One measured append rate. */
export interface AppendRate {
  readonly appends: number;
  readonly seconds: number;
  readonly perSecond: number;
  /** `perSecond` divided by the disk's raw fsync rate: above 1 needs group commit. */
  readonly vsFsync: number;
  /** Write transactions used (SQLite only). */
  readonly commits?: number;
}

/** Everything {@link benchStores} measured. */
export interface StoreBenchResult {
  readonly dir: string;
  /** 4 KiB write + fsync, in a loop, on a file in `dir`: the mean of a probe before and one after the store runs. */
  readonly fsyncPerSecond: number;
  /** The two probes (a shared or virtual disk drifts; a large gap means noisy figures). */
  readonly fsyncSamples: readonly [before: number, after: number];
  readonly sqlite: {
    readonly FULL: { readonly one: AppendRate; readonly many: AppendRate; readonly manyWithoutGroupCommit: AppendRate };
    readonly NORMAL: { readonly one: AppendRate; readonly many: AppendRate };
  };
  /** PostgreSQL figures, each beside the server's raw commit rate (see `./store-pg.ts`). */
  readonly postgres: { readonly skipped: string } | PostgresBenchResult;
  /** The same numbers as {@link Figure}s (baseline: the fsync rate; PostgreSQL: its raw commit rate). */
  readonly figures: Figure[];
}

function fsyncRate(dir: string, ms: number): number {
  const file = join(dir, 'fsync-probe.bin');
  const fd = openSync(file, 'w');
  const block = new Uint8Array(4096).fill(0x5a);
  let n = 0;
  const t0 = performance.now();
  try {
    while (performance.now() - t0 < ms) {
      writeSync(fd, block);
      fsyncSync(fd);
      n++;
    }
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
  return n / ((performance.now() - t0) / 1000);
}

function rateOf(r: { appends: number; seconds: number }, fsync: number, commits?: number): AppendRate {
  const perSecond = Math.round(r.appends / r.seconds);
  const base = { appends: r.appends, seconds: Number(r.seconds.toFixed(3)), perSecond, vsFsync: Number((perSecond / fsync).toFixed(2)) };
  return commits === undefined ? base : { ...base, commits };
}

async function sqliteRun(dir: string, name: string, options: SqliteStoreOptions, days: readonly Recorded[], fsync: number): Promise<AppendRate> {
  const store = new SqliteStore(join(dir, `${name}.db`), options);
  try {
    const r = await replay(store, days);
    return rateOf(r, fsync, store.stats.commits);
  } finally {
    await store.close();
  }
}

/**
 * Runs the store benchmarks and returns the numbers.
 *
 * @example
 * const r = await benchStores({ postgresUrl: process.env.TALLY_PG_URL });
 * process.stdout.write(`SQLite FULL, 64 sessions: ${r.sqlite.FULL.many.perSecond}/s; fsync ${r.fsyncPerSecond}/s\n`);
 */
export async function benchStores(options: BenchStoresOptions = {}): Promise<StoreBenchResult> {
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'tally-bench-'));
  const oneN = options.oneSessionAppends ?? 500;
  const sessions = options.sessions ?? 64;
  const perSession = options.appendsPerSession ?? 50;
  const url = options.postgresUrl ?? process.env['TALLY_PG_URL'];
  const poolSize = options.postgresPoolSize ?? 16;
  try {
    const before = Math.round(fsyncRate(dir, options.fsyncMs ?? 1000));
    let fsync = before;
    const fresh = async (tag: string): Promise<{ one: Recorded[]; many: Recorded[] }> => ({ one: await record(`${tag}-1`, 1, oneN), many: await record(`${tag}-n`, sessions, perSession) });

    const a = await fresh('sqlite-full');
    const fullOne = await sqliteRun(dir, 'full-one', { synchronous: 'FULL' }, a.one, fsync);
    const fullMany = await sqliteRun(dir, 'full-many', { synchronous: 'FULL' }, a.many, fsync);
    const fullManySolo = await sqliteRun(dir, 'full-many-solo', { synchronous: 'FULL', groupCommit: false }, a.many, fsync);
    const normalOne = await sqliteRun(dir, 'normal-one', { synchronous: 'NORMAL' }, a.one, fsync);
    const normalMany = await sqliteRun(dir, 'normal-many', { synchronous: 'NORMAL' }, a.many, fsync);

    let postgres: StoreBenchResult['postgres'] = { skipped: 'no PostgreSQL URL (set TALLY_PG_URL or pass postgresUrl)' };
    if (url) postgres = await benchPostgres({ url, poolSize, oneSessionAppends: options.postgresOneSessionAppends ?? 3_000, sessions, appendsPerSession: perSession, fsyncPerSecond: fsync });

    const after = Math.round(fsyncRate(dir, options.fsyncMs ?? 1000));
    fsync = Math.round((before + after) / 2);
    const rebase = (r: AppendRate): AppendRate => ({ ...r, vsFsync: Number((r.perSecond / fsync).toFixed(2)) });
    const sqlite = {
      FULL: { one: rebase(fullOne), many: rebase(fullMany), manyWithoutGroupCommit: rebase(fullManySolo) },
      NORMAL: { one: rebase(normalOne), many: rebase(normalMany) },
    };
    const fig = (name: string, r: AppendRate, note?: string): Figure => ({
      name,
      perSecond: r.perSecond,
      baselineName: 'raw 4 KiB write+fsync',
      baselinePerSecond: fsync,
      ratio: r.vsFsync,
      ...(note === undefined ? {} : { note }),
    });
    const figures: Figure[] = [
      fig('SQLite FULL, 1 session', sqlite.FULL.one),
      fig(`SQLite FULL, ${sessions} sessions, group commit`, sqlite.FULL.many, `${fullMany.commits} commits`),
      fig(`SQLite FULL, ${sessions} sessions, one commit per append`, sqlite.FULL.manyWithoutGroupCommit, `${fullManySolo.commits} commits`),
      fig('SQLite NORMAL, 1 session', sqlite.NORMAL.one),
      fig(`SQLite NORMAL, ${sessions} sessions, group commit`, sqlite.NORMAL.many, `${normalMany.commits} commits`),
    ];
    if ('figures' in postgres) figures.push(...postgres.figures);
    return {
      dir,
      fsyncPerSecond: fsync,
      fsyncSamples: [before, after],
      sqlite,
      postgres,
      figures,
    };
  } finally {
    if (ownDir) rmSync(dir, { recursive: true, force: true });
  }
}

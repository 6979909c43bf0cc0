/**
 * Store benchmarks (issue: durable stores): durable appends per second for
 * SQLite (synchronous FULL and NORMAL) and PostgreSQL, for one session and for
 * many concurrent sessions, beside the raw fsync rate of the same disk
 * measured in the same run. One commit per append cannot beat the fsync rate;
 * group commit (many appends per transaction) is how the many-session figures
 * do. Prints nothing: the caller prints the returned numbers.
 */
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createEngine } from '../session/index.js';
import { MemoryStore } from '../store/memory.js';
import { PostgresStore } from '../store/postgres/store.js';
import { SqliteStore, type SqliteStoreOptions } from '../store/sqlite/store.js';
import type { AppendOutcome, AppendRequest, SessionHead, StoredEntry, TranscriptStore } from '../store/types.js';
import type { Figure } from './core.js';

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
  readonly postgres:
    | { readonly skipped: string }
    | { readonly one: AppendRate; readonly many: AppendRate; readonly poolSize: number; readonly synchronousCommit: string; readonly serverVersion: string };
  /** The same numbers as {@link Figure}s (baseline: the fsync rate). */
  readonly figures: Figure[];
}

interface Recorded {
  readonly genesis: StoredEntry;
  readonly head: SessionHead;
  readonly appends: AppendRequest[];
}

/** A memory store that keeps every request the engine made, to replay them elsewhere. */
class Recorder extends MemoryStore {
  readonly days = new Map<string, Recorded>();
  override async createSession(genesis: StoredEntry, head: SessionHead): Promise<'created' | 'exists'> {
    const r = await super.createSession(genesis, head);
    if (r === 'created') this.days.set(head.sessionId, { genesis, head, appends: [] });
    return r;
  }
  override async append(request: AppendRequest): Promise<AppendOutcome> {
    const r = await super.append(request);
    if (r.ok) this.days.get(request.sessionId)!.appends.push(request);
    return r;
  }
}

/** Real engine requests: `count` days of at least `appends` appends each (frames and authored turns). */
async function record(tag: string, count: number, appends: number): Promise<Recorded[]> {
  const rec = new Recorder();
  const engine = createEngine({ store: rec });
  const enc = new TextEncoder();
  const out: Recorded[] = [];
  for (let d = 0; d < count; d++) {
    const open = await engine.open({ name: `bench-${tag}-${d}`, day: '2026-11-30', nonce: `${process.pid}-${Date.now()}` });
    if (!open.ok) throw new Error(open.message);
    const sid = open.sessionId;
    for (let ord = -1; rec.days.get(sid)!.appends.length < appends; ord++) {
      const f = await engine.frame({ sessionId: sid, ordinal: ord, time: 1_000 + (ord + 1) * 1_000, data: { price: `${100 + (ord % 7)}.25` } });
      if (!f.ok) throw new Error(f.message);
      const t = await engine.turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(`{"action":"hold","ord":${ord}}`) } });
      if (!t.ok) throw new Error(t.message);
    }
    const day = rec.days.get(sid)!;
    out.push({ ...day, appends: day.appends.slice(0, appends) });
  }
  return out;
}

/** Replays every day's appends into `store`, days concurrently, each day in order; returns seconds taken by the appends. */
async function replay(store: TranscriptStore, days: readonly Recorded[]): Promise<{ appends: number; seconds: number }> {
  for (const d of days) await store.createSession(d.genesis, d.head);
  const t0 = performance.now();
  await Promise.all(
    days.map(async (d) => {
      for (const a of d.appends) {
        const o = await store.append(a);
        if (!o.ok) throw new Error(`bench append refused: ${o.reason}`);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return { appends: days.reduce((n, d) => n + d.appends.length, 0), seconds };
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
    if (url) {
      const schema = `tally_bench_${process.pid}_${Date.now().toString(36)}`;
      const store = await PostgresStore.open({ url, schema, poolSize });
      try {
        const info = new pg.Client({ connectionString: url });
        await info.connect();
        const sc = (await info.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]?.synchronous_commit ?? '?';
        const sv = (await info.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?';
        await info.end();
        const p = await fresh('pg');
        const one = rateOf(await replay(store, p.one), fsync);
        const many = rateOf(await replay(store, p.many), fsync);
        postgres = { one, many, poolSize, synchronousCommit: sc, serverVersion: sv };
      } finally {
        await store.close();
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        await c.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
        await c.end();
      }
    }

    const after = Math.round(fsyncRate(dir, options.fsyncMs ?? 1000));
    fsync = Math.round((before + after) / 2);
    const rebase = (r: AppendRate): AppendRate => ({ ...r, vsFsync: Number((r.perSecond / fsync).toFixed(2)) });
    const sqlite = {
      FULL: { one: rebase(fullOne), many: rebase(fullMany), manyWithoutGroupCommit: rebase(fullManySolo) },
      NORMAL: { one: rebase(normalOne), many: rebase(normalMany) },
    };
    if ('one' in postgres) postgres = { ...postgres, one: rebase(postgres.one), many: rebase(postgres.many) };
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
    if ('one' in postgres) {
      figures.push(fig('PostgreSQL, 1 session', postgres.one, `synchronous_commit=${postgres.synchronousCommit}`));
      figures.push(fig(`PostgreSQL, ${sessions} sessions, pool ${poolSize}`, postgres.many, 'server-side group commit of concurrent transactions'));
    }
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

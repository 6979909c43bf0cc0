/**
 * PostgreSQL store benchmark: durable appends per second for one session and
 * for many concurrent sessions (with group commit, and with one statement per
 * append), each beside the raw commit rate of the same server measured in the
 * same run: connections committing one entry-sized row per transaction (a
 * prepared single-row INSERT, autocommit) — one connection for the
 * one-session figure, `poolSize` connections for the many-session ones. Each
 * raw rate is the mean of a probe just before and one just after the figure
 * it is the baseline of (the machine may be shared). Everything lives in one
 * fresh schema, dropped at the end.
 */
import pg from 'pg';
import { PostgresStore } from '../store/postgres/store.js';
import type { Figure } from './core.js';
import { record, replay, type Recorded } from './recorded.js';

/** Options of {@link benchPostgres}. */
export interface BenchPostgresOptions {
  readonly url: string;
  /** Pool size of the store and connections of the raw many-connection probe. */
  readonly poolSize: number;
  readonly oneSessionAppends: number;
  readonly sessions: number;
  readonly appendsPerSession: number;
  /** The disk's raw fsync rate, for the notes. */
  readonly fsyncPerSecond: number;
}

/** One measured rate beside its raw commit baseline. */
export interface PostgresRate {
  readonly appends: number;
  readonly perSecond: number;
  /** Raw commits per second of the baseline (mean of the probes before and after). */
  readonly rawPerSecond: number;
  readonly rawSamples: readonly [before: number, after: number];
  /** `perSecond / rawPerSecond`. */
  readonly ratio: number;
}

/** Everything {@link benchPostgres} measured. */
export interface PostgresBenchResult {
  readonly one: PostgresRate;
  readonly many: PostgresRate & { readonly batches: number; readonly batchedAppends: number; readonly batchFailures: number };
  readonly manyOneStatementEach: PostgresRate;
  readonly poolSize: number;
  readonly synchronousCommit: string;
  readonly serverVersion: string;
  readonly figures: Figure[];
}

/** `connections` clients commit `total` rows of `rowBytes` bytes between them, one per transaction; rows per second. */
async function rawCommits(url: string, table: string, connections: number, total: number, rowBytes: number): Promise<number> {
  const clients = await Promise.all(
    Array.from({ length: connections }, async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    }),
  );
  const row = Buffer.alloc(rowBytes, 0x5a);
  const per = Math.ceil(total / connections);
  try {
    const t0 = performance.now();
    await Promise.all(clients.map(async (c) => {
      for (let i = 0; i < per; i++) await c.query({ name: 'raw_commit', text: `INSERT INTO ${table} (b) VALUES ($1)`, values: [row] });
    }));
    return (connections * per) / ((performance.now() - t0) / 1000);
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}

async function withStore<T>(url: string, schema: string, poolSize: number, maxBatch: number | undefined, fn: (s: PostgresStore) => Promise<T>): Promise<T> {
  const store = await PostgresStore.open({ url, schema, poolSize, ...(maxBatch === undefined ? {} : { groupCommit: { maxBatch } }) });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function meanEntryBytes(days: readonly Recorded[]): number {
  let n = 0;
  let bytes = 0;
  for (const d of days) for (const a of d.appends) (n++, (bytes += a.entry.bytes.byteLength));
  return Math.max(1, Math.round(bytes / Math.max(1, n)));
}

/**
 * Runs the PostgreSQL figures in a fresh schema (dropped afterwards). Prints nothing.
 *
 * @example
 * const r = await benchPostgres({ url, poolSize: 16, oneSessionAppends: 500, sessions: 64, appendsPerSession: 50, fsyncPerSecond: 4000 });
 */
export async function benchPostgres(o: BenchPostgresOptions): Promise<PostgresBenchResult> {
  const schema = `tally_bench_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: o.url });
  await admin.connect();
  try {
    const sc = (await admin.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]?.synchronous_commit ?? '?';
    const sv = (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?';
    // The store creates the schema; the raw table lives in it so one DROP removes everything.
    await withStore(o.url, schema, 1, 1, async () => {});
    const table = `${pg.escapeIdentifier(schema)}.raw_commits`;
    await admin.query(`CREATE TABLE ${table} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, b bytea NOT NULL)`);
    const tag = `pg-${process.pid}-${Date.now().toString(36)}`;
    const one = await record(`${tag}-1`, 1, o.oneSessionAppends);
    const many = await record(`${tag}-n`, o.sessions, o.appendsPerSession);
    const manySolo = await record(`${tag}-s`, o.sessions, o.appendsPerSession);
    const rowBytes = meanEntryBytes([...one, ...many]);

    const measure = async (connections: number, total: number, run: () => Promise<{ appends: number; seconds: number }>): Promise<PostgresRate> => {
      const before = await rawCommits(o.url, table, connections, total, rowBytes);
      const r = await run();
      const after = await rawCommits(o.url, table, connections, total, rowBytes);
      const raw = (before + after) / 2;
      const perSecond = r.appends / r.seconds;
      return { appends: r.appends, perSecond: Math.round(perSecond), rawPerSecond: Math.round(raw), rawSamples: [Math.round(before), Math.round(after)], ratio: Number((perSecond / raw).toFixed(3)) };
    };
    const oneRate = await withStore(o.url, schema, o.poolSize, undefined, (s) => measure(1, o.oneSessionAppends, () => replay(s, one)));
    let stats = { batches: 0, batchedAppends: 0, batchFailures: 0 };
    const manyRate = await withStore(o.url, schema, o.poolSize, undefined, async (s) => {
      const r = await measure(o.poolSize, o.sessions * o.appendsPerSession, () => replay(s, many));
      stats = s.groupCommitStats;
      return r;
    });
    const soloRate = await withStore(o.url, schema, o.poolSize, 1, (s) => measure(o.poolSize, o.sessions * o.appendsPerSession, () => replay(s, manySolo)));

    const fig = (name: string, r: PostgresRate, connections: number, note: string): Figure => ({
      name,
      perSecond: r.perSecond,
      baselineName: `raw commits, ${connections} connection${connections === 1 ? '' : 's'} (one ${rowBytes}-byte row per transaction)`,
      baselinePerSecond: r.rawPerSecond,
      ratio: r.ratio,
      note: `${note}; raw before/after ${r.rawSamples[0]}/${r.rawSamples[1]}; ${(r.perSecond / o.fsyncPerSecond).toFixed(2)}× raw fsync`,
    });
    const mean = stats.batches === 0 ? 0 : stats.batchedAppends / stats.batches;
    const figures: Figure[] = [
      fig('PostgreSQL, 1 session', oneRate, 1, `synchronous_commit=${sc}, PostgreSQL ${sv}`),
      fig(`PostgreSQL, ${o.sessions} sessions, pool ${o.poolSize}, group commit`, manyRate, o.poolSize, `${stats.batches} batches of ${mean.toFixed(1)} appends on average, ${stats.batchFailures} failed`),
      fig(`PostgreSQL, ${o.sessions} sessions, pool ${o.poolSize}, one statement per append`, soloRate, o.poolSize, 'group commit off (maxBatch 1)'),
    ];
    return { one: oneRate, many: { ...manyRate, ...stats }, manyOneStatementEach: soloRate, poolSize: o.poolSize, synchronousCommit: sc, serverVersion: sv, figures };
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`).catch(() => {});
    await admin.end();
  }
}

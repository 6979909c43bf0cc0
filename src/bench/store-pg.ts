/**
 * PostgreSQL store benchmark: durable appends per second for one session and
 * for many concurrent sessions (with group commit, and with one statement per
 * append), each beside the raw commit rate of the same server measured in the
 * same run: connections committing one entry-sized row per transaction (a
 * prepared single-row INSERT, autocommit) — one connection for the
 * one-session figure, `poolSize` connections for the many-session ones. Raw
 * and Tally rounds alternate (the machine may be shared, so both see the same
 * load). Everything lives in one fresh schema, dropped at the end.
 */
import pg from 'pg';
import { PostgresStore } from '../store/postgres/store.js';
import type { Figure } from './core.js';
import { record, type Recorded } from './recorded.js';

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
  /** Raw commits per second of the baseline, over all its rounds. */
  readonly rawPerSecond: number;
  /** The slowest and the fastest raw round (a wide range means a noisy machine). */
  readonly rawRange: readonly [min: number, max: number];
  /** The median over rounds of (Tally round rate / the raw round just before it): robust to a burst of load in one round. */
  readonly medianRoundRatio: number;
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

/** `connections` clients, each committing rows of `rowBytes` bytes one per transaction (a prepared single-row INSERT). */
class RawCommits {
  private constructor(
    private readonly clients: pg.Client[],
    private readonly sql: string,
    private readonly row: Buffer,
  ) {}

  static async open(url: string, table: string, connections: number, rowBytes: number): Promise<RawCommits> {
    const clients: pg.Client[] = [];
    for (let i = 0; i < connections; i++) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      clients.push(c);
    }
    return new RawCommits(clients, `INSERT INTO ${table} (b) VALUES ($1)`, Buffer.alloc(rowBytes, 0x5a));
  }

  /** Commits at least `total` rows between the connections; returns rows and seconds. */
  async run(total: number): Promise<{ rows: number; seconds: number }> {
    const per = Math.max(1, Math.ceil(total / this.clients.length));
    const t0 = performance.now();
    await Promise.all(this.clients.map(async (c) => {
      for (let i = 0; i < per; i++) await c.query({ name: 'raw_commit', text: this.sql, values: [this.row] });
    }));
    return { rows: per * this.clients.length, seconds: (performance.now() - t0) / 1000 };
  }

  async close(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.end()));
  }
}

const ROUNDS = 10;

/**
 * Replays `days` into `store` in {@link ROUNDS} rounds (each round every day's
 * next slice of appends, days concurrently), each round beside a raw round
 * of as many commits (raw first in even rounds, Tally first in odd ones):
 * both rates are measured through the same moments of a shared machine's
 * load.
 */
async function interleaved(store: PostgresStore, days: readonly Recorded[], raw: RawCommits): Promise<PostgresRate> {
  for (const d of days) await store.createSession(d.genesis, d.head);
  let appends = 0;
  let seconds = 0;
  let rawRows = 0;
  let rawSeconds = 0;
  const samples: number[] = [];
  const roundRatios: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const slices = days.map((d) => d.appends.slice(Math.floor((r * d.appends.length) / ROUNDS), Math.floor(((r + 1) * d.appends.length) / ROUNDS)));
    const n = slices.reduce((x, s) => x + s.length, 0);
    const tally = async (): Promise<number> => {
      const t0 = performance.now();
      await Promise.all(slices.map(async (slice) => {
        for (const a of slice) {
          const o = await store.append(a);
          if (!o.ok) throw new Error(`bench append refused: ${o.reason}`);
        }
      }));
      return (performance.now() - t0) / 1000;
    };
    // A-B then B-A: whichever runs second meets the server's after-work of the first
    // (WAL writing, autovacuum of the table just filled), so the order alternates.
    let took = 0;
    if (r % 2 === 1) took = await tally();
    const b = await raw.run(n);
    if (r % 2 === 0) took = await tally();
    rawRows += b.rows;
    rawSeconds += b.seconds;
    samples.push(b.rows / b.seconds);
    seconds += took;
    appends += n;
    roundRatios.push(n / took / (b.rows / b.seconds));
  }
  const perSecond = appends / seconds;
  const rawPerSecond = rawRows / rawSeconds;
  return { appends, perSecond: Math.round(perSecond), rawPerSecond: Math.round(rawPerSecond), rawRange: [Math.round(Math.min(...samples)), Math.round(Math.max(...samples))], medianRoundRatio: Number(median(roundRatios).toFixed(3)), ratio: Number((perSecond / rawPerSecond).toFixed(3)) };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function withStore<T>(url: string, schema: string, poolSize: number, groupCommit: { maxBatch: number; maxInFlight: number } | undefined, fn: (s: PostgresStore) => Promise<T>): Promise<T> {
  const store = await PostgresStore.open({ url, schema, poolSize, ...(groupCommit === undefined ? {} : { groupCommit }) });
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
    await withStore(o.url, schema, 1, undefined, async () => {});
    const table = `${pg.escapeIdentifier(schema)}.raw_commits`;
    await admin.query(`CREATE TABLE ${table} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, b bytea NOT NULL)`);
    const tag = `pg-${process.pid}-${Date.now().toString(36)}`;
    const one = await record(`${tag}-1`, 1, o.oneSessionAppends);
    const many = await record(`${tag}-n`, o.sessions, o.appendsPerSession);
    const manySolo = await record(`${tag}-s`, o.sessions, o.appendsPerSession);
    const rowBytes = meanEntryBytes([...one, ...many]);

    const measure = async (connections: number, days: readonly Recorded[], groupCommit?: { maxBatch: number; maxInFlight: number }): Promise<PostgresRate & { batches: number; batchedAppends: number; batchFailures: number }> => {
      const raw = await RawCommits.open(o.url, table, connections, rowBytes);
      try {
        return await withStore(o.url, schema, o.poolSize, groupCommit, async (s) => ({ ...(await interleaved(s, days, raw)), ...s.groupCommitStats }));
      } finally {
        await raw.close();
      }
    };
    const oneRate = await measure(1, one);
    const manyRate = await measure(o.poolSize, many);
    const soloRate = await measure(o.poolSize, manySolo, { maxBatch: 1, maxInFlight: o.poolSize });

    const fig = (name: string, r: PostgresRate, connections: number, note: string): Figure => ({
      name,
      perSecond: r.perSecond,
      baselineName: `raw commits, ${connections} connection${connections === 1 ? '' : 's'} (one ${rowBytes}-byte row per transaction)`,
      baselinePerSecond: r.rawPerSecond,
      ratio: r.ratio,
      note: `${note}; median round ratio ${r.medianRoundRatio.toFixed(3)}; raw rounds ${r.rawRange[0]}–${r.rawRange[1]}/s; ${(r.perSecond / o.fsyncPerSecond).toFixed(2)}× raw fsync`,
    });
    const mean = manyRate.batches === 0 ? 0 : manyRate.batchedAppends / manyRate.batches;
    const figures: Figure[] = [
      fig('PostgreSQL, 1 session', oneRate, 1, `synchronous_commit=${sc}, PostgreSQL ${sv}`),
      fig(`PostgreSQL, ${o.sessions} sessions, pool ${o.poolSize}, group commit`, manyRate, o.poolSize, `${manyRate.batches} batches of ${mean.toFixed(1)} appends on average, ${manyRate.batchFailures} failed`),
      fig(`PostgreSQL, ${o.sessions} sessions, pool ${o.poolSize}, one statement per append`, soloRate, o.poolSize, `group commit off (maxBatch 1, up to ${o.poolSize} statements at once)`),
    ];
    return { one: oneRate, many: manyRate, manyOneStatementEach: soloRate, poolSize: o.poolSize, synchronousCommit: sc, serverVersion: sv, figures };
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`).catch(() => {});
    await admin.end();
  }
}

/**
 * The PostgreSQL benchmarks run bounded, report each Tally figure beside a raw
 * commit baseline measured in the same run, and leave no schema behind (the
 * store bench's and the served wire bench's). No wall-clock assertions.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { benchPostgres } from '../../src/bench/store-pg.js';
import { PG_URL, pgExec, pgReady, warnIfSkipped } from './helpers/pg.js';
import { requireFreshDist } from './helpers/procs.js';

warnIfSkipped('bench-pg.test.ts');

async function schemasLike(prefix: string): Promise<string[]> {
  const r = await pgExec('SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)', [prefix]);
  return r.rows.map((x: { nspname: string }) => x.nspname);
}

describe.skipIf(!pgReady)('PostgreSQL benchmarks', () => {
  beforeAll(requireFreshDist);

  it('benchPostgres: one session, many sessions with and without group commit, each beside raw commits; drops its schema', async () => {
    const r = await benchPostgres({ url: PG_URL!, poolSize: 4, oneSessionAppends: 20, sessions: 8, appendsPerSession: 6, fsyncPerSecond: 1000 });
    expect(r.figures).toHaveLength(3);
    expect(r.figures[0]!.baselineName).toMatch(/^raw commits, 1 connection /);
    expect(r.figures[1]!.baselineName).toMatch(/^raw commits, 4 connections /);
    for (const f of r.figures) {
      expect(f.perSecond).toBeGreaterThan(0);
      expect(f.baselinePerSecond).toBeGreaterThan(0);
      expect(f.ratio).toBeCloseTo(f.perSecond / f.baselinePerSecond, 1);
    }
    expect(r.one.appends).toBe(20);
    expect(r.many.appends).toBe(48);
    expect(r.many.batchFailures).toBe(0);
    expect(await schemasLike(`tally_bench_${process.pid}_`)).toEqual([]);
  });

  it('benchWireServed with PostgreSQL drops the schema its server created', async () => {
    const { benchWireServed } = await import('../../dist/bench/wire-served.js');
    const r = await benchWireServed({ turns: 20, concurrency: 2, maxMs: 20_000, postgresUrl: PG_URL! });
    expect(r.runs['postgres']?.failures).toBe(0);
    expect(await schemasLike(`bench_wire_${process.pid}_`)).toEqual([]);
  });
});

/**
 * Several `tally serve` processes on one PostgreSQL database are safe
 * together: two servers race the same frames and turns (identical retries
 * and conflicts, spread over both), and each slot still has exactly one
 * answer; both servers then describe the same head. Needs TALLY_PG_URL (the
 * test says how to enable it when it skips).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { dropSchema, freshSchemaName, pgReady, PG_URL, warnIfSkipped } from '../store/helpers/pg.js';
import { TOKENS, cleanup, startServer, type ServerProc } from './helpers.js';
import { raceAndCheck } from './race.js';

warnIfSkipped('tests/server/postgres.test.ts');
const schema = freshSchemaName('wire');
const servers: ServerProc[] = [];

beforeAll(async () => {
  if (!pgReady) return;
  const u = new URL(PG_URL!);
  u.searchParams.set('schema', schema);
  // Start one first so the schema migration is not part of the race, then the second.
  servers.push(await startServer({ db: u.toString(), args: ['--rate', '100000', '--burst', '100000', '--log-level', 'warn'] }));
  servers.push(await startServer({ db: u.toString(), args: ['--rate', '100000', '--burst', '100000', '--log-level', 'warn'] }));
});
afterAll(async () => {
  for (const s of servers) expect(await s.stop()).toBe(0);
  if (pgReady) await dropSchema(schema);
  cleanup();
});

describe.skipIf(!pgReady)('two servers, one PostgreSQL database', () => {
  it('race the same turns through both servers: exactly one answer per slot, nothing lost, both agree', async () => {
    const report = await raceAndCheck(servers.map((s) => s.url), TOKENS.runtime, { sessions: 4, slots: 8, same: 4, conflicting: 2, tag: `pg-${process.pid}` });
    expect(report.turnsOk - report.duplicates).toBe(4 * 8);
    expect(report.duplicates).toBe(report.sameWins * 3);
    expect(report.conflicts).toBe(report.sameWins * 2 + (4 * 8 - report.sameWins) * 5);
    expect(report.retries).toBe(0);
    // Both servers see the same heads (describe is never stale across processes).
    const [a, b] = servers.map((s) => createClient({ url: s.url, token: TOKENS.auditor }));
    for (const sid of report.sessionIds) {
      const [da, db] = await Promise.all([a!.describe(sid), b!.describe(sid)]);
      expect(da).toEqual(db);
      expect(da).toMatchObject({ ok: true, size: 1 + 2 * 8, phase: 'awaiting-frame' });
    }
  });
});

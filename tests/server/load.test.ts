/**
 * Bounded load on loopback: one `tally serve` (a second process, SQLite) and
 * many concurrent clients sending duplicate frames, identical turn retries
 * and conflicting turns for every slot. Exactly-once holds and nothing is
 * lost. Bounded: 6 sessions × 12 slots × 8 turns + 2 frames each, 720 requests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS, cleanup, startServer, type ServerProc } from './helpers.js';
import { raceAndCheck } from './race.js';

let srv: ServerProc;
beforeAll(async () => {
  srv = await startServer({ args: ['--rate', '100000', '--burst', '100000', '--log-level', 'warn'] });
});
afterAll(async () => {
  expect(await srv.stop()).toBe(0);
  cleanup();
});

describe('load', () => {
  it('many concurrent clients, duplicates and conflicts mixed in: one winner per slot, every answer durable, no 5xx', async () => {
    const report = await raceAndCheck([srv.url], TOKENS.runtime, { sessions: 6, slots: 12, same: 5, conflicting: 3, tag: `load-${process.pid}` });
    expect(report.turnsOk - report.duplicates).toBe(6 * 12);
    expect(report.duplicates).toBeGreaterThanOrEqual(6 * 12 * 4);
    expect(report.conflicts).toBeGreaterThanOrEqual(6 * 12 * 3); // whoever wins a slot, at least the 3 others lose
    expect(report.requests).toBe(6 * 12 * (2 + 8));
    expect(report.retries).toBe(0);
    expect(srv.stderr()).not.toMatch(/"level":50/); // no error lines
  });
});

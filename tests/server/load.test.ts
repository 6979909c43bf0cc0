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
  it('many concurrent clients, duplicates and conflicts mixed in: one winner per slot (whichever body it is), outcomes counted exactly, every answer durable, no 5xx', async () => {
    const report = await raceAndCheck([srv.url], TOKENS.runtime, { sessions: 6, slots: 12, same: 5, conflicting: 3, tag: `load-${process.pid}` });
    // Any of the eight bodies may win a slot. Counted exactly: a slot won by the five identical
    // bodies answers 5 ok (1 new + 4 duplicates) and 3 conflicts; one won by a conflicting body
    // answers 1 ok (no duplicate) and 7 conflicts.
    const slots = 6 * 12;
    const otherWins = slots - report.sameWins;
    expect(report.turnsOk - report.duplicates).toBe(slots);
    expect(report.duplicates).toBe(report.sameWins * 4);
    expect(report.conflicts).toBe(report.sameWins * 3 + otherWins * 7);
    expect(report.turnsOk + report.conflicts).toBe(slots * 8);
    expect(report.requests).toBe(6 * 12 * (2 + 8));
    expect(report.retries).toBe(0);
    expect(srv.stderr()).not.toMatch(/"level":50/); // no error lines
  });
});

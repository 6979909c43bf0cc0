/**
 * The continuity rule (src/receipt/signing/continuity.ts): every signing-log
 * row carries the database's position, and the engine key refuses to sign
 * (TALLY_SIGN_TIMELINE_CHANGED) on a store whose system or timeline moved
 * since the last row, unless its own last row is still held or an operator
 * acknowledged. Here: the rule as a table and as a property (fast-check,
 * seed printed), and a real SQLite store copied to another file (a restored
 * backup) — refused by the notary, across a reopen, until `tally operator
 * acknowledge-failover --confirm`. PostgreSQL's failover is in
 * tests/store/failover.test.ts.
 */
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { ContinuityRefusedError, createNotary, generateEngineKey, judgeContinuity } from '../../src/receipt/index.js';
import { SqliteStore, type ContinuityEvent, type ContinuityState, type SignedCheckpointRecord, type StorePosition } from '../../src/store/index.js';
import { intentDay } from './fixtures.js';
import { tempDir } from '../store/helpers/tmp.js';
import { tally } from '../cli/helpers.js';
import { newEngineKey, startServer } from '../server/helpers.js';

const key = generateEngineKey('tally.example/desk');
const dir = tempDir('continuity');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const P = (system: string, timeline: number, lsn = '0/1'): StorePosition => ({ system, timeline, lsn });
const row = (position: StorePosition | undefined, size = 3): SignedCheckpointRecord => ({ origin: 'e/x', size, root: 'ab'.repeat(32), signedAt: 1, ...(position ? { position } : {}) });
const ev = (kind: ContinuityEvent['kind'], position: StorePosition, at = 1): ContinuityEvent => ({ kind, position, at, detail: kind });

describe('judgeContinuity', () => {
  const here = P('7', 2, '0/9');
  const cases: [string, ContinuityState, boolean | 'record'][] = [
    ['an empty signing log', { current: here, events: [] }, true],
    ['a last row written before positions were kept', { current: here, last: row(undefined), events: [] }, true],
    ['the last row on this system and timeline', { current: here, last: row(P('7', 2, '0/5')), events: [] }, true],
    ['the last row on an earlier timeline, no evidence', { current: here, last: row(P('7', 1)), events: [] }, false],
    ['the last row on another system, no evidence', { current: here, last: row(P('8', 2)), events: [] }, false],
    ['an earlier timeline, this signer’s own last row held', { current: here, last: row(P('7', 1)), mine: { record: row(P('7', 1)), held: true }, events: [] }, true],
    ['an earlier timeline, this signer’s own last row lost', { current: here, last: row(P('7', 1)), mine: { record: row(P('7', 1), 9), held: false }, events: [] }, 'record'],
    ['the same timeline, own last row lost (a rollback)', { current: here, last: row(P('7', 2)), mine: { record: row(P('7', 2), 9), held: false }, events: [] }, 'record'],
    ['an earlier timeline acknowledged here', { current: here, last: row(P('7', 1)), events: [ev('acknowledged', P('7', 2))] }, true],
    ['an acknowledgement of another timeline', { current: here, last: row(P('7', 1)), events: [ev('acknowledged', P('7', 3))] }, false],
    ['a recorded refusal here', { current: here, last: row(P('7', 2)), mine: { record: row(P('7', 2)), held: true }, events: [ev('refused', P('7', 2))] }, false],
    ['a refusal here, then acknowledged', { current: here, last: row(P('7', 1)), events: [ev('refused', P('7', 2)), ev('acknowledged', P('7', 2))] }, true],
    ['acknowledged, then refused again', { current: here, last: row(P('7', 2)), events: [ev('acknowledged', P('7', 2)), ev('refused', P('7', 2))] }, false],
  ];
  it.each(cases)('%s', (_name, state, want) => {
    const v = judgeContinuity(state);
    expect(v.ok).toBe(want === true);
    if (!v.ok) expect(v.record !== undefined).toBe(want === 'record');
  });

  it('property: a signer whose own last row is gone never signs; a move of system or timeline signs only with evidence', () => {
    const seed = Number(process.env['FC_SEED'] ?? Date.now() % 2 ** 31);
    console.log(`[continuity.test.ts] fast-check seed ${seed}`);
    const pos = fc.record({ system: fc.constantFrom('1', '2'), timeline: fc.integer({ min: 1, max: 3 }), lsn: fc.constant('0/1') });
    const event = fc.record({ kind: fc.constantFrom('refused' as const, 'acknowledged' as const), position: pos, at: fc.nat(), detail: fc.constant('d') });
    const state = fc.record(
      { current: pos, last: fc.option(pos.map((p) => row(p)), { nil: undefined }), mine: fc.option(fc.record({ record: pos.map((p) => row(p)), held: fc.boolean() }), { nil: undefined }), events: fc.array(event, { maxLength: 4 }) },
      { requiredKeys: ['current', 'events'] },
    );
    fc.assert(
      fc.property(state, (drawn) => {
        const s: ContinuityState = { current: drawn.current, events: drawn.events, ...(drawn.last ? { last: drawn.last } : {}), ...(drawn.mine ? { mine: drawn.mine } : {}) };
        const v = judgeContinuity(s);
        if (s.mine?.held === false) return !v.ok;
        const last = s.last?.position;
        const moved = last !== undefined && (last.system !== s.current.system || last.timeline !== s.current.timeline);
        const latestHere = [...s.events].reverse().find((e) => e.position.system === s.current.system && e.position.timeline === s.current.timeline);
        if (latestHere?.kind === 'refused') return !v.ok;
        if (!moved) return v.ok;
        return v.ok === (latestHere?.kind === 'acknowledged' || s.mine !== undefined);
      }),
      { seed, numRuns: 500 },
    );
  });
});

describe('a SQLite store copied to another file (a restored backup)', () => {
  it('is refused by the notary, across a reopen, until an operator acknowledges; the file it was copied from signs on', async () => {
    const a = join(dir, 'a.db');
    const store = new SqliteStore(a);
    const engine = createEngine({ store });
    const { sid } = await intentDay({ engine, name: 'copied-day' });
    const notary = createNotary({ key });
    expect((await notary.issueCheckpoint(engine, sid, 3)).ok).toBe(true);
    // A reopen of the same file is the same store: it signs on.
    await store.close();
    const same = new SqliteStore(a);
    expect((await notary.issueCheckpoint(createEngine({ store: same }), sid, 4)).ok).toBe(true);
    await same.close();

    const b = join(dir, 'b.db');
    copyFileSync(a, b);
    for (let round = 0; round < 2; round++) {
      const copy = new SqliteStore(b);
      try {
        const refused = notary.issueCheckpoint(createEngine({ store: copy }), sid, 5);
        await expect(refused).rejects.toBeInstanceOf(ContinuityRefusedError);
        await expect(refused).rejects.toMatchObject({ code: 'TALLY_SIGN_TIMELINE_CHANGED', message: expect.stringMatching(/moved from system sqlite:[0-9a-f]{32}:\d+:\d+ to sqlite:/) });
        expect(await copy.signedCheckpoints(`${key.name}/${sid}`)).toHaveLength(2); // nothing recorded
      } finally {
        await copy.close();
      }
    }

    // A signing server started on the copy says so at start, at error level.
    const served = join(dir, 'served.key');
    newEngineKey(served, 'tally.example/desk');
    const srv = await startServer({ db: b, args: ['--key', served], dir });
    try {
      await srv.untilStderr((e) => e.includes('"event":"continuity"'));
      expect(JSON.parse(srv.stderr().split('\n').find((l) => l.includes('"event":"continuity"'))!)).toMatchObject({ level: 50, code: 'TALLY_SIGN_TIMELINE_CHANGED', reason: expect.stringContaining('the store moved from system') });
      // And /readyz fails its continuity check for as long as it lasts (a load balancer sends it no traffic).
      const ready = await fetch(`${srv.url}/readyz`);
      const report = (await ready.json()) as { failed: string[]; checks: Record<string, { state: string; reason?: string }> };
      expect([ready.status, report.failed]).toEqual([503, ['continuity']]);
      expect(report.checks['continuity']!.reason).toMatch(/^TALLY_SIGN_TIMELINE_CHANGED: the store moved from system/);
    } finally {
      await srv.stop();
    }

    // The operator's check shows the store holds what was signed; without --confirm nothing is written.
    const dry = tally(['operator', 'acknowledge-failover', '--db', b]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/signing +refused: the store moved from system/);
    expect(dry.stdout).toMatch(new RegExp(`held +tally\\.example/desk/${sid} size 4 \\(signing-log; the store holds \\d+\\)`));
    expect(dry.stdout).toContain('nothing recorded; run again with --confirm');
    const ack = tally(['operator', 'acknowledge-failover', '--db', b, '--reason', 'restored from backup 12', '--confirm', '--json']);
    expect(ack.code).toBe(0);
    const j = JSON.parse(ack.stdout) as { ok: boolean; lost: unknown[]; verdict: { ok: boolean } };
    expect([j.ok, j.lost, j.verdict.ok]).toEqual([true, [], false]);

    // Acknowledged: a server on the copy is ready again.
    const again = await startServer({ db: b, args: ['--key', served], dir });
    try {
      const ready = await fetch(`${again.url}/readyz`);
      const report = (await ready.json()) as { checks: Record<string, { state: string; detail?: string }> };
      expect([ready.status, report.checks['continuity']]).toEqual([200, { state: 'ok', detail: 'acknowledged' }]);
    } finally {
      await again.stop();
    }
    const copy = new SqliteStore(b);
    try {
      expect((await notary.issueCheckpoint(createEngine({ store: copy }), sid, 5)).ok).toBe(true);
      const [e] = (await copy.continuityState()).events;
      expect(e).toMatchObject({ kind: 'acknowledged', detail: expect.stringContaining('restored from backup 12') });
    } finally {
      await copy.close();
    }
    // The original file never moved: it signs on, with no acknowledgement.
    const orig = new SqliteStore(a);
    try {
      expect((await notary.issueCheckpoint(createEngine({ store: orig }), sid, 6)).ok).toBe(true);
      expect((await orig.continuityState()).events).toEqual([]);
    } finally {
      await orig.close();
    }
  }, 60_000);
});

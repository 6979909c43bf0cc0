import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/session/index.js';

const enc = new TextEncoder();

describe('concurrent calls on one session in one process', () => {
  it('exactly one of N racing different turns for a slot is written; identical racers all get its hash (seed 0xc0c1)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 2, maxLength: 12 }), async (s, picks) => {
        const engine = createEngine();
        const open = await engine.open({ name: 'race' });
        if (!open.ok) throw new Error();
        const f = await engine.frame({ sessionId: open.sessionId, ordinal: -1, time: 0 });
        if (!f.ok) throw new Error();
        const calls = picks.map((p) =>
          s.schedule(Promise.resolve(p)).then((v) =>
            engine.turn({ sessionId: open.sessionId, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(`racer ${v}`) } }),
          ),
        );
        await s.waitAll();
        const results = await Promise.all(calls);
        const written = results.filter((r) => r.ok && !r.duplicate);
        expect(written).toHaveLength(1);
        const winner = written[0]!;
        const winnerPick = picks[results.indexOf(winner)];
        results.forEach((r, i) => {
          if (picks[i] === winnerPick) expect(r).toMatchObject({ ok: true, entryHash: winner.ok ? winner.entryHash : '' });
          else expect(r).toMatchObject({ ok: false, diagnostic: 'turn-conflict' });
        });
        const d = await engine.describe(open.sessionId);
        expect(d).toMatchObject({ ok: true, size: 3, phase: 'awaiting-frame' });
      }),
      { seed: 0xc0c1, numRuns: 100 },
    );
  });

  it('1000 concurrent identical turns all return the same hash and write one entry', async () => {
    const engine = createEngine();
    const open = await engine.open({ name: 'storm' });
    if (!open.ok) throw new Error();
    const f = await engine.frame({ sessionId: open.sessionId, ordinal: -1, time: 0 });
    if (!f.ok) throw new Error();
    const input = { sessionId: open.sessionId, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode('same') } } as const;
    const rs = await Promise.all(Array.from({ length: 1000 }, () => engine.turn(input)));
    expect(new Set(rs.map((r) => (r.ok ? r.entryHash : 'x'))).size).toBe(1);
    expect(rs.filter((r) => r.ok && !r.duplicate)).toHaveLength(1);
    expect(await engine.describe(open.sessionId)).toMatchObject({ size: 3 });
  });
});

describe('bounded session cache', () => {
  it('keeps at most maxCachedSessions states and re-derives evicted ones from the store', async () => {
    const { Engine } = await import('../../src/session/index.js');
    const { MemoryStore } = await import('../../src/store/index.js');
    const store = new MemoryStore();
    const engine = new Engine({ store, maxCachedSessions: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const o = await engine.open({ name: `cache-${i}` });
      if (!o.ok) throw new Error(o.message);
      const f = await engine.frame({ sessionId: o.sessionId, ordinal: -1, time: i });
      if (!f.ok) throw new Error(f.message);
      ids.push(o.sessionId);
    }
    // Every session still answers correctly (evicted ones are reloaded), and retries stay idempotent.
    for (const [i, sid] of ids.entries()) {
      const d = await engine.describe(sid);
      expect(d).toMatchObject({ ok: true, phase: 'pending', size: 2 });
      const again = await engine.frame({ sessionId: sid, ordinal: -1, time: i });
      expect(again).toMatchObject({ ok: true, duplicate: true });
    }
    expect((engine as unknown as { cache: { size: number } }).cache.size).toBeLessThanOrEqual(2);
    expect(() => new Engine({ maxCachedSessions: 0 })).toThrow(RangeError);
  });
});

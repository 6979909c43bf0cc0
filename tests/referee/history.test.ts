import { describe, expect, it } from 'vitest';
import { RefereeHistory, createRefereeRuler } from '../../src/referee/index.js';
import { Engine } from '../../src/session/index.js';
import { MemoryStore } from '../../src/store/index.js';
import type { StoredEntry } from '../../src/store/index.js';
import { carry, frameTime, iso, openIntent, signed, spec as intentSpec } from '../rules/fixtures.js';
import { Desk, refereeSpec } from './fixtures.js';

/** Counts the rows a history reads. */
function counting(store: MemoryStore) {
  const reads = { rows: 0 };
  return {
    reads,
    readRange: async (sid: string, from: number, to: number): Promise<StoredEntry[]> => {
      const rows = await store.readRange(sid, from, to);
      reads.rows += rows.length;
      return rows;
    },
  };
}

describe('RefereeHistory: state folded from the transcript', () => {
  it('continues from its last fold (reads only the new entries) and re-folds what it evicted', async () => {
    const store = new MemoryStore();
    const a = await Desk.open(refereeSpec('h-a'), { store });
    const b = await Desk.open(refereeSpec('h-b'), { store });
    let n = 0;
    const admit = async (d: Desk) => d.answer(carry(await signed(openIntent({ nonce: `h${n++}`, ttl: iso(frameTime(d.ordinal) + 1_800_000) }))));
    await admit(a);
    await admit(b);
    await admit(b);
    const src = counting(store);
    const h = new RefereeHistory(src, 1);
    const sizeA = (await store.loadHead(a.sid))!.size;
    const sizeB = (await store.loadHead(b.sid))!.size;
    expect((await h.fold(a.sid, sizeA))!.fold.locked).toBe('1');
    const afterFirst = src.reads.rows;
    expect(afterFirst).toBe(sizeA);
    // Same size again: one row read to check the last entry is still the one folded.
    await h.fold(a.sid, sizeA);
    expect(src.reads.rows).toBe(afterFirst + 1);
    // Another session evicts the first (maxSessions = 1); coming back re-folds from the genesis, same result.
    expect((await h.fold(b.sid, sizeB))!.fold.locked).toBe('2');
    const before = src.reads.rows;
    expect((await h.fold(a.sid, sizeA))!.fold.locked).toBe('1');
    expect(src.reads.rows - before).toBe(sizeA);
    // A smaller size is a fold from the start up to there.
    expect((await h.fold(b.sid, 3))!.fold.locked).toBe('1');
  });

  it('has nothing to say about a session without a mandate, and refuses to fold past the stored entries', async () => {
    const store = new MemoryStore();
    const plain = await Desk.open(intentSpec('h-plain'), { store });
    const h = new RefereeHistory(store);
    expect(await h.fold(plain.sid, 1)).toBeUndefined();
    const d = await Desk.open(refereeSpec('h-short'), { store });
    await expect(h.fold(d.sid, 5)).rejects.toMatchObject({ code: 'TALLY_REFEREE_TRANSCRIPT' });
  });

  it('misuse is thrown: a ruler without a store, or reading another store than the engine writes', async () => {
    expect(() => createRefereeRuler({} as Parameters<typeof createRefereeRuler>[0])).toThrow(expect.objectContaining({ code: 'TALLY_REFEREE_OPTIONS' }));
    const engine = new Engine({ store: new MemoryStore(), ruler: createRefereeRuler({ store: new MemoryStore() }) });
    const o = await engine.open(refereeSpec('h-wrong-store'));
    if (!o.ok) throw new Error(o.message);
    const f = await engine.frame({ sessionId: o.sessionId, ordinal: -1, time: frameTime(-1) });
    if (!f.ok) throw new Error(f.message);
    const bytes = carry(await signed(openIntent({ nonce: 'h-x', ttl: iso(frameTime(-1) + 60_000) })));
    await expect(engine.turn({ sessionId: o.sessionId, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes } })).rejects.toMatchObject({ code: 'TALLY_REFEREE_TRANSCRIPT' });
  });
});

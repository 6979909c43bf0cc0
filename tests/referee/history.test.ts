import { describe, expect, it } from 'vitest';
import { RefereeHistory } from '../../src/referee/index.js';
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
});

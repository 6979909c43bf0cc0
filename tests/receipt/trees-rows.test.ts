/**
 * SessionTrees checks every stored row it reads, both while catching a tree
 * up (`sync`) and when it reads a chunk below the floor again (`read`): the
 * row must be the entry expected next, and its stored hash the hash of its
 * stored bytes. Each failure is a StoreCorruptionError at the first bad entry.
 */
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { SessionTrees } from '../../src/receipt/index.js';
import { StoreCorruptionError } from '../../src/session/index.js';
import { MemoryStore, type StoredEntry } from '../../src/store/index.js';
import { runDay } from '../helpers/day.js';

type Fault = { readonly kind: 'hash' | 'skip'; readonly at: number } | undefined;

/** A store whose reads can return entry `at` with a wrong hash, or skip it. */
class FaultyStore extends MemoryStore {
  fault: Fault;
  override async readRange(sessionId: string, from: number, to: number): Promise<StoredEntry[]> {
    const rows = await super.readRange(sessionId, from, to);
    const f = this.fault;
    if (f === undefined) return rows;
    if (f.kind === 'skip') return rows.filter((r) => r.index !== f.at);
    return rows.map((r) => (r.index === f.at ? { ...r, hash: '00'.repeat(32) } : r));
  }
}

async function day() {
  const store = new FaultyStore();
  const engine = createEngine({ store });
  const { sid, lines } = await runDay({ engine, wakes: 10 });
  return { store, sid, size: lines.length };
}

const expected = (kind: 'hash' | 'skip', at: number) => ({
  code: 'TALLY_STORE_CORRUPT',
  index: at,
  details: kind === 'hash' ? 'stored hash is not the hash of the stored bytes' : `the store returned entry ${at + 1} where ${at} was expected`,
});

describe('SessionTrees: every stored row is checked', () => {
  for (const kind of ['hash', 'skip'] as const) {
    it(`sync: a row with ${kind === 'hash' ? 'a wrong hash' : 'the entry before it missing'} is corruption at that entry`, async () => {
      const { store, sid } = await day();
      store.fault = { kind, at: 5 };
      const e = await new SessionTrees({ batch: 4 }).sync(store, sid).then(() => undefined, (x: unknown) => x);
      expect(e).toBeInstanceOf(StoreCorruptionError);
      expect(e).toMatchObject(expected(kind, 5));
    });

    it(`read: a chunk read again with ${kind === 'hash' ? 'a wrong hash' : 'an entry missing'} is corruption at that entry`, async () => {
      const { store, sid, size } = await day();
      const clean = new SessionTrees({ floor: 2 });
      const whole = await clean.sync(store, sid);
      expect(whole && (await clean.read(store, sid, whole, () => whole.inclusionProof(6, size))).length).toBeGreaterThan(0);
      // A fresh tree keeps no chunk below its floor: the proof reads entries 4–7 again, now with the fault.
      const trees = new SessionTrees({ floor: 2 });
      const tree = await trees.sync(store, sid);
      if (!tree) throw new Error('no tree');
      store.fault = { kind, at: 5 };
      const e = await trees.read(store, sid, tree, () => tree.inclusionProof(6, size)).then(() => undefined, (x: unknown) => x);
      expect(e).toBeInstanceOf(StoreCorruptionError);
      expect(e).toMatchObject(expected(kind, 5));
    });
  }
});

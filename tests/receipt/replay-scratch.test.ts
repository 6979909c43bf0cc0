/**
 * Replay's bounded-memory path (the default: the re-derived day goes to a
 * ScratchStore on disk) gives exactly what the in-memory reference gives
 * (`scratch: 'memory'`, every entry on the heap): on honest days, on a day
 * long enough to cross the scratch store's write batch, with external facts,
 * and on random ruling edits (fixed seed).
 */
import fc from 'fast-check';
import { readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/engine.js';
import { replay, type ReplayOptions } from '../../src/receipt/index.js';
import { MemoryStore } from '../../src/store/index.js';
import type { CanonicalObject, Entry, TurnEntry } from '../../src/protocol/index.js';
import { entriesOf, intentDay, linesOf, reseal } from './fixtures.js';
import { runDay } from '../helpers/day.js';
import { removeTempDirs, tempDir } from '../store/helpers/tmp.js';

afterAll(removeTempDirs);

async function both(bundle: Uint8Array, options: ReplayOptions = {}) {
  const dir = tempDir('replay-scratch');
  const disk = await replay([bundle], { ...options, scratchDir: dir });
  const memory = await replay([bundle], { ...options, scratch: 'memory' });
  // The scratch directory is removed afterwards.
  expect(readdirSync(dir)).toEqual([]);
  return { disk, memory };
}

async function sealedIntentDay() {
  const { engine, sid } = await intentDay({ name: 'replay-scratch' });
  const fin = await engine.finalize(sid, { note: 'done' });
  if (!fin.ok) throw new Error(fin.message);
  return entriesOf(await linesOf(engine, sid));
}

describe('replay on the scratch store equals the in-memory reference', () => {
  it('an honest intent day and a plain day', async () => {
    const entries = await sealedIntentDay();
    const a = await both(reseal(entries).bundle);
    expect(a.disk).toEqual(a.memory);
    expect(a.disk.ok).toBe(true);
    const { bundle } = await runDay({ wakes: 5 });
    const b = await both(bundle, { ruler: null });
    expect(b.disk).toEqual(b.memory);
    expect(b.disk.ok).toBe(true);
  });

  it('a day longer than the scratch write batch (256 appends, several batches)', async () => {
    const { bundle } = await runDay({ wakes: 1_200 });
    const r = await both(bundle);
    expect(r.disk).toEqual(r.memory);
    expect(r.disk).toMatchObject({ ok: true, size: 2_404 });
  });

  it('external nonce facts', async () => {
    const engine = createEngine({ store: new MemoryStore() });
    const a = await intentDay({ engine, name: 'scratch-a' });
    expect((await engine.finalize(a.sid)).ok).toBe(true);
    const b = await intentDay({ engine, name: 'scratch-b', nonceBase: 1 });
    expect((await engine.finalize(b.sid)).ok).toBe(true);
    const r = await both(encodeBundle(await linesOf(engine, b.sid)));
    expect(r.disk).toEqual(r.memory);
    expect(r.disk.ok && r.disk.externalFacts.length).toBe(2);
  });

  it('random ruling edits diverge identically (seed 0x10d4)', async () => {
    const entries = await sealedIntentDay();
    const turns = entries.flatMap((e, i) => (e.kind === 'turn' ? [i] : []));
    const rulings: CanonicalObject[] = [{ intent: { admitted: false, code: 'expired' } }, { intent: { admitted: true } }, { note: 'edited' }];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...turns), fc.option(fc.constantFrom(...rulings), { nil: undefined }), async (i, ruling) => {
        const forged = entries.map((e, j) => {
          if (j !== i) return e;
          const { ruling: _old, ...rest } = e as TurnEntry;
          return (ruling === undefined ? rest : { ...rest, ruling }) as Entry;
        });
        const r = await both(reseal(forged).bundle);
        expect(r.disk).toEqual(r.memory);
      }),
      { seed: 0x10d4, numRuns: 20 },
    );
  });
});

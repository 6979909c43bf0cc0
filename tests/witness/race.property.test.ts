/**
 * The C2SP rollback race as a property (fast-check scheduler, fixed seed):
 * N submissions checked against one cosigned state, with every store call
 * interleaved by the scheduler — exactly one is cosigned, the others get 409,
 * and the stored size is the winner's, never a smaller one.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateEngineKey } from '../../src/receipt/index.js';
import { cosignerKeyFrom, createWitness, MemoryWitnessStore, type WitnessStore } from '../../src/witness/index.js';
import { testLog } from './helpers.js';

const key = cosignerKeyFrom(generateEngineKey('witness.example/race'));

/** The memory store with every call released by the scheduler (so reads and swaps interleave arbitrarily). */
function scheduled(s: fc.Scheduler, inner: WitnessStore): WitnessStore {
  return {
    name: 'scheduled',
    latest: (o) => s.schedule(Promise.resolve(), 'latest').then(() => inner.latest(o)),
    compareAndSwap: (o, e, n) => s.schedule(Promise.resolve(), `swap ${n.size}`).then(() => inner.compareAndSwap(o, e, n)),
    logKeys: () => inner.logKeys(),
    addLogKey: (v) => inner.addLogKey(v),
    close: () => inner.close(),
  };
}

describe('rollback race (seed 0x0be12)', () => {
  it('of N concurrent submissions from one cosigned size exactly one is cosigned; the size never goes back', async () => {
    const log = testLog();
    log.append(40);
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 1, max: 10 }), fc.uniqueArray(fc.integer({ min: 11, max: 40 }), { minLength: 2, maxLength: 6 }), async (s, start, sizes) => {
        const inner = new MemoryWitnessStore();
        const plain = createWitness({ key, store: inner });
        await plain.trustLogKey(log.key.verifierKey);
        expect(await plain.addCheckpoint(log.body(0, start))).toMatchObject({ ok: true });
        const witness = createWitness({ key, store: scheduled(s, inner) });
        const calls = sizes.map((n) => witness.addCheckpoint(log.body(start, n)));
        const out = await s.waitFor(Promise.all(calls));
        const won = out.flatMap((r, i) => (r.ok ? [sizes[i]!] : []));
        expect(won).toHaveLength(1);
        for (const r of out) if (!r.ok) expect(r).toMatchObject({ status: 409 });
        expect((await inner.latest(log.origin))?.size).toBe(won[0]);
      }),
      { seed: 0x0be12, numRuns: 60 },
    );
  });
});

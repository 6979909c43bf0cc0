/**
 * Forced interleavings in one process: two engines (two caches, as two
 * processes would have) and two notaries share one store whose every call
 * waits for fast-check's scheduler, and run random opens, turns, checkpoints
 * and seals of a few shared sessions concurrently. Whatever the order, the
 * engine log must equal the store's sessions and signing history exactly
 * (tests/log/helpers.ts). Seeds are fixed and printed in the titles.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { createNotary, generateEngineKey, SigningRefusedError } from '../../src/receipt/index.js';
import type { EngineLogStore, TranscriptStore } from '../../src/store/index.js';
import { memoryKind, sqliteKind } from '../store/helpers/stores.js';
import { removeTempDirs } from '../store/helpers/tmp.js';
import { expectLogIsHistory } from './helpers.js';

afterAll(removeTempDirs);

const key = generateEngineKey('model.test/desk');
const T0 = Date.UTC(2026, 0, 5, 9);
const RUNS: Record<string, number> = { memory: 40, sqlite: 12 };

type Cmd = { readonly op: 'open' | 'turn' | 'seal'; readonly s: number } | { readonly op: 'checkpoint'; readonly s: number; readonly size: number };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  fc.record({ op: fc.constantFrom('open' as const, 'turn' as const, 'seal' as const), s: fc.nat({ max: 2 }) }),
  fc.record({ op: fc.constant('checkpoint' as const), s: fc.nat({ max: 2 }), size: fc.integer({ min: 1, max: 7 }) }),
);

/** `store` with every method call first waiting for the scheduler. */
function gated(store: TranscriptStore & EngineLogStore, s: fc.Scheduler): TranscriptStore & EngineLogStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function' || prop === 'close') return v;
      return (...args: unknown[]) => s.schedule(Promise.resolve(String(prop))).then(() => (v as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
}

describe.each([memoryKind, sqliteKind].map((k) => [k.label, k] as const))('engine log under forced interleavings on %s (seed 0x10c1)', (label, kind) => {
  it('equals the signing history exactly, whatever the order', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(cmd, { minLength: 1, maxLength: 10 }), async (s, cmds) => {
        const env = await kind.fresh();
        try {
          const store = env.store as TranscriptStore & EngineLogStore;
          const shared = gated(store, s);
          const engines = [createEngine({ store: shared }), createEngine({ store: shared })];
          const notaries = [createNotary({ key }), createNotary({ key })];
          const names = [0, 1, 2].map((i) => `model-${label}-${run}-${i}`);
          run++;
          const step = async (c: Cmd, i: number): Promise<void> => {
            const engine = engines[i % 2]!;
            const notary = notaries[i % 2]!;
            const o = await engine.open({ name: names[c.s]! });
            if (!o.ok) throw new Error(o.message);
            const sid = o.sessionId;
            if (c.op === 'turn') {
              const head = await engine.store.loadHead(sid);
              if (!head || head.phase !== 'awaiting-frame') return;
              const ordinal = (head.size - 1) / 2 - 1;
              const f = await engine.frame({ sessionId: sid, ordinal, time: T0 + ordinal * 1000 + 1000 });
              if (!f.ok) return;
              await engine.turn({ sessionId: sid, ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } });
            } else if (c.op === 'checkpoint') {
              await notary.issueCheckpoint(engine, sid, c.size);
            } else if (c.op === 'seal') {
              await notary.sealWithReceipt(engine, sid);
            }
          };
          // A losing racer may be refused (a signer whose tree is behind another's record is refused by the
          // signing log, TALLY_SIGN_*): that is an answer and must leave no leaf; anything else fails the run.
          const refused = (e: unknown) => (e instanceof SigningRefusedError ? undefined : Promise.reject(e));
          await s.waitFor(Promise.all(cmds.map((c, i) => step(c, i).catch(refused))));
          await expectLogIsHistory(store, key.name);
        } finally {
          await env.dispose();
        }
      }),
      { seed: 0x10c1, numRuns: RUNS[label] ?? 1 },
    );
    expect(run).toBe(RUNS[label]);
  }, 120_000);
});

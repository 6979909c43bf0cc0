/**
 * Races, for every store, with interleavings chosen by fc.scheduler():
 * N compare-and-appends on one head have exactly one winner; N appends in N
 * sessions reserving one nonce have exactly one winner; K engines racing
 * through the same day on one store leave one linear, verifiable chain.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeBundle, verifyBundle } from '../../src/codec/index.js';
import { createEngine, type Engine } from '../../src/session/index.js';
import { MemoryStore, type AppendOutcome, type AppendRequest, type NonceClaim, type TranscriptStore } from '../../src/store/index.js';
import { warnIfSkipped } from './helpers/pg.js';
import { RecordingStore, driveDay, type RecordedChain } from './helpers/record.js';
import { STORE_KINDS } from './helpers/stores.js';
import { removeTempDirs } from './helpers/tmp.js';

warnIfSkipped('conformance.race.test.ts');
afterAll(removeTempDirs);

const enc = new TextEncoder();
let counter = 0;

/** Puts a recorded chain into `store` as the engine wrote it. */
async function replay(store: TranscriptStore, c: RecordedChain): Promise<void> {
  expect(await store.createSession(c.genesis, c.head0)).toBe('created');
  for (const a of c.appends) expect(await store.append(a)).toEqual({ ok: true });
}

/** A fresh day (OPEN frame answered) and `n` different next frames the engine would append on its head. */
async function forks(n: number): Promise<{ base: RecordedChain; next: AppendRequest[] }> {
  const rec = new RecordingStore();
  const sid = await driveDay(createEngine({ store: rec }), `race-${process.pid}-${counter++}`, 0, false);
  const base = rec.chains.get(sid)!;
  const next: AppendRequest[] = [];
  for (let i = 0; i < n; i++) {
    const fork = new RecordingStore(new MemoryStore());
    await replay(fork, base);
    const f = await createEngine({ store: fork }).frame({ sessionId: sid, ordinal: 0, time: 200_000, data: { candidate: i } });
    if (!f.ok) throw new Error(f.message);
    next.push(fork.chains.get(sid)!.appends.at(-1)!);
  }
  return { base, next };
}

const RUNS = { memory: 40, sqlite: 30, postgres: 20 } as const;

for (const kind of STORE_KINDS) {
  describe.skipIf(kind.skip)(`${kind.label} store races`, () => {
    it(`of N concurrent appends on one head exactly one wins and the rest see head-moved (seed 0x0ace1)`, async () => {
      const env = await kind.fresh();
      try {
        await fc.assert(
          fc.asyncProperty(fc.scheduler(), fc.integer({ min: 2, max: 6 }), async (s, n) => {
            const { base, next } = await forks(n);
            await replay(env.store, base);
            const calls = next.map((req, i) => s.schedule(Promise.resolve(i), `append#${i}`).then(() => env.store.append(req)));
            const out = await s.waitFor(Promise.all(calls));
            const winners = out.flatMap((o, i) => (o.ok ? [i] : []));
            expect(winners).toHaveLength(1);
            for (const o of out) if (!o.ok) expect(o).toEqual({ ok: false, reason: 'head-moved' });
            const w = next[winners[0]!]!;
            expect(await env.store.loadHead(base.sessionId)).toEqual(w.next);
            expect(await env.store.readRange(base.sessionId, w.entry.index, w.entry.index + 5)).toEqual([w.entry]);
          }),
          { seed: 0x0ace1, numRuns: RUNS[kind.label] },
        );
      } finally {
        await env.dispose();
      }
    });

    it(`of N appends in N sessions reserving one nonce exactly one wins, the rest see nonce-taken and write nothing (seed 0x0ace2)`, async () => {
      const env = await kind.fresh();
      try {
        await fc.assert(
          fc.asyncProperty(fc.scheduler(), fc.integer({ min: 2, max: 5 }), async (s, n) => {
            const days = [];
            for (let i = 0; i < n; i++) days.push(await forks(1));
            for (const d of days) await replay(env.store, d.base);
            const claim: NonceClaim = { agentId: 'racer', nonce: `n-${counter++}`, intentHash: 'ab'.repeat(32) };
            const reqs = days.map((d) => ({ ...d.next[0]!, nonces: [claim] }));
            const calls = reqs.map((req, i) => s.schedule(Promise.resolve(i), `append#${i}`).then(() => env.store.append(req)));
            const out: AppendOutcome[] = await s.waitFor(Promise.all(calls));
            const winners = out.flatMap((o, i) => (o.ok ? [i] : []));
            expect(winners).toHaveLength(1);
            const w = reqs[winners[0]!]!;
            const owner = { intentHash: claim.intentHash, sessionId: w.sessionId, index: w.entry.index };
            expect(await env.store.nonceOwner(claim.agentId, claim.nonce)).toEqual(owner);
            for (const [i, o] of out.entries()) {
              if (i === winners[0]) continue;
              expect(o).toEqual({ ok: false, reason: 'nonce-taken', agentId: claim.agentId, nonce: claim.nonce, owner });
              expect(await env.store.loadHead(reqs[i]!.sessionId)).toEqual(days[i]!.base.appends.at(-1)!.next);
            }
          }),
          { seed: 0x0ace2, numRuns: RUNS[kind.label] },
        );
      } finally {
        await env.dispose();
      }
    });

    it(`K engines racing through one day leave one linear chain with one admission per slot (seed 0x0ace3)`, async () => {
      const env = await kind.fresh();
      try {
        await fc.assert(
          fc.asyncProperty(fc.scheduler(), fc.integer({ min: 2, max: 4 }), fc.integer({ min: 1, max: 3 }), async (s, k, wakes) => {
            const name = `linear-${process.pid}-${counter++}`;
            const engines: Engine[] = Array.from({ length: k }, () => createEngine({ store: env.store }));
            const gate = <T>(label: string, f: () => Promise<T>): Promise<T> => s.schedule(Promise.resolve(label), label).then(f);
            const frames = new Map<number, { dup: number; fresh: number }>();
            const turns = new Map<number, { dup: number; fresh: number; conflict: number }>();
            const writer = async (e: Engine, w: number): Promise<string> => {
              const o = await gate(`open w${w}`, () => e.open({ name, day: '2026-11-30' }));
              if (!o.ok) throw new Error(o.message);
              for (let ord = -1; ord < wakes; ord++) {
                const f = await gate(`frame ${ord} w${w}`, () => e.frame({ sessionId: o.sessionId, ordinal: ord, time: 1_000 + (ord + 1) * 1_000, data: { ord } }));
                if (!f.ok) throw new Error(`w${w} frame ${ord}: ${f.diagnostic} ${f.message}`);
                const fs = frames.get(ord) ?? { dup: 0, fresh: 0 };
                frames.set(ord, { dup: fs.dup + (f.duplicate ? 1 : 0), fresh: fs.fresh + (f.duplicate ? 0 : 1) });
                // Even ordinals: every writer submits the same answer; odd: each its own.
                const bytes = enc.encode(ord % 2 === 0 ? `same ${ord}` : `writer ${w} at ${ord}`);
                const t = await gate(`turn ${ord} w${w}`, () =>
                  e.turn({ sessionId: o.sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes } }),
                );
                const ts = turns.get(ord) ?? { dup: 0, fresh: 0, conflict: 0 };
                if (t.ok) turns.set(ord, { ...ts, dup: ts.dup + (t.duplicate ? 1 : 0), fresh: ts.fresh + (t.duplicate ? 0 : 1) });
                else if (t.diagnostic === 'turn-conflict') turns.set(ord, { ...ts, conflict: ts.conflict + 1 });
                else throw new Error(`w${w} turn ${ord}: ${t.diagnostic} ${t.message}`);
              }
              return o.sessionId;
            };
            const ids = await s.waitFor(Promise.all(engines.map((e, w) => writer(e, w))));
            const sid = ids[0]!;
            const fins = await s.waitFor(Promise.all(engines.map((e, w) => gate(`finalize w${w}`, () => e.finalize(sid, { by: 'race' })))));
            expect(fins.map((f) => f.ok && f.duplicate).sort()).toEqual([...Array(k - 1).fill(true), false].sort());
            for (let ord = -1; ord < wakes; ord++) {
              expect(frames.get(ord)).toEqual({ dup: k - 1, fresh: 1 });
              const t = turns.get(ord)!;
              expect(t.fresh).toBe(1);
              expect(t.dup + t.conflict).toBe(k - 1);
              if (ord % 2 === 0) expect(t.conflict).toBe(0);
            }
            const lines: Uint8Array[] = [];
            for await (const l of createEngine({ store: env.store }).exportEntries(sid)) lines.push(l);
            const v = await verifyBundle([encodeBundle(lines)]);
            expect(v.ok && v.size).toBe(2 + 2 * (wakes + 1));
          }),
          { seed: 0x0ace3, numRuns: RUNS[kind.label] },
        );
      } finally {
        await env.dispose();
      }
    });
  });
}

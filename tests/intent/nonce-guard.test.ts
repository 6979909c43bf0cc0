import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { createNonceGuard, createSignerCache, signIntent, validateIntent } from '../../src/intent/index.js';
import type { NonceReservation } from '../../src/intent/index.js';
import { ANVIL0_KEY, baseOptions, openInput } from './helpers.js';

const hashOf = (i: number): string => `0x${i.toString(16).padStart(64, '0')}`;

describe('createNonceGuard', () => {
  test('reserves once, names the holder, keys (agent, nonce) without ambiguity', () => {
    const g = createNonceGuard();
    expect(g.reserve('a', 'bc', hashOf(1))).toEqual({ ok: true });
    expect(g.reserve('ab', 'c', hashOf(2))).toEqual({ ok: true }); // not the same pair as ('a', 'bc')
    expect(g.reserve('a', 'bc', hashOf(3))).toEqual({ ok: false, usedBy: hashOf(1) });
    expect(g.has('a', 'bc')).toBe(true);
    expect(g.has('a', 'c')).toBe(false);
    expect(g.lookup('ab', 'c')).toEqual({ usedBy: hashOf(2) });
    expect(g.lookup('b', 'c')).toBe(false);
    expect(g.size).toBe(2);
  });

  test('1000 concurrent reservations of one nonce: exactly one winner, whatever the interleaving (seed 0x5707)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), async (s) => {
        const g = createNonceGuard();
        const results: Array<Promise<NonceReservation>> = [];
        for (let i = 0; i < 1000; i++) {
          results.push(s.schedule(Promise.resolve(i), `reserve ${i}`).then((k) => g.reserve('agent-1', '42', hashOf(k))));
        }
        await s.waitAll();
        const settled = await Promise.all(results);
        const winners = settled.flatMap((r, i) => (r.ok ? [i] : []));
        expect(winners).toHaveLength(1);
        const winnerHash = hashOf(winners[0] as number);
        for (const r of settled) if (!r.ok) expect(r.usedBy).toBe(winnerHash);
        expect(g.size).toBe(1);
      }),
      { seed: 0x5707, numRuns: 20 },
    );
  });

  test('many agents and nonces under random interleaving: one winner per pair, the first scheduled (seed 0x5708)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(fc.tuple(fc.constantFrom('a', 'b', 'ab'), fc.constantFrom('1', '2', 'b1')), { minLength: 1, maxLength: 60 }), async (s, ops) => {
        const g = createNonceGuard();
        const order: number[] = [];
        const done = ops.map(([agent, nonce], i) =>
          s.schedule(Promise.resolve(i)).then((k) => {
            order.push(k);
            return g.reserve(agent, nonce, hashOf(k));
          }),
        );
        await s.waitAll();
        const settled = await Promise.all(done);
        const firstOf = new Map<string, number>();
        for (const k of order) {
          const [agent, nonce] = ops[k] as [string, string];
          const key = JSON.stringify([agent, nonce]);
          if (!firstOf.has(key)) firstOf.set(key, k);
        }
        ops.forEach(([agent, nonce], i) => {
          const first = firstOf.get(JSON.stringify([agent, nonce])) as number;
          expect(settled[i]).toEqual(i === first ? { ok: true } : { ok: false, usedBy: hashOf(first) });
        });
        expect(g.size).toBe(firstOf.size);
      }),
      { seed: 0x5708, numRuns: 100 },
    );
  });

  test('a replay storm through validate → reserve admits exactly one', async () => {
    const signed = await signIntent(openInput, ANVIL0_KEY);
    const g = createNonceGuard();
    const opts = baseOptions({ isNonceUsed: g.lookup, signerCache: createSignerCache() });
    const outcomes = await Promise.all(
      Array.from({ length: 1000 }, async () => {
        const r = await validateIntent(signed, opts);
        // The validator is pure: concurrent copies may all pass stage c; the atomic reserve decides.
        return r.ok ? g.reserve(r.intent.agent_id, r.intent.nonce, r.intent_hash).ok : false;
      }),
    );
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    const late = await validateIntent(signed, opts);
    expect(late.ok === false && late.code).toBe('replayed_nonce');
  });
});

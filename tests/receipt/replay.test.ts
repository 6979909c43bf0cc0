import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeBundle, verifyBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/engine.js';
import { replay, type ReplayResult } from '../../src/receipt/index.js';
import { createEngine as createBareEngine, type TurnRuler } from '../../src/session/index.js';
import { MemoryStore, type TranscriptStore } from '../../src/store/index.js';
import type { CanonicalObject, Entry, TurnEntry } from '../../src/protocol/index.js';
import { entriesOf, intentDay, linesOf, reseal } from './fixtures.js';
import { ALPHA_NONCES } from '../rules/fixtures.js';
import { runDay } from '../helpers/day.js';

async function sealedIntentDay(name = 'replay-day') {
  const { engine, sid } = await intentDay({ name });
  const fin = await engine.finalize(sid, { note: 'done' });
  if (!fin.ok) throw new Error(fin.message);
  const lines = await linesOf(engine, sid);
  return { engine, sid, lines, bundle: encodeBundle(lines), entries: entriesOf(lines) };
}

function intentRuling(e: Entry): Record<string, unknown> {
  return ((e as TurnEntry).ruling as { intent: Record<string, unknown> }).intent;
}

function divergence(r: ReplayResult) {
  if (r.ok || r.stage !== 'replay') throw new Error(`expected a replay divergence, got ${JSON.stringify(r).slice(0, 300)}`);
  return r.divergences;
}

/** Index of the n-th turn (0-based) whose ruling matches `pred`. */
function turnIndex(entries: Entry[], pred: (ruling: Record<string, unknown>) => boolean): number {
  const i = entries.findIndex((e) => e.kind === 'turn' && e.ruling !== undefined && pred(intentRuling(e)));
  if (i < 0) throw new Error('no such turn');
  return i;
}

describe('replay re-derives every ruling from the transcript alone', () => {
  it('an honest sealed intent day replays: every ruling re-derived, no external facts', async () => {
    const { bundle, entries } = await sealedIntentDay();
    const r = await replay([bundle]);
    expect(r).toMatchObject({ ok: true, size: entries.length, turns: 6, rulings: 4, externalFacts: [] });
  });

  it('a plain day (no rulings) replays with the default ruler and with none', async () => {
    const { bundle } = await runDay({ wakes: 5 });
    expect((await replay([bundle])).ok).toBe(true);
    expect((await replay([bundle], { ruler: null })).ok).toBe(true);
  });

  const edits: Array<[string, (r: Record<string, unknown>) => boolean, (r: Record<string, unknown>) => Record<string, unknown>]> = [
    ['flip admitted true -> false', (r) => r['admitted'] === true, (r) => ({ admitted: false, stage: 'ttl', code: 'expired', message: 'expired', intent_hash: r['intent_hash'] })],
    ['flip a rejection to admitted', (r) => r['code'] === 'expired', (r) => ({ admitted: true, intent_hash: r['intent_hash'], agent_id: 'alpha', nonce: '2', action: 'open', signer: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266' })],
    ['change a rejection code', (r) => r['code'] === 'expired', (r) => ({ ...r, code: 'ttl_too_far' })],
    ['change only the message', (r) => r['code'] === 'replayed_nonce', (r) => ({ ...r, message: 'nonce was fine, really' })],
    ['point a replayed nonce at another entry', (r) => r['code'] === 'replayed_nonce', (r) => ({ ...r, first: { ...(r['first'] as object), index: 7 } })],
  ];

  for (const [what, pick, edit] of edits) {
    it(`a ruling edit (${what}) with every hash and the seal recomputed passes verifyBundle but fails replay, naming the entry`, async () => {
      const { entries } = await sealedIntentDay();
      const i = turnIndex(entries, pick);
      const forged = entries.map((e, j) => (j === i ? ({ ...e, ruling: { intent: edit(intentRuling(e)) } as CanonicalObject } as Entry) : e));
      const { bundle } = reseal(forged);
      expect((await verifyBundle([bundle])).ok).toBe(true);
      const d = divergence(await replay([bundle]));
      expect(d[0]).toMatchObject({ index: i, kind: 'ruling-diverged', expected: { intent: edit(intentRuling(entries[i]!)) }, actual: (entries[i] as TurnEntry).ruling });
      // One edit, one divergence: later entries only differ by their links.
      expect(d).toHaveLength(1);
    });
  }

  it('a removed ruling and an added ruling are both divergences', async () => {
    const { entries } = await sealedIntentDay();
    const i = turnIndex(entries, (r) => r['admitted'] === true);
    const plain = entries.findIndex((e) => e.kind === 'turn' && e.body.kind === 'authored' && e.ruling === undefined);
    const forged = entries.map((e, j) => {
      if (j === i) {
        const { ruling: _drop, ...rest } = e as TurnEntry;
        return rest as Entry;
      }
      return j === plain ? ({ ...e, ruling: { intent: { admitted: true } } } as Entry) : e;
    });
    const d = divergence(await replay([reseal(forged).bundle]));
    expect(d.map((x) => [x.index, x.kind])).toEqual(
      [
        [i, 'ruling-diverged'],
        [plain, 'ruling-diverged'],
      ].sort((a, b) => (a[0] as number) - (b[0] as number)),
    );
    const dropped = d.find((x) => x.index === i)!;
    expect(dropped.kind === 'ruling-diverged' && dropped.expected).toBeUndefined();
  });

  it('an admitted intent whose nonce was already used in this session cannot be forged in', async () => {
    const { entries } = await sealedIntentDay();
    const i = turnIndex(entries, (r) => r['code'] === 'replayed_nonce');
    const first = entries[turnIndex(entries, (r) => r['admitted'] === true)] as TurnEntry;
    const forged = entries.map((e, j) => (j === i ? ({ ...e, ruling: first.ruling } as Entry) : e));
    const d = divergence(await replay([reseal(forged).bundle]));
    expect(d[0]).toMatchObject({ index: i, kind: 'ruling-diverged' });
  });

  it('other seal artifacts (re-sealed) are another day that replays: artifacts are input, not rulings', async () => {
    const { entries } = await sealedIntentDay();
    const forged = entries.map((e) => (e.kind === 'finalize' ? ({ ...e, artifacts: { note: 'other' } } as Entry) : e));
    expect((await replay([reseal(forged).bundle])).ok).toBe(true);
  });

  it('a chain failure wins and is reported as the chain stage', async () => {
    const { bundle } = await sealedIntentDay();
    const cut = bundle.subarray(0, bundle.length - 1);
    const r = await replay([cut]);
    expect(r).toMatchObject({ ok: false, stage: 'chain', code: 'missing-newline' });
    expect(await replay([bundle], { pin: { size: 3 } })).toMatchObject({ ok: false, stage: 'chain', code: 'pin-mismatch' });
  });

  it('a spec the ruler refuses is a rejection at entry 0, and replay stops there', async () => {
    const bare = createBareEngine({ store: new MemoryStore() });
    const open = await bare.open({ name: 'no-ruler', agents: { alpha: 'not an address' } });
    if (!open.ok) throw new Error(open.message);
    const fin = await bare.finalize(open.sessionId);
    expect(fin.ok).toBe(true);
    const bundle = encodeBundle(await linesOf(bare, open.sessionId));
    const d = divergence(await replay([bundle]));
    expect(d).toHaveLength(1);
    expect(d[0]).toMatchObject({ index: 0, kind: 'rejected', actual: { diagnostic: 'malformed-entry' } });
    const r = await replay([bundle]);
    expect(!r.ok && r.stage === 'replay' && r.stoppedAt).toBe(0);
    expect((await replay([bundle], { ruler: null })).ok).toBe(true);
  });

  it('a nonce first used in another session is an external fact: taken from the record and listed', async () => {
    const store = new MemoryStore();
    const engine = createEngine({ store });
    const a = await intentDay({ engine, name: 'day-a' });
    expect((await engine.finalize(a.sid)).ok).toBe(true);
    // Day B reuses nonce 1 (used first in day A) and nonce 3.
    const b = await intentDay({ engine, name: 'day-b', nonceBase: 1 });
    expect((await engine.finalize(b.sid)).ok).toBe(true);
    const lines = await linesOf(engine, b.sid);
    const entries = entriesOf(lines);
    const external = entries.filter((e) => e.kind === 'turn' && e.ruling && intentRuling(e)['code'] === 'replayed_nonce' && (intentRuling(e)['first'] as { session: string }).session === a.sid);
    expect(external.length).toBeGreaterThan(0);
    const r = await replay([encodeBundle(lines)]);
    expect(r.ok).toBe(true);
    // Nonce 1 (used twice in day B) and nonce 3: one fact each, listed at their first use in day B.
    expect(external).toHaveLength(3);
    expect(r.ok && r.externalFacts.map((f) => [f.index, f.agentId, f.nonce, f.owner.sessionId])).toEqual([
      [entries.indexOf(external[0]!), ALPHA_NONCES, '1', a.sid],
      [entries.indexOf(external[2]!), ALPHA_NONCES, '3', a.sid],
    ]);
    // Day A itself has none.
    const ra = await replay([encodeBundle(await linesOf(engine, a.sid))]);
    expect(ra.ok && ra.externalFacts).toEqual([]);
  });

  it('an external fact is trusted, but an admission contradicting it later in the day is caught', async () => {
    const store = new MemoryStore();
    const engine = createEngine({ store });
    const a = await intentDay({ engine, name: 'day-a' });
    expect((await engine.finalize(a.sid)).ok).toBe(true);
    const b = await intentDay({ engine, name: 'day-b', nonceBase: 1 });
    expect((await engine.finalize(b.sid)).ok).toBe(true);
    const entries = entriesOf(await linesOf(engine, b.sid));
    // Day B's turn 0 was ruled replayed (nonce 1 belongs to day A); forge the SECOND use (ordinal 1) as admitted.
    const uses = entries.map((e, i) => [e, i] as const).filter(([e]) => e.kind === 'turn' && e.ruling && intentRuling(e)['code'] === 'replayed_nonce');
    expect(uses.length).toBe(3);
    const [, second] = uses[1]!;
    const forged = entries.map((e, j) => (j === second ? ({ ...e, ruling: { intent: { admitted: true, intent_hash: intentRuling(e)['intent_hash'], agent_id: 'alpha', nonce: '1', action: 'open', signer: 'x' } } } as Entry) : e));
    const d = divergence(await replay([reseal(forged).bundle]));
    expect(d[0]).toMatchObject({ index: second, kind: 'ruling-diverged' });
  });

  it('maxDivergences stops early and says where', async () => {
    const { entries } = await sealedIntentDay();
    const forged = entries.map((e) => (e.kind === 'turn' && e.ruling ? ({ ...e, ruling: { intent: { admitted: 'maybe' } } } as Entry) : e));
    const r = await replay([reseal(forged).bundle], { maxDivergences: 2 });
    const d = divergence(r);
    expect(d).toHaveLength(2);
    expect(!r.ok && r.stage === 'replay' && r.stoppedAt).toBe(d[1]!.index);
  });

  it('any edit of any recorded ruling field is caught at that entry (seed 0x7a11)', async () => {
    const { entries } = await sealedIntentDay();
    const ruled = entries.map((e, i) => [e, i] as const).filter(([e]) => e.kind === 'turn' && e.ruling !== undefined);
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: ruled.length - 1 }),
        fc.constantFrom('admitted', 'code', 'message', 'stage', 'agent_id', 'nonce', 'action', 'signer', 'intent_hash', 'extra'),
        fc.oneof(fc.boolean(), fc.string({ maxLength: 12 }), fc.integer({ min: -5, max: 5 })),
        async (k, field, value) => {
          const [e, i] = ruled[k]!;
          const before = intentRuling(e);
          fc.pre(before[field] !== value);
          const forged = entries.map((x, j) => (j === i ? ({ ...x, ruling: { intent: { ...before, [field]: value } } } as Entry) : x));
          const d = divergence(await replay([reseal(forged).bundle]));
          expect(d[0]).toMatchObject({ index: i, kind: 'ruling-diverged' });
        },
      ),
      { seed: 0x7a11, numRuns: 30 },
    );
  });

  it('a ruler factory gets the replay store (rulers that read their transcript, like the referee)', async () => {
    const counting = (store: TranscriptStore): TurnRuler => ({
      async rule(ctx) {
        const head = await store.loadHead(ctx.sessionId);
        return { ruling: { seen: head?.size ?? -1, recorded: ctx.recorded !== undefined }, nonces: [] };
      },
    });
    const store = new MemoryStore();
    const live = createBareEngine({ store, ruler: counting(store) });
    const { bundle } = await runDay({ engine: live, wakes: 4 });
    // Live rulings say recorded: false; replay hands the recorded ruling over, so a faithful
    // referee-style ruler must not let it change the outcome — this one does, and is caught.
    const d = divergence(await replay([bundle], { ruler: counting }));
    expect(d.every((x) => x.kind === 'ruling-diverged')).toBe(true);
    // A ruler that ignores `recorded` and reads the replay store re-derives every ruling.
    const faithful = (s: TranscriptStore): TurnRuler => ({
      async rule(ctx) {
        const head = await s.loadHead(ctx.sessionId);
        return { ruling: { seen: head?.size ?? -1, recorded: false }, nonces: [] };
      },
    });
    expect((await replay([bundle], { ruler: faithful })).ok).toBe(true);
    // The same ruler bound to the ORIGINAL store sees the whole day and diverges.
    expect((await replay([bundle], { ruler: faithful(store) })).ok).toBe(false);
  });
});

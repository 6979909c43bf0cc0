import { describe, expect, it } from 'vitest';
import { phaseGate, reconcileFrame, reconcileTurn, type SlotPrior, type TurnClaim } from '../../src/protocol/index.js';

const h = (c: string) => c.repeat(64);
const S = h('a');
const P = h('b');
const F = h('c');
const C = h('d');
const E = h('e');
const A = h('f');

const recorded: SlotPrior = { state: 'recorded', sessionId: S, ordinal: 3, parentHash: P, frameRoot: F, claimHash: C, entryHash: E };
const open: SlotPrior = { state: 'open', sessionId: S, ordinal: 3, parentHash: P, frameRoot: F };
const good: TurnClaim = { sessionId: S, ordinal: 3, parentHash: P, frameRoot: F, body: { kind: 'authored', authoredHash: A }, claimHash: C };

type Mut = Partial<TurnClaim>;
// Each defect, applied alone and in combination, with the diagnostic the ladder must report.
const defects: Record<string, { mut: Mut; rank: number; diag: string }> = {
  malformed: { mut: { claimHash: '' }, rank: 1, diag: 'malformed-entry' },
  session: { mut: { sessionId: h('0') }, rank: 2, diag: 'wrong-session' },
  chain: { mut: { parentHash: h('1') }, rank: 3, diag: 'broken-chain' },
  stale: { mut: { frameRoot: h('2') }, rank: 4, diag: 'stale-frame' },
  bytes: { mut: { claimHash: h('3') }, rank: 6, diag: 'turn-conflict' },
};

describe('reconcileTurn ladder', () => {
  it('identical claim on a recorded slot is an idempotent duplicate returning the settled hash', () => {
    expect(reconcileTurn(recorded, good)).toEqual({ ok: true, duplicate: true, entryHash: E });
  });

  it('an open slot passing every rung is admissible', () => {
    expect(reconcileTurn(open, good)).toEqual({ ok: true, duplicate: false });
  });

  const names = Object.keys(defects);
  const combos: string[][] = [];
  for (let mask = 1; mask < 1 << names.length; mask++) {
    const c = names.filter((_, i) => mask & (1 << i));
    // `malformed` and `bytes` both set claimHash; the later one would overwrite.
    if (c.includes('malformed') && c.includes('bytes')) continue;
    combos.push(c);
  }

  it.each(combos.map((c) => [c.join('+'), c]))('defects %s: the most specific wins', (_label, combo) => {
    const claim = Object.assign({}, good, ...combo.map((n) => defects[n]!.mut)) as TurnClaim;
    const winner = combo.map((n) => defects[n]!).sort((a, b) => a.rank - b.rank)[0]!;
    expect(reconcileTurn(recorded, claim)).toEqual({ ok: false, diagnostic: winner.diag });
  });

  it('a declared hash that disagrees with the recomputed one is malformed, even when everything else matches', () => {
    expect(reconcileTurn(recorded, { ...good, declared: { claimHash: E } })).toEqual({ ok: false, diagnostic: 'malformed-entry' });
    expect(reconcileTurn(recorded, { ...good, declared: { authoredHash: C } })).toEqual({ ok: false, diagnostic: 'malformed-entry' });
    expect(reconcileTurn(recorded, { ...good, declared: { claimHash: C, authoredHash: A } })).toEqual({ ok: true, duplicate: true, entryHash: E });
  });

  it('a caller cannot pass off other bytes by declaring the recorded claim hash', () => {
    // The engine computed h('3') from the bytes it received; the caller claims C.
    expect(reconcileTurn(recorded, { ...good, claimHash: h('3'), declared: { claimHash: C } })).toEqual({ ok: false, diagnostic: 'malformed-entry' });
  });

  it('an authored hash that is not a digest is malformed', () => {
    expect(reconcileTurn(open, { ...good, body: { kind: 'authored', authoredHash: 'zz' } })).toEqual({ ok: false, diagnostic: 'malformed-entry' });
  });

  it('a turn-conflict never happens on an open slot', () => {
    expect(reconcileTurn(open, { ...good, claimHash: h('3') })).toEqual({ ok: true, duplicate: false });
  });
});

describe('reconcileFrame', () => {
  const rec = { state: 'recorded', sessionId: S, ordinal: 0, parentHash: P, frameRoot: F, entryHash: E } as const;
  it.each([
    [{ sessionId: S, ordinal: 0, frameRoot: F }, { ok: true, duplicate: true, entryHash: E }],
    [{ sessionId: S, ordinal: 0, frameRoot: F, parentHash: P }, { ok: true, duplicate: true, entryHash: E }],
    [{ sessionId: S, ordinal: 0, frameRoot: C }, { ok: false, diagnostic: 'turn-conflict' }],
    [{ sessionId: S, ordinal: 1, frameRoot: F }, { ok: false, diagnostic: 'broken-chain' }],
    [{ sessionId: S, ordinal: 0, frameRoot: F, parentHash: C }, { ok: false, diagnostic: 'broken-chain' }],
    [{ sessionId: C, ordinal: 1, frameRoot: C }, { ok: false, diagnostic: 'wrong-session' }],
    [{ sessionId: C, ordinal: 0, frameRoot: 'x' }, { ok: false, diagnostic: 'malformed-entry' }],
  ])('%o → %o', (claim, want) => {
    expect(reconcileFrame(rec, claim)).toEqual(want);
  });
});

describe('phaseGate', () => {
  it.each([
    ['sealed', 'turn', 'sealed'],
    ['sealed', 'frame', 'sealed'],
    ['sealed', 'finalize', 'sealed'],
    ['pending', 'turn', undefined],
    ['pending', 'frame', 'not-pending'],
    ['pending', 'finalize', 'not-pending'],
    ['awaiting-frame', 'turn', 'not-pending'],
    ['awaiting-frame', 'frame', undefined],
    ['awaiting-frame', 'finalize', undefined],
  ] as const)('%s + %s → %s', (phase, verb, want) => {
    expect(phaseGate(phase, verb)).toBe(want);
  });
});

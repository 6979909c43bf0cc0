import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEMO_MARKETS, MarketSim, SIM_EPOCH_MS, WAKE_STEP_MS, formatTicks } from '../../src/demo/market.js';
import { BLOCK_WAKES, CLOSING_ACTS, PROBES, TURN_ACTS, TX_ACTS, planDay, type TurnActDef } from '../../src/demo/script.js';
import { INTENT_CODES } from '../../src/intent/index.js';
import { FAILURE_CLASSES, SESSION_DIAGNOSTICS } from '../../src/protocol/index.js';
import { LATE_PROBE } from '../../src/demo/script.js';

const DECIMAL = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

describe('market simulator', () => {
  it('formats integer ticks as decimals', () => {
    expect(formatTicks(600123, 1)).toBe('60012.3');
    expect(formatTicks(5, 2)).toBe('0.05');
    expect(formatTicks(-7, 1)).toBe('-0.7');
    expect(formatTicks(12, 0)).toBe('12');
  });

  it('same seed, same frames; simulated time is start + fixed step, never the clock', () => {
    const run = (seed: number) => {
      const m = new MarketSim(seed);
      const frames = [{ time: m.timeOf(-1), data: m.openData([{ id: 'alpha', market: 'BTC-PERP' }], 5) }];
      for (let ord = 0; ord < 30; ord++) frames.push({ time: m.timeOf(ord), data: m.wake(ord, [], []).data });
      return { start: m.startTime, frames };
    };
    const a = run(11);
    expect(run(11)).toEqual(a);
    expect(run(12).frames).not.toEqual(a.frames);
    expect((a.start - SIM_EPOCH_MS) % 86_400_000).toBe(0);
    a.frames.forEach((f, i) => expect(f.time).toBe(a.start + i * WAKE_STEP_MS));
  });

  it('prices stay positive decimal strings over a long walk (seed 0xfeed)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (seed) => {
        const m = new MarketSim(seed);
        for (let ord = 0; ord < 300; ord++) {
          const { data } = m.wake(ord, [], []);
          const prices = data['prices'] as Record<string, string>;
          for (const d of DEMO_MARKETS) {
            expect(prices[d.symbol]).toMatch(DECIMAL);
            expect(m.priceTicks(d.symbol)).toBeGreaterThan(0);
          }
        }
      }),
      { seed: 0xfeed, numRuns: 20 },
    );
  });

  it('fills opens and closes at a price, other actions without one', () => {
    const m = new MarketSim(3);
    const { fills, data } = m.wake(0, [
      { agent: 'alpha', action: 'open', market: 'BTC-PERP', side: 'long', size: '0.1', intent_hash: '0x01' },
      { agent: 'beta', action: 'transfer', size: '25', target: '0x90f79bf6eb2c4f870365e785982e1f101e93b906', intent_hash: '0x02' },
    ], [{ ordinal: 0, probe: 'network-retry', outcome: 'duplicate' }]);
    expect(fills[0]?.price).toMatch(DECIMAL);
    expect(fills[1]?.price).toBeUndefined();
    expect(data['fills']).toEqual(fills);
    expect(data['notices']).toEqual([{ ordinal: 0, probe: 'network-retry', outcome: 'duplicate' }]);
  });
});

describe('the day script', () => {
  it('covers every intent rejection code, every stand-down class and every session diagnostic', () => {
    const acts: readonly TurnActDef[] = [...TURN_ACTS, ...CLOSING_ACTS];
    const codes = new Set<string>(acts.flatMap((a) => ('code' in a.expect ? [a.expect.code] : [])));
    for (const c of INTENT_CODES) expect(codes, c).toContain(c);
    for (const c of ['cap_exceeded', 'market_not_allowed', 'target_not_allowed', 'quota_exhausted', 'tx_cap_reached', 'mandate_terminated', 'judge_rate_limited', 'judge_quorum_not_met']) expect(codes, c).toContain(c);
    // The panel's answers: a denial, an unparsable reply, a stranger's signature, a timeout; splits 2 of 3 (admitted) and 1 of 3.
    const answers = new Set(acts.flatMap((a) => ('panel' in a.expect && a.expect.panel?.answer !== undefined ? [a.expect.panel.answer] : [])));
    for (const c of ['judge_denied', 'judge_unparsable', 'judge_untrusted_signer', 'timeout']) expect(answers, c).toContain(c);
    const splits = acts.flatMap((a) => ('panel' in a.expect && a.expect.panel !== undefined ? [`${a.expect.panel.allow}:${a.expect.panel.admitted}`] : []));
    expect(splits).toEqual(expect.arrayContaining(['2:true', '1:false']));
    const classes = new Set(TURN_ACTS.flatMap((a) => ('standDown' in a.expect ? [a.expect.standDown] : [])));
    expect([...classes].sort()).toEqual([...FAILURE_CLASSES].sort());
    const outcomes = new Set<string>([...PROBES.map((p) => p.expect), LATE_PROBE.expect]);
    for (const d of SESSION_DIAGNOSTICS) expect(outcomes).toContain(d);
    expect(outcomes).toContain('duplicate');
  });

  it('never puts a stand-down right after an act whose ticket the next frame settles (its outcome must be ruled) (seed 0x5e77)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (seed) => {
        const plan = planDay(seed, 48);
        for (const [ord, act] of plan.acts) if (act === 'unfilled-order' || act === 'double-fill') expect(plan.acts.get(ord + 1) ?? 'none').not.toMatch(/^stand-down/);
      }),
      { seed: 0x5e77, numRuns: 300 },
    );
  });

  it('places every act once on distinct wakes from 2 and every probe on wakes from 1 (seed 0x5c1f)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), // +3: room to move a stand-down off the wake after an act settled in the next frame.
      fc.integer({ min: TURN_ACTS.length + 2 + CLOSING_ACTS.length + 1 + 3, max: 200 }), (seed, wakes) => {
        const plan = planDay(seed, wakes);
        const closing: readonly string[] = CLOSING_ACTS.map((a) => a.name);
        const first = [...plan.acts].filter(([ord, a]) => ord < BLOCK_WAKES && !closing.includes(a));
        expect(first.map(([, a]) => a).sort()).toEqual(TURN_ACTS.map((a) => a.name).sort());
        for (const [ord] of first) expect(ord).toBeGreaterThanOrEqual(2);
        // The close: its two acts on the last two wakes, an ordinary wake before them, a budget the day can spend.
        expect([plan.acts.get(wakes - 2), plan.acts.get(wakes - 1), plan.acts.get(wakes - 3)]).toEqual([...closing, undefined]);
        expect(plan.closeAt).toBe(wakes - 2);
        expect(plan.txCap).toBeGreaterThan(TX_ACTS.size);
        expect(plan.txCap).toBeLessThan(wakes);
        // The 1-of-3 split and the rate-limited proposal share one hour: an odd wake and the next.
        const split = first.find(([, a]) => a === 'panel-split-denied')![0];
        expect(split % 2).toBe(1);
        expect(plan.acts.get(split + 1)).toBe('judge-rate-limited');
        const probes = new Set<string>();
        for (const [ord, list] of plan.probes) {
          expect(ord).toBeGreaterThanOrEqual(1);
          expect(ord).toBeLessThan(wakes);
          list.forEach((p) => probes.add(p));
        }
        expect([...probes].sort()).toEqual(PROBES.map((p) => p.name).sort());
        expect(planDay(seed, wakes)).toEqual(plan);
      }),
      { seed: 0x5c1f, numRuns: 100 },
    );
  });

  it('a short day gets the most important acts first; a day of 0–2 wakes gets none', () => {
    const plan = planDay(1, 7);
    expect([...plan.acts.values()].sort()).toEqual(TURN_ACTS.slice(0, 5).map((a) => a.name).sort());
    expect(planDay(1, 2).acts.size).toBe(0);
    expect(planDay(1, 0).probes.size).toBe(0);
  });
});

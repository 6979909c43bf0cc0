/**
 * The long-day bench section runs end to end on a tiny day: every step in its
 * own process, each reporting its rate and peak RSS against the budget (the
 * figures themselves are the bench's business, never asserted here).
 */
import { describe, expect, it } from 'vitest';
import { LONGDAY_BUDGET_MB, LONGDAY_STEPS, demoWakes, formatLongdayStep, longdayDemoEntries, longdayEntries, runLongday } from '../../src/bench/longday.js';

describe('bench: long day', () => {
  it('records, seals, exports, verifies, replays and proves a tiny day, one process per step, then runs the demo on as many entries', async () => {
    const steps = await runLongday({ entries: 40 });
    expect(steps.map((s) => s.step)).toEqual([...LONGDAY_STEPS]);
    for (const s of steps) {
      expect(s.entries).toBe(40);
      expect(s.perSecond).toBeGreaterThan(0);
      expect(s.peakRssMb).toBeGreaterThan(0);
      expect(s.budgetRatio).toBeCloseTo(s.peakRssMb / LONGDAY_BUDGET_MB, 6);
      expect(formatLongdayStep(s)).toContain(`${s.peakRssMb} MB`);
    }
    const detail = Object.fromEntries(steps.map((s) => [s.step, s.detail]));
    expect(detail['record']).toBe('39 entries, 1 signed intent');
    expect(detail['seal']).toMatch(/^40 entries sealed/);
    expect(detail['replay']).toBe('1 rulings re-derived');
    expect(detail['prove-store']).toBe('entry 20 of 40 proved and verified');
    expect(detail['prove-bundle']).toBe('entry 20 of 40 proved and verified');
    expect(detail['demo']).toBe(`40 entries, ${demoWakes(40)} wakes, every check ok`);
  }, 120_000);

  it('sizes the demo day to the same number of entries', () => {
    expect(demoWakes(40)).toBe(18);
    expect(demoWakes(100_004)).toBe(50_000);
    expect(demoWakes(4)).toBe(0);
  });

  it('takes the day size from TALLY_BENCH_LONGDAY_N (default 1,000,000)', () => {
    expect(longdayEntries({})).toBe(1_000_000);
    expect(longdayEntries({ TALLY_BENCH_LONGDAY_N: '5000' })).toBe(5000);
    expect(() => longdayEntries({ TALLY_BENCH_LONGDAY_N: '2' })).toThrow(/>= 4/);
    expect(() => longdayEntries({ TALLY_BENCH_LONGDAY_N: 'many' })).toThrow(/integer/);
  });

  it("sizes the demo step's day from TALLY_BENCH_LONGDAY_DEMO_N (default the day's size up to 100,004)", () => {
    expect(longdayDemoEntries(1_000_000, {})).toBe(100_004);
    expect(longdayDemoEntries(40, {})).toBe(40);
    expect(longdayDemoEntries(1_000_000, { TALLY_BENCH_LONGDAY_DEMO_N: '1000000' })).toBe(1_000_000);
    expect(() => longdayDemoEntries(40, { TALLY_BENCH_LONGDAY_DEMO_N: '3' })).toThrow(/>= 4/);
  });
});

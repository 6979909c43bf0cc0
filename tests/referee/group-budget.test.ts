/**
 * Group budgets (§18.3 step 8) by running sums (`GroupLedger`) against the rule's plain
 * reading, kept here only: walk back over the day's admitted calls, adding the figures of the
 * budget's tools while they are within the window, plus the call's own.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decAdd, decCmp } from '../../src/referee/decimal.js';
import { GroupLedger, overGroupBudget } from '../../src/referee/group-budget.js';
import { budgetFigure, type GroupBudget, type SpentCall } from '../../src/referee/tools.js';

function reference(budgets: readonly GroupBudget[], name: string, args: Readonly<Record<string, unknown>>, calls: readonly SpentCall[], now: number): { budget: GroupBudget; total: string } | undefined {
  for (const b of budgets) {
    if (!b.tools.includes(name)) continue;
    let total = budgetFigure(args[b.arg]) ?? '0';
    for (let i = calls.length - 1; i >= 0; i--) {
      const c = calls[i]!;
      if (b.windowMs !== undefined && c.time <= now - b.windowMs) break;
      if (b.tools.includes(c.name)) total = decAdd(total, budgetFigure(c.args[b.arg]) ?? '0');
    }
    if (decCmp(total, b.max) > 0) return { budget: b, total };
  }
  return undefined;
}

const TOOLS = ['pay', 'tip', 'quote'];
const WINDOW = 100;
const figure = fc.oneof(
  fc.integer({ min: 0, max: 40 }),
  fc.constantFrom('0.5', '1.25', '3', '0.001', '12.5', '-2', '7.75'),
  fc.constantFrom(undefined, 'many', 1.5, null),
);
const budget: fc.Arbitrary<GroupBudget> = fc.record({
  tools: fc.subarray(TOOLS, { minLength: 1 }),
  arg: fc.constantFrom('amount', 'fee'),
  max: fc.constantFrom('10', '25.5', '60', '0.75'),
  windowMs: fc.constantFrom(undefined, WINDOW, 1, 37),
}).map((b) => (b.windowMs === undefined ? { tools: b.tools, arg: b.arg, max: b.max } : b) as GroupBudget);
const call = fc.record({
  name: fc.constantFrom(...TOOLS),
  // 0 (same frame time), the window exactly, and in between
  step: fc.constantFrom(0, 0, 1, 5, 36, 37, 50, WINDOW - 1, WINDOW, WINDOW + 1),
  amount: figure,
  fee: figure,
  retry: fc.boolean(),
});

describe('group budgets by running sums', () => {
  it('give the plain reading’s verdict and total on every call of random days, windows at their edges (seed 0x6b0d6)', () => {
    let checked = 0;
    let refused = 0;
    fc.assert(
      fc.property(fc.array(budget, { minLength: 1, maxLength: 4 }), fc.array(call, { minLength: 1, maxLength: 120 }), (budgets, day) => {
        const ledger = new GroupLedger();
        const calls: SpentCall[] = [];
        let now = 1_000;
        for (const c of day) {
          now += c.step;
          const args: Record<string, unknown> = {};
          if (c.amount !== undefined) args['amount'] = c.amount;
          if (c.fee !== undefined) args['fee'] = c.fee;
          const want = reference(budgets, c.name, args, calls, now);
          const got = overGroupBudget(budgets, c.name, args, calls, now, ledger);
          expect(got).toEqual(want);
          if (got !== undefined) expect(got.budget).toBe(want!.budget);
          // a retried ruling on the same day, and a fresh ledger, say the same
          if (c.retry) expect(overGroupBudget(budgets, c.name, args, calls, now, ledger)).toEqual(want);
          expect(overGroupBudget(budgets, c.name, args, calls, now, new GroupLedger())).toEqual(want);
          checked++;
          if (want === undefined) calls.push({ time: now, name: c.name, args });
          else refused++;
        }
      }),
      { seed: 0x6b0d6, numRuns: 300 },
    );
    // the days reach both verdicts
    expect(refused).toBeGreaterThan(checked / 20);
    expect(refused).toBeLessThan(checked);
  });
});

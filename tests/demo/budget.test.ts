/**
 * The desk's transaction budget (src/demo/budget.ts) over any day: whatever
 * the desk chooses on the wakes it is free to trade, no ordinary proposal and
 * no act that must pass the cap ever meets it, and the budget is spent exactly
 * when the close begins, so the close's first proposal meets the cap.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TxBudget } from '../../src/demo/budget.js';
import { HEADROOM_ACTS, TX_ACTS, planDay } from '../../src/demo/script.js';

describe('the transaction budget', () => {
  it('never lets a proposal that must pass meet the cap, and is spent exactly at the close (seed 0xb0d9)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 8, max: 400 }), fc.array(fc.boolean(), { minLength: 400, maxLength: 400 }), (seed, wakes, trades) => {
        const plan = planDay(seed, wakes);
        const budget = new TxBudget(plan);
        let taken = 0;
        for (let ord = 0; ord < (plan.closeAt ?? wakes); ord++) {
          const act = plan.acts.get(ord);
          const pace = budget.pace(ord, taken);
          if (act === undefined) {
            // An ordinary wake: hold, spend, or whatever the desk likes (here: the arbitrary `trades`).
            if (pace === 'spend' || (pace === undefined && trades[ord % trades.length])) {
              expect(taken, `wake ${ord}`).toBeLessThan(plan.txCap);
              taken++;
            }
          } else if (TX_ACTS.has(act)) {
            expect(taken, `${act} at ${ord}`).toBeLessThan(plan.txCap);
            taken++;
          } else if (HEADROOM_ACTS.has(act)) {
            expect(taken, `${act} at ${ord}`).toBeLessThan(plan.txCap);
          }
          budget.passed(ord);
        }
        expect(plan.closeAt).toBe(wakes - 2);
        expect(taken).toBe(plan.txCap);
      }),
      { seed: 0xb0d9, numRuns: 300 },
    );
  });

  it('a day too short for a close has no budget to pace', () => {
    const plan = planDay(1, 7);
    expect(plan.closeAt).toBeUndefined();
    expect(plan.txCap).toBe(57);
    const budget = new TxBudget(plan);
    for (let ord = 0; ord < 7; ord++) expect(budget.pace(ord, 0)).toBeUndefined();
  });
});

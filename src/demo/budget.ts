/**
 * The desk's transaction budget on a day with a close (see `planDay`): the
 * mandate's `tx_cap` is sized so that one transaction is kept for each act
 * that keeps one, and the rest is the desk's to trade with. The desk paces
 * itself so that
 * - an ordinary proposal never meets the cap (it holds when the budget is spent),
 * - one transaction stays spare while an act that must pass the cap is ahead,
 * - and the budget is spent exactly when the close begins (it sweeps profits
 *   to the treasury on the last ordinary wakes when it must),
 * so the close's first proposal meets the cap: `tx_cap_reached`, for real.
 */
import { HEADROOM_ACTS, TX_ACTS, type DayPlan } from './script.js';

/** How the desk answers an ordinary wake: hold (note), spend (a treasury sweep), or trade as it likes (`undefined`). */
export type Pace = 'hold' | 'spend' | undefined;

/** The pacing state over one day, wake by wake. */
export class TxBudget {
  /** Ordinary wakes (no act) from the current one to the close. */
  private ordinaryLeft = 0;
  /** Acts ahead that keep a transaction. */
  private txAhead = 0;
  /** Acts ahead that must pass the cap without keeping a transaction. */
  private headroomAhead = 0;

  constructor(private readonly plan: DayPlan) {
    if (plan.closeAt === undefined) return;
    for (let ord = 0; ord < plan.closeAt; ord++) {
      const act = plan.acts.get(ord);
      if (act === undefined) this.ordinaryLeft++;
      else if (TX_ACTS.has(act)) this.txAhead++;
      else if (HEADROOM_ACTS.has(act)) this.headroomAhead++;
    }
  }

  /**
   * The pace of wake `ord` when `used` transactions (used + locked, as the
   * referee last reported them, less the releases in this frame) are taken.
   */
  pace(ord: number, used: number): Pace {
    const close = this.plan.closeAt;
    if (close === undefined || ord < 0 || ord >= close || this.plan.acts.has(ord)) return undefined;
    const spendable = this.plan.txCap - used - this.txAhead;
    const keep = this.headroomAhead > 0 ? 1 : 0;
    if (spendable - keep <= 0) return 'hold';
    if (spendable >= this.ordinaryLeft) return 'spend';
    return undefined;
  }

  /** Marks wake `ord` answered. */
  passed(ord: number): void {
    const close = this.plan.closeAt;
    if (close === undefined || ord < 0 || ord >= close) return;
    const act = this.plan.acts.get(ord);
    if (act === undefined) this.ordinaryLeft--;
    else if (TX_ACTS.has(act)) this.txAhead--;
    else if (HEADROOM_ACTS.has(act)) this.headroomAhead--;
  }
}

/**
 * Group budgets on tool calls (docs/PROTOCOL.md §18.3 step 8): the figures of one argument over
 * the day's admitted calls of a set of tools — within a window ending at the call's frame time, or
 * over the whole day — plus the call's own, in exact decimals.
 *
 * A day's calls only grow, and their frame times never go back (a chain rule), so each budget
 * keeps the running sums of its figure over the day's calls (`GroupLedger`): the sum over a
 * window is the difference of two running sums, the window's first call found by bisection. A
 * call costs the calls appended since the last one plus a logarithm, not a walk over its window.
 */
import { decAdd, decCmp, decSub } from './decimal.js';
import { budgetFigure, type GroupBudget, type SpentCall } from './tools.js';

/** Per group budget (its tools and argument), the running sums of its figure over a day's calls. */
export class GroupLedger {
  /** key → sums, where `sums[i]` is the sum over the first `i` calls (`sums[0]` is `"0"`). */
  private readonly sums = new Map<string, string[]>();

  /** The sum of `b`'s figure over `calls[from…]`, bringing `b`'s running sums up to `calls`. */
  sumFrom(b: GroupBudget, calls: readonly SpentCall[], from: number): string {
    const key = JSON.stringify([b.tools, b.arg]);
    let sums = this.sums.get(key);
    if (sums === undefined) this.sums.set(key, (sums = ['0']));
    for (let i = sums.length - 1; i < calls.length; i++) {
      const c = calls[i]!;
      const x = b.tools.includes(c.name) ? budgetFigure(c.args[b.arg]) : undefined;
      sums.push(x === undefined ? sums[i]! : decAdd(sums[i]!, x));
    }
    return from === 0 ? sums[calls.length]! : decSub(sums[calls.length]!, sums[from]!);
  }
}

/** The index of the first call with a time after `edge` (calls in time order). */
function firstAfter(calls: readonly SpentCall[], edge: number): number {
  let lo = 0;
  let hi = calls.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (calls[mid]!.time <= edge) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The first group budget this call (of tool `name`, at frame time `now`) would overspend: the
 * figures of the budget's argument over the admitted calls of its tools — those within its
 * window (`now − window < t ≤ now`), or the whole day — plus this call's, in exact decimals.
 * `calls` are the day's admitted calls in order and `ledger` the day's running sums over them.
 */
export function overGroupBudget(budgets: readonly GroupBudget[], name: string, args: Readonly<Record<string, unknown>>, calls: readonly SpentCall[], now: number, ledger: GroupLedger): { readonly budget: GroupBudget; readonly total: string } | undefined {
  for (const b of budgets) {
    if (!b.tools.includes(name)) continue;
    const from = b.windowMs === undefined ? 0 : firstAfter(calls, now - b.windowMs);
    const total = decAdd(budgetFigure(args[b.arg]) ?? '0', ledger.sumFrom(b, calls, from));
    if (decCmp(total, b.max) > 0) return { budget: b, total };
  }
  return undefined;
}

/**
 * The demo's referee: the mandate sealed in the spec (what the principal
 * allows the desk), the panel of local judges that sign their verdicts on its
 * rules (see `judges.ts`), and the ruler that applies both.
 */
import type { CanonicalObject } from '../protocol/index.js';
import { MANDATE_LIMITS, createRefereeRuler, type Judge, type RefereeRuler } from '../referee/index.js';
import type { TranscriptStore } from '../store/index.js';
import { DEMO_JUDGES, DEMO_JUDGE_TIMEOUT_MS, DEMO_QUORUM, demoPanel } from './judges.js';
import { DEMO_PARTIES, TREASURY_ADDRESS } from './keys.js';
import { DEMO_MARKETS } from './market.js';
import { planDay } from './script.js';

/** The mandate's semantic rules (the judges rule on them; the local judges read these forms). */
export const DEMO_RULES = Object.freeze(['Never trade DOGE-PERP.', 'The context must not mention "guaranteed".']);

/** The judge rate of the demo's mandate: one judged proposal per agent an hour (each agent wakes once an hour). */
export const DEMO_JUDGE_RATE = Object.freeze({ max: 1, window_ms: 3_600_000 });

/** The quota cap of a `wakes`-long day: it grows with the day, so ordinary trading never exhausts it. */
export function demoQuotaCap(wakes: number): number {
  return 50 + 2 * wakes;
}

/** The size cap of a `wakes`-long day: 5000, and always above the whole quota (so one order can ask for more than the quota holds). */
export function demoSizeCap(wakes: number): string {
  return String(Math.max(5000, demoQuotaCap(wakes) + 1));
}

/**
 * The mandate of a demo day: every action on the two markets, transfers only
 * to the treasury, caps, a quota that grows with the day and a transaction
 * cap the desk's plan spends by the close (see `planDay`), tickets that live
 * two hours, one judged proposal per agent an hour, and the rules above
 * judged by a panel of three (two must allow).
 */
export function demoMandate(seed: number, wakes: number, start: number, stepMs: number): CanonicalObject {
  return {
    version: 2,
    instance: `tally-demo/seed-${seed}`,
    principal: DEMO_PARTIES.principal.address,
    operator: DEMO_PARTIES.operator.address,
    executor: DEMO_PARTIES.executor.address,
    actions: ['open', 'modify', 'close', 'transfer'],
    markets: DEMO_MARKETS.map((m) => m.symbol),
    targets: [TREASURY_ADDRESS],
    caps: { size: demoSizeCap(wakes), leverage: '5', slippage: '0.02' },
    quota: { cap: String(demoQuotaCap(wakes)), weights: { modify: '0', close: '0', transfer: '0.01' } },
    tx_cap: planDay(seed, wakes).txCap,
    // The day's last wake plus a day (the mandate outlives the day), within the longest lifetime a mandate may have.
    starts_at: start,
    expires_at: start + Math.min((wakes + 1) * stepMs + 86_400_000, MANDATE_LIMITS.maxLifetimeMs),
    ticket_ttl_ms: 2 * 3_600_000,
    rules: [...DEMO_RULES],
    panel: { judges: DEMO_JUDGES.map((j) => ({ signer: j.signer, model: j.model })), quorum: DEMO_QUORUM },
    judge_rate: { ...DEMO_JUDGE_RATE },
  };
}

/**
 * The ruler a demo day is recorded with (a fresh one per engine): the referee
 * over the engine's store, asking the demo's panel with its short per-judge
 * timeout; `null` records without judges (every judged proposal is then
 * denied: no client for any member).
 */
export function demoRuler(store: TranscriptStore, panel: readonly Judge[] | null = demoPanel()): RefereeRuler {
  return createRefereeRuler({ store, judgeTimeoutMs: DEMO_JUDGE_TIMEOUT_MS, ...(panel === null ? {} : { panel }) });
}

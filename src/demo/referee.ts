/**
 * The demo's referee: the mandate sealed in the spec (what the principal
 * allows the desk), the deterministic local judge that signs verdicts on its
 * rules, and the ruler that applies both.
 */
import type { CanonicalObject } from '../protocol/index.js';
import { MANDATE_LIMITS, createLocalJudge, createRefereeRuler, type Judge, type RefereeRuler } from '../referee/index.js';
import type { TranscriptStore } from '../store/index.js';
import { JUDGE_GLITCH, JUDGE_WRONG_KEY } from './agent.js';
import { ANVIL_KEY_2, ANVIL_KEY_6, DEMO_PARTIES, TREASURY_ADDRESS } from './keys.js';
import { DEMO_MARKETS } from './market.js';

/** The mandate's semantic rules (the judge rules on them; the local judge reads these forms). */
export const DEMO_RULES = Object.freeze(['Never trade DOGE-PERP.', 'The context must not mention "guaranteed".']);

/**
 * The mandate of a demo day: every action on the two markets, transfers only
 * to the treasury, caps, a quota and a transaction cap that grow with the day,
 * tickets that live two hours, and the rules above judged by Anvil account #6.
 */
export function demoMandate(seed: number, wakes: number, start: number, stepMs: number): CanonicalObject {
  return {
    instance: `tally-demo/seed-${seed}`,
    principal: DEMO_PARTIES.principal.address,
    operator: DEMO_PARTIES.operator.address,
    executor: DEMO_PARTIES.executor.address,
    actions: ['open', 'modify', 'close', 'transfer'],
    markets: DEMO_MARKETS.map((m) => m.symbol),
    targets: [TREASURY_ADDRESS],
    caps: { size: '5000', leverage: '5', slippage: '0.02' },
    quota: { cap: String(50 + 2 * wakes), weights: { modify: '0', close: '0', transfer: '0.01' } },
    tx_cap: Math.min(1_000_000, 50 + wakes),
    // The day's last wake plus a day (the mandate outlives the day), within the longest lifetime a mandate may have.
    starts_at: start,
    expires_at: start + Math.min((wakes + 1) * stepMs + 86_400_000, MANDATE_LIMITS.maxLifetimeMs),
    ticket_ttl_ms: 2 * 3_600_000,
    rules: [...DEMO_RULES],
    judges: [DEMO_PARTIES.judge.address],
  };
}

/** The judge of the demo: the local rule judge, which garbles its reply when the context carries {@link JUDGE_GLITCH}. */
export function demoJudge(): Judge {
  const own = createLocalJudge({
    key: ANVIL_KEY_6,
    script: (query) => (query.request.context?.includes(JUDGE_GLITCH) ? 'Looks fine to me, go ahead!' : undefined),
  });
  // On {@link JUDGE_WRONG_KEY} the answer is signed by a key the mandate does not list (the intruder's): judge_untrusted_signer.
  const stranger = createLocalJudge({ key: ANVIL_KEY_2 });
  return { model: own.model, ask: (query) => (query.request.context?.includes(JUDGE_WRONG_KEY) ? stranger.ask(query) : own.ask(query)) };
}

/** The ruler a demo day is recorded with (a fresh one per engine): the referee over the engine's store, with the demo judge. */
export function demoRuler(store: TranscriptStore, judge: Judge | null = demoJudge()): RefereeRuler {
  return createRefereeRuler({ store, ...(judge === null ? {} : { judge }) });
}

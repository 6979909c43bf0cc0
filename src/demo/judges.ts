/**
 * The demo's panel of judges (seed 003: independent validators, the verdict
 * stands only when enough of them agree): three deterministic local judges,
 * each with its own key and model id, asked in parallel by the referee with a
 * short per-judge timeout. Two of three valid signed ALLOWs admit.
 *
 * Each judge reads the mandate's rules (see `createLocalJudge`); two of them
 * also have a temperament of their own, so the panel can really split:
 * - `rules` reads the rules only. On {@link JUDGE_GLITCH} it answers in prose
 *   (unparsable); on {@link JUDGE_WRONG_KEY} its answer comes back signed by a
 *   key the mandate does not name for it (the intruder's).
 * - `sceptic` also denies a proposal whose reason is a tip or a rumour.
 * - `cautious` also denies an order placed without a stop; on
 *   {@link JUDGE_SLOW} it deliberates four times its timeout before answering,
 *   so the referee records it as timed out (its late answer is dropped).
 *
 * Every answer is a real chat completion signed with the judge's own key and
 * assessed by the referee; nothing here decides a ruling.
 */
import { createLocalJudge, type Judge, type JudgeAnswer, type JudgeQuery } from '../referee/index.js';
import { ANVIL_KEY_2, ANVIL_KEY_6, ANVIL_KEY_7, HARDHAT_KEY_10 } from './keys.js';
import { privateKeyToAccount } from 'viem/accounts';

/** Context mark on which the rule judge answers in prose instead of a verdict (a model's glitch). */
export const JUDGE_GLITCH = '#glitch';
/** Context mark on which the rule judge's answer is signed by a key the mandate does not name for it. */
export const JUDGE_WRONG_KEY = '#wrong-key';
/** Context mark on which the cautious judge answers only after its timeout (a model that hangs). */
export const JUDGE_SLOW = '#slow';

/** Each panel judge's own timeout in the demo, in ms (short, so the one that hangs costs little). */
export const DEMO_JUDGE_TIMEOUT_MS = 250;
/** Valid signed ALLOWs the demo's panel needs. */
export const DEMO_QUORUM = 2;

/** One judge of the demo's panel. */
export interface DemoJudgeDef {
  readonly name: 'rules' | 'sceptic' | 'cautious';
  readonly key: `0x${string}`;
  readonly model: string;
  /** Its address (lowercase), as the mandate names it. */
  readonly signer: string;
  readonly what: string;
}

/** The panel, in the mandate's order. */
export const DEMO_JUDGES: readonly DemoJudgeDef[] = Object.freeze(
  [
    { name: 'rules', key: ANVIL_KEY_6, model: 'tally-local-rules-v1', what: "reads the mandate's rules" },
    { name: 'sceptic', key: ANVIL_KEY_7, model: 'tally-local-sceptic-v1', what: 'also denies a proposal whose reason is a tip or a rumour' },
    { name: 'cautious', key: HARDHAT_KEY_10, model: 'tally-local-cautious-v1', what: 'also denies an order placed without a stop' },
  ].map((j) => Object.freeze({ ...j, signer: privateKeyToAccount(j.key as `0x${string}`).address.toLowerCase() }) as DemoJudgeDef),
);

const TIP = /\b(?:tip|tips|rumou?rs?|insider)\b/i;
const NO_STOP = /\bno stop\b|\bwithout a stop\b/i;

function deny(query: JudgeQuery, reason: string): string {
  return JSON.stringify({ reason, verdict: 'DENY', action: query.request.action });
}

function rulesJudge(def: DemoJudgeDef): Judge {
  const own = createLocalJudge({ key: def.key, model: def.model, script: (q) => (q.request.context?.includes(JUDGE_GLITCH) ? 'Looks fine to me, go ahead!' : undefined) });
  const stranger = createLocalJudge({ key: ANVIL_KEY_2, model: def.model });
  return { model: own.model, signer: def.signer, ask: (q) => (q.request.context?.includes(JUDGE_WRONG_KEY) ? stranger.ask(q) : own.ask(q)) };
}

function scepticJudge(def: DemoJudgeDef): Judge {
  return createLocalJudge({
    key: def.key,
    model: def.model,
    script: (q) => (TIP.test(q.request.context ?? '') ? deny(q, 'The proposal rests on a tip or a rumour, not on the market; a sceptic does not act on hearsay.') : undefined),
  });
}

function cautiousJudge(def: DemoJudgeDef, timeoutMs: number): Judge {
  const own = createLocalJudge({
    key: def.key,
    model: def.model,
    script: (q) => (NO_STOP.test(q.request.context ?? '') ? deny(q, 'The order is placed without a stop; the cautious judge does not allow unbounded risk.') : undefined),
  });
  return {
    model: own.model,
    signer: def.signer,
    async ask(q: JudgeQuery): Promise<JudgeAnswer> {
      if (!q.request.context?.includes(JUDGE_SLOW)) return own.ask(q);
      // Deliberates well past its timeout, then answers; the referee has stopped waiting by then.
      await new Promise<void>((resolve) => setTimeout(resolve, 4 * timeoutMs).unref());
      return own.ask(q);
    },
  };
}

/**
 * The three judge clients of the demo's panel (matched to the mandate's
 * members by model and signer). `timeoutMs` is the referee's per-judge
 * timeout, which the cautious judge overruns on {@link JUDGE_SLOW}.
 *
 * @example
 * createRefereeRuler({ store, panel: demoPanel(), judgeTimeoutMs: DEMO_JUDGE_TIMEOUT_MS });
 */
export function demoPanel(timeoutMs = DEMO_JUDGE_TIMEOUT_MS): Judge[] {
  const [rules, sceptic, cautious] = DEMO_JUDGES as [DemoJudgeDef, DemoJudgeDef, DemoJudgeDef];
  return [rulesJudge(rules), scepticJudge(sceptic), cautiousJudge(cautious, timeoutMs)];
}

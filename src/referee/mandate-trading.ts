/**
 * The trading members of a mandate (PROTOCOL.md §10): who acts (operator,
 * executor), what (actions, markets, targets), how much (caps, quota,
 * tx_cap) and how long a ticket lives. A tool-only mandate (§18.7) has none
 * of them: {@link TOOL_ONLY_TRADING} is what it governs instead — nothing.
 */
import { INTENT_ACTIONS, type IntentAction } from '../intent/schema.js';
import { decCmp } from './decimal.js';
import { address, attempt, exactKeys, fail, figure, intIn, isObject, list, MANDATE_LIMITS, Problem, unique } from './mandate-checks.js';

/** Ticket lifetime when the mandate names none (the seed's maximum, one day). */
export const DEFAULT_TICKET_TTL_MS = 86_400_000;

const MARKET = /^[A-Za-z0-9][A-Za-z0-9._/:-]{0,63}$/;

/** The members that govern intents: a tool-only mandate has none of them. */
export const TRADING_MEMBERS = ['operator', 'executor', 'actions', 'markets', 'targets', 'caps', 'quota', 'tx_cap', 'ticket_ttl_ms'] as const;

/** The trading members as checked (each `undefined` when its check failed; the problem is in `problems`). */
export interface TradingMembers {
  readonly operator: string | undefined;
  readonly executor: string | undefined;
  readonly actions: readonly IntentAction[] | undefined;
  readonly markets: readonly string[] | undefined;
  readonly targets: readonly string[] | undefined;
  readonly caps: { readonly size: string; readonly leverage: string; readonly slippage: string } | undefined;
  readonly quotaParts: { readonly quotaCap: string; readonly weights: Readonly<Record<IntentAction, string>> } | undefined;
  readonly txCap: number | undefined;
  readonly ticketTtlMs: number | undefined;
}

/**
 * A tool-only mandate's trading: no operator or executor (the empty string, which no signature
 * recovers to), no action allowed, every cap and the quota zero. Never consulted: a tool-only
 * mandate opens only a gateway day, whose turns are ruled as tool calls (§18.7).
 */
export const TOOL_ONLY_TRADING: TradingMembers = Object.freeze({
  operator: '',
  executor: '',
  actions: Object.freeze([]) as readonly IntentAction[],
  markets: Object.freeze([]) as readonly string[],
  targets: Object.freeze([]) as readonly string[],
  caps: Object.freeze({ size: '0', leverage: '0', slippage: '0' }),
  quotaParts: Object.freeze({ quotaCap: '0', weights: Object.freeze({ open: '0', modify: '0', close: '0', transfer: '0' }) }),
  txCap: 0,
  ticketTtlMs: 0,
});

/** Checks the trading members of `o` (spec.mandate), pushing every problem found. */
export function tradingMembers(o: Record<string, unknown>, problems: string[]): TradingMembers {
  const w = 'spec.mandate';
  const operator = attempt(problems, () => address(o['operator'], `${w}.operator`));
  const executor = attempt(problems, () => address(o['executor'], `${w}.executor`));

  const actions = attempt(problems, () => {
    const xs = list(o['actions'], `${w}.actions`, 1, INTENT_ACTIONS.length).map((a, i) => {
      if (typeof a !== 'string' || !(INTENT_ACTIONS as readonly string[]).includes(a)) fail(`${w}.actions[${i}] must be one of ${INTENT_ACTIONS.join(', ')}`);
      return a as IntentAction;
    });
    unique(xs, `${w}.actions`);
    return xs;
  });

  const markets = attempt(problems, () => {
    const needsMarkets = actions === undefined || actions.some((a) => a !== 'transfer');
    const xs = o['markets'] === undefined ? [] : list(o['markets'], `${w}.markets`, 1, MANDATE_LIMITS.maxMarkets).map((x, i) => {
      if (typeof x !== 'string' || !MARKET.test(x)) fail(`${w}.markets[${i}] must be a market symbol such as "BTC-PERP"`);
      return x as string;
    });
    if (needsMarkets && actions !== undefined && xs.length === 0) fail(`${w}.markets is required when actions include open, modify or close`);
    unique(xs, `${w}.markets`);
    return xs;
  });

  const targets = attempt(problems, () => {
    if (o['targets'] === undefined) return undefined;
    if (actions !== undefined && !actions.includes('transfer')) fail(`${w}.targets is only meaningful when actions include transfer`);
    const xs = list(o['targets'], `${w}.targets`, 1, MANDATE_LIMITS.maxTargets).map((x, i) => address(x, `${w}.targets[${i}]`));
    unique(xs, `${w}.targets`);
    return xs;
  });

  const caps = attempt(problems, () => {
    const caps = o['caps'];
    if (!isObject(caps)) fail(`${w}.caps must be an object { size, leverage, slippage }`);
    const c = caps as Record<string, unknown>;
    exactKeys(c, `${w}.caps`, ['size', 'leverage', 'slippage'], ['size', 'leverage', 'slippage']);
    const fig = { positive: true, maxInteger: MANDATE_LIMITS.figureIntegerDigits };
    const inner: string[] = [];
    const size = attempt(inner, () => figure(c['size'], `${w}.caps.size`, fig));
    const leverage = attempt(inner, () => figure(c['leverage'], `${w}.caps.leverage`, fig));
    const slippage = attempt(inner, () => {
      const x = figure(c['slippage'], `${w}.caps.slippage`, { positive: false, maxInteger: 1 });
      if (decCmp(x, '1') > 0) fail(`${w}.caps.slippage must be a fraction in [0, 1]`);
      return x;
    });
    if (inner.length > 0) throw new Problem(inner[0]!, inner);
    return { size: size!, leverage: leverage!, slippage: slippage! };
  });

  const quotaParts = attempt(problems, () => {
    const quota = o['quota'];
    if (!isObject(quota)) fail(`${w}.quota must be an object { cap, weights? }`);
    const q = quota as Record<string, unknown>;
    exactKeys(q, `${w}.quota`, ['cap', 'weights'], ['cap']);
    const quotaCap = figure(q['cap'], `${w}.quota.cap`, { positive: true, maxInteger: MANDATE_LIMITS.quotaIntegerDigits });
    const weights: Record<IntentAction, string> = { open: '1', modify: '1', close: '1', transfer: '1' };
    if (q['weights'] !== undefined) {
      const ws = q['weights'];
      if (!isObject(ws)) fail(`${w}.quota.weights must be an object of action → decimal multiplier`);
      for (const [k, v] of Object.entries(ws as Record<string, unknown>)) {
        if (actions !== undefined && !actions.includes(k as IntentAction)) fail(`${w}.quota.weights.${k}: not an allowed action of this mandate`);
        weights[k as IntentAction] = figure(v, `${w}.quota.weights.${k}`, { positive: false, maxInteger: MANDATE_LIMITS.figureIntegerDigits });
      }
    }
    return { quotaCap, weights };
  });

  const txCap = attempt(problems, () => intIn(o['tx_cap'], `${w}.tx_cap`, 1, MANDATE_LIMITS.maxTxCap));
  const ticketTtlMs = attempt(problems, () => (o['ticket_ttl_ms'] === undefined ? DEFAULT_TICKET_TTL_MS : intIn(o['ticket_ttl_ms'], `${w}.ticket_ttl_ms`, MANDATE_LIMITS.minTicketTtlMs, MANDATE_LIMITS.maxTicketTtlMs)));
  return { operator, executor, actions, markets, targets, caps, quotaParts, txCap, ticketTtlMs };
}

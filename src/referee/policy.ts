/**
 * The mechanical policy checks of an authentic intent against the mandate, in
 * a fixed order so the first failure is always the reported one:
 * terminated → not started → expired → action → market → target → caps (size, leverage,
 * slippage) → quota → transaction cap.
 */
import type { Intent } from '../intent/index.js';
import { decAdd, decCmp } from './decimal.js';
import type { Mandate } from './mandate.js';
import { quotaFits, txFits, weightOf, type RefereeFold } from './state.js';
import type { RefereeCodeStages } from './codes.js';

/** A policy code. */
export type PolicyCode = { [C in keyof RefereeCodeStages]: RefereeCodeStages[C] extends 'policy' ? C : never }[keyof RefereeCodeStages];

/** Outcome of {@link checkPolicy}. */
export type PolicyResult = { readonly ok: true; readonly weight: string } | { readonly ok: false; readonly code: PolicyCode; readonly message: string };

const no = (code: PolicyCode, message: string): PolicyResult => ({ ok: false, code, message });

/**
 * Checks one intent (already authentic and within the intent contract) at
 * frame time `now`.
 *
 * @example
 * const r = checkPolicy(mandate, fold, intent, frameTime);
 * if (!r.ok) r.code; // e.g. 'quota_exhausted'
 */
export function checkPolicy(m: Mandate, f: RefereeFold, intent: Intent, now: number): PolicyResult {
  if (f.terminated) return no('mandate_terminated', `the principal terminated the mandate at frame ${f.terminated.ordinal}`);
  if (now < m.startsAt) return no('mandate_not_started', `the mandate is in force from ${m.startsAt} (frame time ${now})`);
  if (now >= m.expiresAt) return no('mandate_expired', `the mandate expired at ${m.expiresAt} (frame time ${now})`);
  if (!m.actions.includes(intent.action)) return no('action_not_allowed', `action ${intent.action} is not allowed (allowed: ${m.actions.join(', ')})`);
  if (intent.action !== 'transfer' && !m.markets.includes(intent.market)) return no('market_not_allowed', `market ${intent.market} is not allowed`);
  if (intent.action === 'transfer' && m.targets !== undefined && !m.targets.includes((intent.target_address ?? '').toLowerCase())) {
    return no('target_not_allowed', `transfer target ${intent.target_address ?? '(none)'} is not allowed`);
  }
  if (decCmp(intent.size, m.caps.size) > 0) return no('cap_exceeded', `size ${intent.size} exceeds the cap ${m.caps.size}`);
  if ((intent.action === 'open' || intent.action === 'modify') && decCmp(intent.leverage, m.caps.leverage) > 0) {
    return no('cap_exceeded', `leverage ${intent.leverage} exceeds the cap ${m.caps.leverage}`);
  }
  if (intent.action !== 'transfer' && decCmp(intent.max_slippage, m.caps.slippage) > 0) {
    return no('cap_exceeded', `max_slippage ${intent.max_slippage} exceeds the cap ${m.caps.slippage}`);
  }
  const weight = weightOf(m, intent);
  if (!quotaFits(m, f, weight)) {
    return no('quota_exhausted', `weight ${weight} does not fit: used ${f.used} + locked ${f.locked} + ${weight} = ${decAdd(decAdd(f.used, f.locked), weight)} > cap ${m.quotaCap}`);
  }
  if (!txFits(m, f)) return no('tx_cap_reached', `used ${f.usedTxs} + locked ${f.lockedTxs} transactions reach the cap ${m.txCap}`);
  return { ok: true, weight };
}

/**
 * The closed vocabulary of referee rulings: three stages and every code, each
 * code tied to exactly one stage (compile-time checked both ways).
 *
 * - `policy`  — mechanical checks of an authentic intent against the mandate;
 * - `verdict` — the judge's signed verdict on the mandate's semantic rules;
 * - `ticket`  — the runtime's reports in frame data (redeem, release, terminate).
 */

/** A referee stage, in the order an intent meets them (tickets are frame-borne). */
export type RefereeStage = 'policy' | 'verdict' | 'ticket';

/** Which stage each code belongs to. */
export interface RefereeCodeStages {
  mandate_invalid: 'policy';
  mandate_terminated: 'policy';
  mandate_not_started: 'policy';
  mandate_expired: 'policy';
  action_not_allowed: 'policy';
  market_not_allowed: 'policy';
  target_not_allowed: 'policy';
  cap_exceeded: 'policy';
  quota_exhausted: 'policy';
  tx_cap_reached: 'policy';
  judge_rate_limited: 'verdict';
  judge_unavailable: 'verdict';
  judge_evidence_invalid: 'verdict';
  judge_untrusted_signer: 'verdict';
  judge_unparsable: 'verdict';
  judge_action_mismatch: 'verdict';
  judge_denied: 'verdict';
  judge_quorum_not_met: 'verdict';
  transition_malformed: 'ticket';
  ticket_unknown: 'ticket';
  bad_transition_signature: 'ticket';
  ticket_not_active: 'ticket';
  redeem_after_termination: 'ticket';
  ticket_expired: 'ticket';
  intent_mismatch: 'ticket';
  release_not_allowed: 'ticket';
  already_terminated: 'ticket';
}

/** A referee ruling code. */
export type RefereeCode = keyof RefereeCodeStages;

/** Every stage, in order. */
export const REFEREE_STAGES = Object.freeze(['policy', 'verdict', 'ticket'] as const satisfies readonly RefereeStage[]);

/**
 * Runtime lookup of the stage of every code.
 *
 * @example
 * REFEREE_CODE_STAGE.quota_exhausted; // 'policy'
 */
export const REFEREE_CODE_STAGE = Object.freeze({
  mandate_invalid: 'policy',
  mandate_terminated: 'policy',
  mandate_not_started: 'policy',
  mandate_expired: 'policy',
  action_not_allowed: 'policy',
  market_not_allowed: 'policy',
  target_not_allowed: 'policy',
  cap_exceeded: 'policy',
  quota_exhausted: 'policy',
  tx_cap_reached: 'policy',
  judge_rate_limited: 'verdict',
  judge_unavailable: 'verdict',
  judge_evidence_invalid: 'verdict',
  judge_untrusted_signer: 'verdict',
  judge_unparsable: 'verdict',
  judge_action_mismatch: 'verdict',
  judge_denied: 'verdict',
  judge_quorum_not_met: 'verdict',
  transition_malformed: 'ticket',
  ticket_unknown: 'ticket',
  bad_transition_signature: 'ticket',
  ticket_not_active: 'ticket',
  redeem_after_termination: 'ticket',
  ticket_expired: 'ticket',
  intent_mismatch: 'ticket',
  release_not_allowed: 'ticket',
  already_terminated: 'ticket',
} as const satisfies { readonly [C in RefereeCode]: RefereeCodeStages[C] });

/** Every code, grouped by stage in check order. */
export const REFEREE_CODES = Object.freeze(Object.keys(REFEREE_CODE_STAGE) as RefereeCode[]);

true satisfies [Exclude<RefereeStage, RefereeCodeStages[RefereeCode]>] extends [never] ? true : false;
true satisfies [Exclude<RefereeStage, (typeof REFEREE_STAGES)[number]>] extends [never] ? true : false;

/**
 * The machine-readable catalogue of every referee ruling code: its stage, when
 * it happens and how to get past it. `tally codes` prints it beside
 * `INTENT_RULING_CATALOGUE`.
 */
import type { RefereeCode, RefereeCodeStages } from './codes.js';

/** One catalogue row. */
export type RefereeRulingEntry = {
  readonly [C in RefereeCode]: { readonly stage: RefereeCodeStages[C]; readonly code: C; readonly when: string; readonly fix: string };
}[RefereeCode];

function freezeRows<T extends readonly RefereeRulingEntry[]>(rows: T): T {
  for (const row of rows) Object.freeze(row);
  return Object.freeze(rows);
}

/**
 * Every `{ stage, code }` of the referee, in check order.
 *
 * @example
 * REFEREE_RULING_CATALOGUE.find((e) => e.code === 'quota_exhausted')?.fix;
 */
export const REFEREE_RULING_CATALOGUE = freezeRows([
  {
    stage: 'policy',
    code: 'mandate_invalid',
    when: 'The sealed spec.mandate does not pass the mandate checks (the session was opened by an engine without the referee). Nothing is admitted.',
    fix: 'Open a new session whose mandate passes `checkRefereeSpec`.',
  },
  {
    stage: 'policy',
    code: 'mandate_terminated',
    when: 'A frame before this turn carried a termination signed by the principal.',
    fix: 'Nothing more is admitted under this mandate; the principal must issue a new one (a new session).',
  },
  {
    stage: 'policy',
    code: 'mandate_not_started',
    when: 'The frame time is before mandate.starts_at: the mandate is not yet in force.',
    fix: 'Propose from mandate.starts_at on.',
  },
  {
    stage: 'policy',
    code: 'mandate_expired',
    when: 'The frame time is at or after mandate.expires_at.',
    fix: 'Nothing more is admitted under this mandate; the principal must issue a new one.',
  },
  {
    stage: 'policy',
    code: 'action_not_allowed',
    when: "The intent's action is not in mandate.actions.",
    fix: 'Propose only the actions the mandate lists.',
  },
  {
    stage: 'policy',
    code: 'market_not_allowed',
    when: 'An open, modify or close names a market not in mandate.markets.',
    fix: 'Trade only the markets the mandate lists.',
  },
  {
    stage: 'policy',
    code: 'target_not_allowed',
    when: 'A transfer names a target_address not in mandate.targets (when the mandate lists targets).',
    fix: 'Transfer only to a listed target.',
  },
  {
    stage: 'policy',
    code: 'cap_exceeded',
    when: 'size > caps.size, or leverage > caps.leverage (open, modify), or max_slippage > caps.slippage (open, modify, close); the message names the field.',
    fix: 'Propose within the per-intent caps.',
  },
  {
    stage: 'policy',
    code: 'quota_exhausted',
    when: 'used + locked + weight > quota.cap, where weight = size × quota.weights[action] (default 1).',
    fix: 'Wait until tickets are redeemed or released, or propose a smaller size.',
  },
  {
    stage: 'policy',
    code: 'tx_cap_reached',
    when: 'used_txs + locked_txs ≥ tx_cap: every transaction the mandate allows is used or reserved.',
    fix: 'Wait for releases; redeemed transactions never come back.',
  },
  {
    stage: 'verdict',
    code: 'judge_rate_limited',
    when: 'The judge was not asked: the wallet of the agent (its registered signer, under any name) already had judge_rate.max judge calls (default 30) in this window of judge_rate.window_ms frame time (default one hour) across every session of the store (`limit.scope` "wallet"; "agent", the window of a name, only in days recorded before wallet keys), or the store already had judge_rate.daily_max judge calls this UTC day across every agent (`limit.scope` "all"). `limit.held` names the call that took the last slot.',
    fix: 'Propose less often; sign a new intent (this one burned its nonce) once the window has passed.',
  },
  {
    stage: 'verdict',
    code: 'judge_unavailable',
    when: 'The judge gave no usable answer: timeout, HTTP error status, network error, response over 16 KiB, no signature, no judge configured, or the judge threw. `failure` names the class.',
    fix: 'Sign a new intent later (a failure counts as DENY and burns the nonce); fix the judge configuration.',
  },
  {
    stage: 'verdict',
    code: 'judge_evidence_invalid',
    when: 'Replay only: the recorded ruling holds no judged verdict, or one whose request hash is not that of the rebuilt request.',
    fix: 'The transcript was not produced by this referee from these inputs; investigate it.',
  },
  {
    stage: 'verdict',
    code: 'judge_untrusted_signer',
    when: 'The verdict signature over `<model>:<sha256(request)>:<sha256(response)>` does not recover, or recovers to an address not in mandate.judges; or the answer is labelled signed_by "operator" under judges_independent.',
    fix: 'Configure the judge with a key (or gateway) whose address the mandate lists; under judges_independent, a judge service holding its own key.',
  },
  {
    stage: 'verdict',
    code: 'judge_unparsable',
    when: 'The response is not a chat completion whose message content is exactly {reason ≤ 280, verdict ALLOW|DENY, action} or a complete assessment matrix.',
    fix: 'Use a model and prompt that answer in the required JSON; a malformed answer is always a DENY.',
  },
  {
    stage: 'verdict',
    code: 'judge_action_mismatch',
    when: 'The verdict parses but its `action` is not the canonical action line of this proposal.',
    fix: 'The judge must echo the action string exactly as sent.',
  },
  {
    stage: 'verdict',
    code: 'judge_denied',
    when: 'The judge answered DENY (or a matrix with any rule not PASS and solid); the message is its reason.',
    fix: 'Change the proposal and sign it with a new nonce; the denied intent burned its nonce.',
  },
  {
    stage: 'verdict',
    code: 'judge_quorum_not_met',
    when: "The mandate's panel was asked: fewer than panel.quorum judges gave a valid ALLOW signed by their own named key (a DENY, a bad or foreign signature, an unparsable answer, a failure or a time-out all count as DENY). `panel` records every answer.",
    fix: 'Change the proposal so the panel agrees, or fix the judges that failed; sign it with a new nonce.',
  },
  {
    stage: 'ticket',
    code: 'transition_malformed',
    when: 'data.referee or one of its items has the wrong shape (unknown member, missing field, bad `by`, more than 64 transitions).',
    fix: 'Write transitions as documented: redemptions [{ticket, intent, signature}], releases [{ticket, by, signature?}], terminate {signature}.',
  },
  {
    stage: 'ticket',
    code: 'ticket_unknown',
    when: 'The ticket id is not one this session issued.',
    fix: 'Use the id from the admitting ruling (`ticket.id`).',
  },
  {
    stage: 'ticket',
    code: 'bad_transition_signature',
    when: 'A redemption not signed by the executor, a release not signed by the principal/operator it names, or a termination not signed by the principal (EIP-191 over the transition text).',
    fix: 'Sign the exact transition text (signRedemption / signRelease / signTermination) with the right key.',
  },
  {
    stage: 'ticket',
    code: 'ticket_not_active',
    when: 'The ticket is already REDEEMED or RELEASED.',
    fix: 'Report each ticket once.',
  },
  {
    stage: 'ticket',
    code: 'redeem_after_termination',
    when: 'A redemption arrives in a frame after the mandate was terminated.',
    fix: 'Report executions before (or in the same frame as) the termination; otherwise release the ticket.',
  },
  {
    stage: 'ticket',
    code: 'ticket_expired',
    when: "A redemption at frame time ≥ the ticket's expires_at (min of the mandate expiry, the intent ttl and the ticket lifetime).",
    fix: 'Execute and report before the ticket expires; release expired tickets.',
  },
  {
    stage: 'ticket',
    code: 'intent_mismatch',
    when: "The redemption's intent is not byte-for-byte (canonical JSON) the ticket's anchored intent.",
    fix: 'Redeem with the exact Intent that was admitted.',
  },
  {
    stage: 'ticket',
    code: 'release_not_allowed',
    when: 'A release by "anyone" while the ticket is live and the mandate not terminated.',
    fix: 'Before expiry only the principal or the operator (signed) may release.',
  },
  {
    stage: 'ticket',
    code: 'already_terminated',
    when: 'A second termination.',
    fix: 'Terminate once.',
  },
] as const satisfies readonly RefereeRulingEntry[]);

true satisfies [Exclude<RefereeCode, (typeof REFEREE_RULING_CATALOGUE)[number]['code']>] extends [never] ? true : false;

/**
 * The closed vocabulary of tool-call rulings (stage `tool`, docs/PROTOCOL.md
 * §18): every code a refused MCP `tools/call` can carry, with when it is given
 * and what the caller does about it. The gateway answers a refused call with
 * the code and its `fix`, so the agent (or its operator) knows what to do.
 */

import type { JudgeRefusalCode } from './ask-judges.js';

/** A tool-call ruling code. */
export type ToolCode =
  | 'tool_call_malformed'
  | 'tool_call_not_canonical'
  | 'tool_call_id_conflict'
  | 'mandate_invalid'
  | 'mandate_not_started'
  | 'mandate_expired'
  | 'tool_not_offered'
  | 'tool_not_allowed'
  | 'server_not_allowed'
  | 'tool_argument_refused'
  | 'tool_rate_limited'
  | 'tool_budget_exceeded'
  | JudgeRefusalCode;

/** One catalogue entry. */
export interface ToolCodeEntry {
  readonly code: ToolCode;
  readonly when: string;
  readonly fix: string;
}

/** Every tool-call code, in the order the referee checks them. */
export const TOOL_CODE_CATALOGUE: readonly ToolCodeEntry[] = Object.freeze(
  [
    { code: 'tool_call_malformed', when: 'the turn is not a JSON-RPC 2.0 tools/call request with an integer or string id and params {name, arguments?}', fix: 'send a well-formed tools/call request' },
    { code: 'tool_call_not_canonical', when: 'the request has no canonical JSON form (a fractional number, a null, a lone surrogate, or an integer beyond 2^53)', fix: 'send fractional amounts as decimal strings such as "0.5" and omit null members' },
    { code: 'tool_call_id_conflict', when: 'an earlier call of the day used the same JSON-RPC id with other bytes', fix: 'use a fresh request id for a new call; a retry must repeat the exact request' },
    { code: 'mandate_invalid', when: 'the sealed mandate is invalid, so nothing is admitted', fix: 'have the principal sign a valid mandate and start a new day' },
    { code: 'mandate_not_started', when: 'the call comes before the mandate\'s starts_at (frame time)', fix: 'wait until the mandate is in force' },
    { code: 'mandate_expired', when: 'the call comes at or after the mandate\'s expires_at (frame time)', fix: 'ask the principal for a new mandate' },
    { code: 'tool_not_offered', when: 'the upstream did not offer this tool in the tools/list the day recorded', fix: 'call one of the tools the server lists (tools/list)' },
    { code: 'tool_not_allowed', when: 'the mandate\'s tools section does not allow this tool (or the mandate has no tools section)', fix: 'call an allowed tool, or ask the principal to add it to mandate.tools.allow' },
    { code: 'server_not_allowed', when: 'the mandate allows this tool only on another upstream server', fix: 'use the server the mandate names for this tool' },
    { code: 'tool_argument_refused', when: 'an argument breaks the mandate\'s rule for it (type, enum, minimum, maximum, max_length, required, additional)', fix: 'change the argument to one the mandate allows (the message names it and the rule)' },
    { code: 'tool_rate_limited', when: 'the mandate\'s call rate (for all tools or this one) is used up in the current window of frame time', fix: 'wait for the window to pass before calling again' },
    { code: 'tool_budget_exceeded', when: 'with this call, an argument of the tool would sum over the day\'s admitted calls (or a group budget\'s tools within its window) to more than the mandate\'s budget for it; a call whose outcome is unknown (timeout) counts', fix: 'ask for less (the message gives the budget and the total), or ask the principal for a larger budget in a new mandate' },
    { code: 'judge_untrusted_signer', when: 'the tool\'s judge answered with a signature that does not recover to a judge the mandate\'s tool rule trusts', fix: 'point the gateway at the judge whose key the tool rule names (--judge)' },
    { code: 'judge_unparsable', when: 'the tool\'s judge answered with something other than one verdict object', fix: 'fix the judge, or use tally judge serve' },
    { code: 'judge_action_mismatch', when: 'the tool\'s judge answered about another action line than this call\'s', fix: 'fix the judge: it must copy the action string exactly' },
    { code: 'judge_denied', when: 'the tool\'s judge gave a valid signed DENY for this call', fix: 'change the call to one the tool rule\'s rules allow (the message gives the judge\'s reason)' },
    { code: 'judge_unavailable', when: 'the tool\'s judge did not answer within the gateway\'s judge timeout, failed, or the gateway has no judge (fail closed: nothing goes upstream)', fix: 'start the judge (tally judge serve) and pass --judge to tally mcp proxy, then call again' },
    { code: 'judge_quorum_not_met', when: 'fewer of the tool rule\'s panel judges than its quorum gave a valid signed ALLOW', fix: 'see each judge\'s answer in the ruling; reach the missing judges or change the call' },
    { code: 'judge_evidence_invalid', when: 'on replay only: the verdict the day recorded is not a valid answer to this call\'s judge request', fix: 'the transcript was altered or recorded by another referee: do not trust this day\'s rulings' },
  ].map((e) => Object.freeze(e as ToolCodeEntry)),
);

/** The catalogue entry of each code. */
export const TOOL_CODE_FIX: Readonly<Record<ToolCode, string>> = Object.freeze(Object.fromEntries(TOOL_CODE_CATALOGUE.map((e) => [e.code, e.fix])) as Record<ToolCode, string>);

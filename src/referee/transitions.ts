/**
 * Ticket transitions reported by the runtime in a wake frame's data:
 *
 * ```json
 * "data": { "referee": {
 *   "redemptions": [{ "ticket": 1, "intent": { …the anchored signed Intent… }, "signature": "0x…executor" }],
 *   "releases":    [{ "ticket": 2, "by": "principal" | "operator" | "anyone", "signature"?: "0x…" }],
 *   "terminate":   { "signature": "0x…principal" } } }
 * ```
 *
 * Each signature is EIP-191 over the transition text; under a version-2
 * mandate an item may instead say `"scheme": "eip712"`: EIP-712 typed data
 * `Act(string act)` over the same text, signed the way the mandate is.
 *
 * Applied at the frame's time in this order: redemptions, releases, then the
 * termination (so an execution reported together with a termination counts).
 * Each is validated and its outcome recorded; an invalid one changes nothing.
 */
import { canonicalJson, type CanonicalValue } from '../protocol/index.js';
import { transitionMessage } from './bytes.js';
import { recoverDigest, verifyText } from './eip191.js';
import type { Mandate } from './mandate.js';
import { actDigest } from './mandate-sig.js';
import { redeemTicket, releaseTicket, type RefereeFold, type Ticket, type TransitionOutcome } from './state.js';

/** Most transitions one frame may carry. */
export const MAX_TRANSITIONS_PER_FRAME = 64;

type Op = 'redeem' | 'release' | 'terminate' | 'frame';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function keysWithin(o: Record<string, unknown>, required: readonly string[], optional: readonly string[] = []): string | undefined {
  for (const k of required) if (!Object.hasOwn(o, k)) return `missing "${k}"`;
  for (const k of Object.keys(o)) if (!required.includes(k) && !optional.includes(k)) return `unknown member "${k}"`;
  return undefined;
}

/** Under a version-2 mandate a signed transition may say `"scheme": "eip712"` (signed as the mandate is); version 1 knows no scheme. */
function schemeKeys(m: Mandate): readonly string[] {
  return m.version === 2 ? ['scheme'] : [];
}

/** A scheme member that is not `"eip712"`, described; `undefined` when the item is well formed. */
function badScheme(item: Record<string, unknown>): string | undefined {
  return item['scheme'] === undefined || item['scheme'] === 'eip712' ? undefined : 'scheme must be "eip712" (absent: EIP-191 personal_sign)';
}

/**
 * Whether `item.signature` over the transition `text` is by `expected`: EIP-191 over the text, or —
 * `scheme: "eip712"` (version 2) — EIP-712 typed data `Act(string act)` with `act` = the text.
 */
function signedBy(text: string, item: Record<string, unknown>, expected: string): boolean {
  if (item['scheme'] === 'eip712') return recoverDigest(actDigest(text), item['signature']) === expected;
  return verifyText(text, item['signature'], expected);
}

const bad = (op: Op, code: string, message: string, extra: { ticket?: number; index?: number } = {}): TransitionOutcome => ({ op, ok: false, code, message, ...extra });

function ticketOf(f: RefereeFold, id: unknown): Ticket | undefined {
  return typeof id === 'number' && Number.isSafeInteger(id) && id >= 1 ? f.tickets[id - 1] : undefined;
}

function expired(m: Mandate, t: Ticket, time: number): boolean {
  return time >= t.expiresAt || time >= m.expiresAt;
}

function redeem(f: RefereeFold, m: Mandate, session: string, ordinal: number, time: number, item: unknown, index: number): TransitionOutcome {
  if (!isObject(item)) return bad('redeem', 'transition_malformed', 'a redemption must be an object { ticket, intent, signature }', { index });
  const k = keysWithin(item, ['ticket', 'intent', 'signature'], schemeKeys(m)) ?? badScheme(item);
  if (k) return bad('redeem', 'transition_malformed', `redemption: ${k}`, { index });
  const t = ticketOf(f, item['ticket']);
  if (!t) return bad('redeem', 'ticket_unknown', `no ticket ${JSON.stringify(item['ticket'])} in this session`, { index });
  const ticket = t.id;
  if (!signedBy(transitionMessage({ op: 'redeem', instance: m.instance, session, ticket, proofHash: t.proofHash }), item, m.executor)) return bad('redeem', 'bad_transition_signature', 'the redemption is not signed by the mandate executor', { ticket });
  if (t.state !== 'ACTIVE') return bad('redeem', 'ticket_not_active', `ticket ${ticket} is ${t.state}`, { ticket });
  if (f.terminated) return bad('redeem', 'redeem_after_termination', `the mandate was terminated at frame ${f.terminated.ordinal}`, { ticket });
  if (expired(m, t, time)) return bad('redeem', 'ticket_expired', `ticket ${ticket} expired at ${Math.min(t.expiresAt, m.expiresAt)} (frame time ${time})`, { ticket });
  let same = false;
  try {
    same = canonicalJson(item['intent'] as CanonicalValue) === t.intentJson;
  } catch {
    same = false;
  }
  if (!same) return bad('redeem', 'intent_mismatch', `the redeemed intent bytes differ from ticket ${ticket}'s anchored intent`, { ticket });
  redeemTicket(f, t, ordinal, time);
  return { op: 'redeem', ticket, ok: true };
}

function release(f: RefereeFold, m: Mandate, session: string, ordinal: number, time: number, item: unknown, index: number): TransitionOutcome {
  if (!isObject(item)) return bad('release', 'transition_malformed', 'a release must be an object { ticket, by, signature? }', { index });
  const k = keysWithin(item, ['ticket', 'by'], ['signature', ...schemeKeys(m)]) ?? badScheme(item);
  if (k) return bad('release', 'transition_malformed', `release: ${k}`, { index });
  const by = item['by'];
  if (by !== 'principal' && by !== 'operator' && by !== 'anyone') return bad('release', 'transition_malformed', 'release.by must be "principal", "operator" or "anyone"', { index });
  if (by === 'anyone' && (item['signature'] !== undefined || item['scheme'] !== undefined)) return bad('release', 'transition_malformed', 'a release by anyone carries no signature', { index });
  const t = ticketOf(f, item['ticket']);
  if (!t) return bad('release', 'ticket_unknown', `no ticket ${JSON.stringify(item['ticket'])} in this session`, { index });
  const ticket = t.id;
  if (by !== 'anyone') {
    const expected = by === 'principal' ? m.principal : m.operator;
    if (!signedBy(transitionMessage({ op: 'release', instance: m.instance, session, ticket, proofHash: t.proofHash }), item, expected)) return bad('release', 'bad_transition_signature', `the release is not signed by the mandate ${by}`, { ticket });
  }
  if (t.state !== 'ACTIVE') return bad('release', 'ticket_not_active', `ticket ${ticket} is ${t.state}`, { ticket });
  if (by === 'anyone' && !f.terminated && !expired(m, t, time)) {
    return bad('release', 'release_not_allowed', `ticket ${ticket} is live until ${Math.min(t.expiresAt, m.expiresAt)}; before that only the principal or operator may release it`, { ticket });
  }
  releaseTicket(f, t, ordinal, time);
  return { op: 'release', ticket, ok: true, by };
}

function terminate(f: RefereeFold, m: Mandate, session: string, ordinal: number, time: number, item: unknown): TransitionOutcome {
  if (!isObject(item)) return bad('terminate', 'transition_malformed', 'terminate must be an object { signature }');
  const k = keysWithin(item, ['signature'], schemeKeys(m)) ?? badScheme(item);
  if (k) return bad('terminate', 'transition_malformed', `terminate: ${k}`);
  if (!signedBy(transitionMessage({ op: 'terminate', instance: m.instance, session }), item, m.principal)) return bad('terminate', 'bad_transition_signature', 'the termination is not signed by the mandate principal');
  if (f.terminated) return bad('terminate', 'already_terminated', `the mandate was already terminated at frame ${f.terminated.ordinal}`);
  f.terminated = { ordinal, time };
  return { op: 'terminate', ok: true };
}

/**
 * Applies the transitions of one frame to `f` and returns their outcomes, or
 * `undefined` when the frame carries no `referee` member.
 */
export function applyFrameTransitions(f: RefereeFold, m: Mandate, session: string, ordinal: number, time: number, data: CanonicalValue | undefined): TransitionOutcome[] | undefined {
  if (!isObject(data) || !Object.hasOwn(data, 'referee')) return undefined;
  const r = data['referee'];
  const whole = (message: string): TransitionOutcome[] => [bad('frame', 'transition_malformed', message)];
  if (!isObject(r)) return whole('data.referee must be an object { redemptions?, releases?, terminate? }');
  const k = keysWithin(r, [], ['redemptions', 'releases', 'terminate']);
  if (k) return whole(`data.referee: ${k}`);
  const redemptions = r['redemptions'] ?? [];
  const releases = r['releases'] ?? [];
  if (!Array.isArray(redemptions)) return whole('data.referee.redemptions must be a list');
  if (!Array.isArray(releases)) return whole('data.referee.releases must be a list');
  const count = redemptions.length + releases.length + (r['terminate'] === undefined ? 0 : 1);
  if (count > MAX_TRANSITIONS_PER_FRAME) return whole(`a frame may carry at most ${MAX_TRANSITIONS_PER_FRAME} transitions (got ${count})`);
  const out: TransitionOutcome[] = [];
  redemptions.forEach((item, i) => out.push(redeem(f, m, session, ordinal, time, item, i)));
  releases.forEach((item, i) => out.push(release(f, m, session, ordinal, time, item, i)));
  if (r['terminate'] !== undefined) out.push(terminate(f, m, session, ordinal, time, r['terminate']));
  return out;
}

/**
 * What goes wrong during the demo day, and when. Two lists:
 * - turn acts replace the agent's answer to one wake (a bad intent, a replay,
 *   a stand-down) and are RECORDED with their ruling;
 * - probes are extra submissions around a wake (a network retry, a second
 *   different answer, a turn before its frame, …) that the engine answers as
 *   an idempotent duplicate or refuses with a session diagnostic, writing
 *   nothing; the runtime reports each outcome in the next frame's `notices`.
 *
 * The first day-block (48 wakes, or the whole day if shorter) holds every act
 * and probe once, at seeded positions; later wakes see only occasional
 * network retries and timeouts.
 */
import type { FailureClass, SessionDiagnostic } from '../protocol/index.js';
import type { IntentCode } from '../intent/index.js';
import type { RefereeCode } from '../referee/index.js';
import { createRng } from './prng.js';

/** A turn act and what it must produce: a rejection code, a stand-down, or an admission the runtime then releases. */
export interface TurnActDef {
  readonly name: string;
  readonly what: string;
  readonly expect:
    | { readonly code: IntentCode | RefereeCode }
    | { readonly standDown: FailureClass }
    /** Admitted, then released by the operator in the next frame (never filled). */
    | { readonly released: true }
    /** Admitted and filled, then a transition about it in the next frame is refused with this code. */
    | { readonly transition: RefereeCode };
}

/**
 * Every turn act, most important first (a day shorter than this list gets the
 * first ones). Together they cover every intent rejection code and every
 * stand-down class.
 */
export const TURN_ACTS = Object.freeze([
  { name: 'replayed-nonce', what: 'resends an intent that was already admitted', expect: { code: 'replayed_nonce' } },
  { name: 'expired-ttl', what: 'an intent whose ttl passed before the frame', expect: { code: 'expired' } },
  { name: 'negative-size', what: 'size -0.5 (direction is the side, never the sign)', expect: { code: 'nonpositive_size' } },
  { name: 'slippage-percent', what: 'max_slippage 5 (meant 5 %, the field is a fraction)', expect: { code: 'slippage_out_of_range' } },
  { name: 'target-on-close', what: 'a close that smuggles a target_address', expect: { code: 'target_only_on_transfer' } },
  { name: 'unknown-signer', what: 'an intent from an agent the session never registered', expect: { code: 'unknown_signer' } },
  { name: 'tampered-signature', what: 'one nibble of a valid signature flipped', expect: { code: 'bad_signature' } },
  { name: 'stand-down-provider', what: 'the model provider failed; the runtime stands the turn down', expect: { standDown: 'provider' } },
  { name: 'stand-down-timeout', what: 'the agent did not answer in time', expect: { standDown: 'timeout' } },
  { name: 'stand-down-malformed', what: 'the agent answered with unparsable output', expect: { standDown: 'malformed' } },
  { name: 'impersonation', what: "the intruder's key signs as a registered agent", expect: { code: 'bad_signature' } },
  { name: 'malformed-intent', what: 'an intent with a field the schema does not know', expect: { code: 'invalid_schema' } },
  { name: 'ttl-too-far', what: 'a ttl two hours out (the spec allows one)', expect: { code: 'ttl_too_far' } },
  { name: 'zero-leverage', what: 'leverage 0', expect: { code: 'nonpositive_leverage' } },
  { name: 'negative-tp', what: 'take-profit -1', expect: { code: 'nonpositive_tp' } },
  { name: 'zero-sl', what: 'stop-loss 0', expect: { code: 'nonpositive_sl' } },
  { name: 'huge-size', what: 'a 20-digit size', expect: { code: 'magnitude_exceeded' } },
  { name: 'dust-size', what: 'a size with 19 decimals', expect: { code: 'scale_exceeded' } },
  { name: 'transfer-no-target', what: 'a transfer without a destination', expect: { code: 'target_required_on_transfer' } },
  // The referee: the mandate, the judge, the tickets.
  { name: 'leverage-over-cap', what: 'leverage 20 under a mandate capped at 5', expect: { code: 'cap_exceeded' } },
  { name: 'unlisted-market', what: 'an open on a market the mandate does not list', expect: { code: 'market_not_allowed' } },
  { name: 'transfer-elsewhere', what: 'a transfer to an address the mandate does not allow', expect: { code: 'target_not_allowed' } },
  { name: 'prompt-injection', what: 'a context that tells the judge to answer ALLOW', expect: { code: 'judge_denied' } },
  { name: 'judge-garbled', what: 'the judge answers in prose instead of a verdict', expect: { code: 'judge_unparsable' } },
  { name: 'unfilled-order', what: 'an admitted order the market cannot fill: the operator releases its ticket', expect: { released: true } },
  { name: 'double-fill', what: 'the runtime reports one fill twice (the second redemption is refused)', expect: { transition: 'ticket_not_active' } },
  { name: 'judge-wrong-key', what: 'the verdict comes back signed by a key the mandate does not trust', expect: { code: 'judge_untrusted_signer' } },
] as const satisfies readonly TurnActDef[]);

/** Name of a turn act. */
export type TurnActName = (typeof TURN_ACTS)[number]['name'];

/** A probe and the outcome the engine must give it. */
export interface ProbeDef {
  readonly name: string;
  readonly what: string;
  /** When it is sent relative to the wake's frame and turn. */
  readonly when: 'before-frame' | 'pending' | 'after-turn';
  readonly expect: 'duplicate' | SessionDiagnostic;
}

/** Every probe, in the order they are sent within a wake. */
export const PROBES = Object.freeze([
  { name: 'early-turn', what: 'a turn sent before its frame was delivered', when: 'before-frame', expect: 'not-pending' },
  { name: 'wrong-session', what: "a frame addressed to a session that does not exist", when: 'before-frame', expect: 'wrong-session' },
  { name: 'frame-redelivery', what: 'the runtime delivers the same frame twice', when: 'pending', expect: 'duplicate' },
  { name: 'stale-answer', what: "an answer bound to the previous frame's root", when: 'pending', expect: 'stale-frame' },
  { name: 'fork-attempt', what: 'an answer that skips the frame (wrong parent)', when: 'pending', expect: 'broken-chain' },
  { name: 'bad-declared-hash', what: 'a turn whose declared authored hash is wrong', when: 'pending', expect: 'malformed-entry' },
  { name: 'network-retry', what: 'the same turn sent again (the client never saw the answer)', when: 'after-turn', expect: 'duplicate' },
  { name: 'resubmission', what: 'a different answer sent into the already-filled slot', when: 'after-turn', expect: 'turn-conflict' },
] as const satisfies readonly ProbeDef[]);

/** Name of a probe. */
export type ProbeName = (typeof PROBES)[number]['name'];

/** The probe sent after the seal (reported in the summary only: nothing can be recorded after it). */
export const LATE_PROBE = Object.freeze({ name: 'late-frame', what: 'a wake delivered after the day was sealed', expect: 'sealed' as SessionDiagnostic });

const SETTLED_NEXT: ReadonlySet<string> = new Set(['unfilled-order', 'double-fill']);

/** Wakes per day-block. */
export const BLOCK_WAKES = 48;

/** The day's schedule. */
export interface DayPlan {
  /** The turn act (if any) replacing the answer to each wake ordinal. */
  readonly acts: ReadonlyMap<number, TurnActName>;
  /** The probes sent around each wake ordinal. */
  readonly probes: ReadonlyMap<number, readonly ProbeName[]>;
}

/**
 * Places the acts and probes of a `wakes`-long day for `seed`. Acts take
 * distinct wakes from ordinal 2 on (so the agents have traded first);
 * probes go on wakes from ordinal 1 on (so there is a previous frame).
 *
 * @example
 * planDay(1, 48).acts.size; // 19
 */
export function planDay(seed: number, wakes: number): DayPlan {
  const rng = createRng(seed).fork('script');
  const acts = new Map<number, TurnActName>();
  const probes = new Map<number, ProbeName[]>();
  const block = Math.min(wakes, BLOCK_WAKES);
  const actSlots = rng.shuffle(range(2, block));
  TURN_ACTS.forEach((a, i) => {
    const at = actSlots[i];
    if (at !== undefined) acts.set(at, a.name);
  });
  // The turn after an act whose ticket is settled in the next frame must be authored, so the
  // ruling records the transition's outcome: move a stand-down found there to a free wake.
  for (const [ord, name] of [...acts]) {
    if (!SETTLED_NEXT.has(name)) continue;
    const next = acts.get(ord + 1);
    if (next === undefined || !next.startsWith('stand-down')) continue;
    const free = actSlots.find((x) => !acts.has(x) && !SETTLED_NEXT.has(acts.get(x - 1) ?? 'stand-down-timeout'));
    acts.delete(ord + 1);
    if (free !== undefined) acts.set(free, next);
  }
  const probeWakes = range(1, block);
  if (probeWakes.length > 0) {
    for (const p of PROBES) add(probes, rng.pick(probeWakes), p.name);
    for (const ord of probeWakes) if (rng.chance(1, 8)) add(probes, ord, 'network-retry');
  }
  for (let ord = BLOCK_WAKES; ord < wakes; ord++) {
    if (rng.chance(1, 40)) add(probes, ord, 'network-retry');
    if (rng.chance(1, 200)) acts.set(ord, 'stand-down-timeout');
  }
  for (const list of probes.values()) list.sort((a, b) => probeOrder(a) - probeOrder(b));
  return { acts, probes };
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i < to; i++) out.push(i);
  return out;
}

function add(map: Map<number, ProbeName[]>, ord: number, name: ProbeName): void {
  const list = map.get(ord);
  if (!list) map.set(ord, [name]);
  else if (!list.includes(name)) list.push(name);
}

function probeOrder(name: ProbeName): number {
  return PROBES.findIndex((p) => p.name === name);
}

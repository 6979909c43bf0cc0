/**
 * Judge rate limits across sessions (seed 002: "per wallet, the API judges at
 * most 30 proposals an hour, and a hosted API can also cap verdicts per day
 * across all wallets").
 *
 * A per-session fold cannot see other sessions, so the limits are kept where
 * nonces are: in the store's reservation table, reserved atomically with the
 * turn. A window of frame time holds `max` numbered **slots**; every judge
 * call reserves the lowest free one, so the reserved slots of a window are
 * always a prefix `0 … c-1` (slots are never released, and a reservation that
 * loses a race makes the engine rule again on fresh state). Hence the window
 * is full exactly when slot `max - 1` is reserved — one lookup — and that
 * slot's owner is the store fact a `limited` ruling records, just as a
 * `replayed_nonce` ruling records its nonce's first owner. Replay re-derives
 * this session's own slots and takes the recorded owner, when its store does
 * not know the slot, as an external fact (trusted, listed).
 *
 * Keys contain a space, which no `agent_id` can (printable ASCII without
 * spaces), so they never meet an intent nonce. The per-wallet window is keyed
 * by the agent's registered signer (seed 002: "per wallet"), never its name,
 * so another wallet under the same name in another session has its own
 * window and one wallet under two names has one:
 *
 * ```
 * per wallet agent_id = "judge-wallet <window_ms> <signer>"  nonce = "<floor(t / window_ms)>/<slot>"
 * per day    agent_id = "judge-day *"                          nonce = "<floor(t / 86400000)>/<slot>"
 * ```
 *
 * Days recorded before wallet keys hold `limited` rulings with `scope:
 * "agent"` (the window of a name, `judge-rate <window_ms> <agent_id>`):
 * replay re-derives those with the name's window ({@link agentWindow}), and
 * only those; every new judge call counts in its wallet's window.
 */
import type { NonceClaim, NonceOwner } from '../store/types.js';

/** Length of the daily window (frame time, UTC days). */
export const DAY_MS = 86_400_000;

/** Scope of a window: `wallet` (one signer across every session and name), `all` (the daily cap), `agent` (a name: only in days recorded before wallet keys). */
export type RateScope = 'wallet' | 'agent' | 'all';

/** One window the judge call must fit in. */
export interface RateWindow {
  readonly scope: RateScope;
  /** Reservation key (the store's `agent_id` column). */
  readonly key: string;
  /** Window index: `floor(frameTime / windowMs)`. */
  readonly index: number;
  readonly windowMs: number;
  readonly max: number;
}

/** The per-wallet window of frame time `t`: keyed by the agent's registered signer (lowercased). */
export function walletWindow(signer: string, t: number, windowMs: number, max: number): RateWindow {
  return { scope: 'wallet', key: `judge-wallet ${windowMs} ${signer.toLowerCase()}`, index: Math.floor(t / windowMs), windowMs, max };
}

/** The per-name window of frame time `t`, as days recorded before wallet keys counted (replay of their `limited` rulings only). */
export function agentWindow(agentId: string, t: number, windowMs: number, max: number): RateWindow {
  return { scope: 'agent', key: `judge-rate ${windowMs} ${agentId}`, index: Math.floor(t / windowMs), windowMs, max };
}

/** The daily window (all agents) of frame time `t`. */
export function dayWindow(t: number, max: number): RateWindow {
  return { scope: 'all', key: 'judge-day *', index: Math.floor(t / DAY_MS), windowMs: DAY_MS, max };
}

/** The reservation token of slot `slot` in window `w`. */
export function slotToken(w: RateWindow, slot: number): string {
  return `${w.index}/${slot}`;
}

/** Who owns a reservation (the engine's `nonceOwner` seam). */
export type OwnerLookup = (key: string, token: string) => Promise<NonceOwner | undefined>;

/** Outcome of {@link takeSlot}. */
export type SlotResult = { readonly full: false; readonly claim: Omit<NonceClaim, 'intentHash'> } | { readonly full: true; readonly held: NonceOwner };

/**
 * Finds the slot a judge call in window `w` reserves: full when slot
 * `max - 1` is held (its owner is returned), else the lowest free slot
 * (binary search over the reserved prefix).
 *
 * @example
 * const r = await takeSlot(walletWindow('0xf39f…', t, 3_600_000, 30), (k, n) => store.nonceOwner(k, n));
 * if (r.full) r.held.sessionId; // who took the last slot
 */
async function takeSlot(w: RateWindow, owner: OwnerLookup): Promise<SlotResult> {
  const last = await owner(w.key, slotToken(w, w.max - 1));
  if (last) return { full: true, held: last };
  let lo = 0;
  let hi = w.max - 1; // slot hi is free; find the lowest free in [lo, hi]
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (await owner(w.key, slotToken(w, mid))) lo = mid + 1;
    else hi = mid;
  }
  return { full: false, claim: { agentId: w.key, nonce: slotToken(w, lo) } };
}

/** The `limit` member of a `limited` verdict ruling: the full window and the owner of its last slot. */
export interface RateLimitRuling {
  readonly scope: RateScope;
  /** Frame time at which the window starts (`index × window_ms`). */
  readonly window_start: number;
  readonly window_ms: number;
  readonly max: number;
  /** Who reserved slot `max - 1` (any session of the store). */
  readonly held: { readonly intent_hash: string; readonly session: string; readonly index: number };
}

/** Limits of a mandate's `judge_rate`. */
export interface JudgeRateLimits {
  readonly judgeRate: { readonly max: number; readonly windowMs: number; readonly dailyMax: number | undefined };
}

/** A `limited` verdict ruling. */
export interface LimitedVerdict {
  readonly stage: 'verdict';
  readonly source: 'limited';
  readonly admitted: false;
  readonly code: 'judge_rate_limited';
  readonly message: string;
  readonly limit: RateLimitRuling;
}

/** Who a judge call is for: the intent's `agent_id` and its registered signer. */
export interface RateSubject {
  readonly agentId: string;
  readonly signer: string;
}

/** The windows a judge call at frame time `t` must fit in, in check order (`legacy`: the name's window, for old days' `scope: "agent"` rulings). */
function rateWindows(m: JudgeRateLimits, who: RateSubject, t: number, legacy: boolean): RateWindow[] {
  const { max, windowMs } = m.judgeRate;
  const ws = [legacy ? agentWindow(who.agentId, t, windowMs, max) : walletWindow(who.signer, t, windowMs, max)];
  if (m.judgeRate.dailyMax !== undefined) ws.push(dayWindow(t, m.judgeRate.dailyMax));
  return ws;
}

function limitMessage(w: RateWindow, who: RateSubject, start: number): string {
  if (w.scope === 'wallet') return `wallet ${who.signer.toLowerCase()} (agent ${who.agentId}) already had ${w.max} judge calls in the ${w.windowMs} ms window from ${start}, across every session and name (limit ${w.max})`;
  if (w.scope === 'agent') return `agent ${who.agentId} already had ${w.max} judge calls in the ${w.windowMs} ms window from ${start}, across every session (limit ${w.max})`;
  return `the store already had ${w.max} judge calls on the UTC day from ${start}, across every agent (daily_max ${w.max})`;
}

/**
 * Checks every window of a judge call: the first full one is a `limited`
 * ruling (the judge is not asked); otherwise the slots to reserve.
 * `legacy` (replay of a recorded `scope: "agent"` ruling only) checks the
 * name's window instead of the wallet's.
 */
export async function rateSlots(
  m: JudgeRateLimits,
  who: RateSubject,
  t: number,
  owner: OwnerLookup,
  legacy = false,
): Promise<{ readonly ok: true; readonly slots: Array<Omit<NonceClaim, 'intentHash'>> } | { readonly ok: false; readonly limited: LimitedVerdict }> {
  const slots: Array<Omit<NonceClaim, 'intentHash'>> = [];
  for (const w of rateWindows(m, who, t, legacy)) {
    const r = await takeSlot(w, owner);
    if (r.full) {
      const start = w.index * w.windowMs;
      return {
        ok: false,
        limited: {
          stage: 'verdict',
          source: 'limited',
          admitted: false,
          code: 'judge_rate_limited',
          message: limitMessage(w, who, start),
          limit: { scope: w.scope, window_start: start, window_ms: w.windowMs, max: w.max, held: { intent_hash: r.held.intentHash, session: r.held.sessionId, index: r.held.index } },
        },
      };
    }
    slots.push(r.claim);
  }
  return { ok: true, slots };
}

/** Whether a recorded ruling is a `limited` verdict of a name's window (a day recorded before wallet keys). */
export function isLegacyLimited(recorded: Record<string, unknown> | undefined): boolean {
  const v = recorded?.['verdict'];
  return isObject(v) && v['source'] === 'limited' && isObject(v['limit']) && v['limit']['scope'] === 'agent';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const safeInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);

/**
 * Replay: the store fact a recorded `limited` ruling relied on — the owner of
 * the window's last slot — as a reservation replay may answer from (when its
 * own store does not know the slot) and lists as an external fact.
 */
export function recordedRateFacts(recorded: Record<string, unknown>): Array<{ kind: 'judge-slot'; agentId: string; nonce: string; owner: NonceOwner }> {
  const v = recorded['verdict'];
  const ir = recorded['intent'];
  if (!isObject(v) || v['source'] !== 'limited' || !isObject(v['limit']) || !isObject(ir) || typeof ir['agent_id'] !== 'string') return [];
  const signer = ir['signer'];
  const l = v['limit'];
  const held = l['held'];
  const { window_start: start, window_ms: ms, max } = l;
  if (!safeInt(start) || !safeInt(ms) || !safeInt(max) || ms < 1 || max < 1 || start % ms !== 0 || !isObject(held)) return [];
  if (typeof held['intent_hash'] !== 'string' || typeof held['session'] !== 'string' || !safeInt(held['index'])) return [];
  const w =
    l['scope'] === 'wallet' && typeof signer === 'string'
      ? walletWindow(signer, start, ms, max)
      : l['scope'] === 'agent'
        ? agentWindow(ir['agent_id'], start, ms, max)
        : l['scope'] === 'all' && ms === DAY_MS
          ? dayWindow(start, max)
          : undefined;
  if (!w) return [];
  return [{ kind: 'judge-slot', agentId: w.key, nonce: slotToken(w, max - 1), owner: { intentHash: held['intent_hash'], sessionId: held['session'], index: held['index'] } }];
}

/**
 * What `describe` shows of the referee: quota used / locked / free, the
 * tickets and the transitions so far, derived from the session's transcript.
 */
import type { CanonicalObject } from '../protocol/index.js';
import type { TranscriptStore } from '../store/types.js';
import { RefereeHistory } from './history.js';
import { quotaOf, type QuotaFigures } from './state.js';

/** One ticket as shown by `describe`. */
export interface TicketView extends CanonicalObject {
  readonly id: number;
  readonly ordinal: number;
  readonly agent_id: string;
  readonly action: string;
  readonly intent_hash: string;
  readonly weight: string;
  readonly state: 'ACTIVE' | 'REDEEMED' | 'RELEASED';
  readonly expires_at: number;
  /** ACTIVE but past its expiry (or the mandate's end, or terminated): anyone may release it. */
  readonly releasable_by_anyone: boolean;
  readonly proof_hash: string;
  readonly settled?: { readonly op: 'redeem' | 'release'; readonly ordinal: number; readonly time: number };
}

/** The referee part of `describe` (canonical JSON, ready for `extensions.referee`). */
export interface RefereeView extends CanonicalObject {
  readonly instance: string;
  readonly expires_at: number;
  readonly expired: boolean;
  readonly terminated?: { readonly ordinal: number; readonly time: number };
  /** Entries folded and the time of the last frame. */
  readonly as_of: { readonly size: number; readonly time?: number };
  readonly quota: QuotaFigures;
  readonly tickets: readonly TicketView[];
  readonly verdicts: { readonly judged: number; readonly allowed: number };
  readonly transitions: ReadonlyArray<CanonicalObject>;
}

/** Result of {@link refereeState}. */
export type RefereeStateResult = { readonly ok: true; readonly referee: RefereeView } | { readonly ok: false; readonly reason: 'no-session' | 'no-mandate'; readonly message: string };

const histories = new WeakMap<object, RefereeHistory>();

/**
 * The referee state of a session at its head, for `describe`'s `extensions`.
 *
 * @example
 * const r = await refereeState(engine, sessionId);
 * if (r.ok) r.referee.quota; // { cap: '10', used: '2', locked: '1', free: '7', tx_cap: 20, used_txs: 2, locked_txs: 1 }
 */
export async function refereeState(engine: { readonly store: TranscriptStore }, sessionId: string): Promise<RefereeStateResult> {
  const store = engine.store;
  const head = await store.loadHead(sessionId);
  if (!head) return { ok: false, reason: 'no-session', message: `no session ${sessionId}` };
  let history = histories.get(store);
  if (!history) {
    history = new RefereeHistory(store);
    histories.set(store, history);
  }
  const view = await history.fold(sessionId, head.size);
  if (!view) return { ok: false, reason: 'no-mandate', message: 'the session spec seals no (valid) mandate' };
  const { mandate: m, fold: f } = view;
  const time = view.time;
  const over = (expiresAt: number) => f.terminated !== undefined || (time !== undefined && (time >= expiresAt || time >= m.expiresAt));
  const tickets: TicketView[] = f.tickets.map((t) => ({
    id: t.id,
    ordinal: t.ordinal,
    agent_id: t.agentId,
    action: t.action,
    intent_hash: t.intentHash,
    weight: t.weight,
    state: t.state,
    expires_at: t.expiresAt,
    releasable_by_anyone: t.state === 'ACTIVE' && over(t.expiresAt),
    proof_hash: t.proofHash,
    ...(t.settled ? { settled: t.settled } : {}),
  }));
  let allowed = 0;
  for (const v of f.verdicts.values()) if (v.admitted) allowed++;
  const referee: RefereeView = {
    instance: m.instance,
    expires_at: m.expiresAt,
    expired: time !== undefined && time >= m.expiresAt,
    ...(f.terminated ? { terminated: f.terminated } : {}),
    as_of: time === undefined ? { size: view.size } : { size: view.size, time },
    quota: quotaOf(m, f),
    tickets,
    verdicts: { judged: f.verdicts.size, allowed },
    transitions: f.log.map((l) => ({ ordinal: l.ordinal, time: l.time, ...l.outcome }) as CanonicalObject),
  };
  return { ok: true, referee };
}

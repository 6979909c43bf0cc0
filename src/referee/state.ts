/**
 * The referee's picture of one session — quota, tickets, termination and the
 * verdict index — as a deterministic fold over the
 * transcript: frames bring ticket transitions, turns bring admissions and
 * verdicts. Nothing here reads a clock or calls a judge, so replaying the
 * same entries always yields the same state.
 */
import { intentSchema, type Intent, type IntentAction } from '../intent/schema.js';
import { intentEndMs, normalizeTtl } from '../intent/ttl.js';
import { canonicalJson, type CanonicalObject } from '../protocol/index.js';
import { ticketAnchor, ticketProofHash } from './bytes.js';
import { decAdd, decCmp, decMul, decSub } from './decimal.js';
import type { Mandate } from './mandate.js';

/** Life of a ticket: ACTIVE until redeemed (locked → used) or released (locked → free). */
export type TicketState = 'ACTIVE' | 'REDEEMED' | 'RELEASED';

/** A quota reservation for one admitted intent. */
export interface Ticket {
  /** 1, 2, 3, … in admission order within the session. */
  readonly id: number;
  /** Ordinal of the turn that admitted it. */
  readonly ordinal: number;
  readonly agentId: string;
  readonly action: IntentAction;
  readonly intentHash: string;
  readonly weight: string;
  /** Frame time from which it can no longer be redeemed (and anyone may release it). */
  readonly expiresAt: number;
  readonly proofHash: string;
  /** Canonical JSON of the anchored (normalized, signed) Intent. */
  readonly intentJson: string;
  state: TicketState;
  /** Where it left ACTIVE. */
  settled?: { readonly op: 'redeem' | 'release'; readonly ordinal: number; readonly time: number };
}

/** One recorded outcome of a frame-borne transition. */
export type TransitionOutcome =
  | { readonly op: 'redeem' | 'release' | 'terminate' | 'frame'; readonly ticket?: number; readonly ok: true; readonly by?: string }
  | { readonly op: 'redeem' | 'release' | 'terminate' | 'frame'; readonly ticket?: number; readonly ok: false; readonly code: string; readonly message: string; readonly index?: number };

/** A verdict kept for "judged once". */
export interface StoredVerdict {
  readonly ordinal: number;
  readonly admitted: boolean;
  readonly code?: string;
  readonly message: string;
}

/** The folded state (mutable inside this layer only). */
export interface RefereeFold {
  used: string;
  locked: string;
  usedTxs: number;
  lockedTxs: number;
  readonly tickets: Ticket[];
  terminated: { readonly ordinal: number; readonly time: number } | undefined;
  /** intent_hash → the verdict first given on it. */
  readonly verdicts: Map<string, StoredVerdict>;
  /** The last frame folded and the outcomes of its transitions (undefined when it carried none). */
  lastFrame: { readonly ordinal: number; readonly time: number; readonly outcomes: readonly TransitionOutcome[] | undefined } | undefined;
  /** Every transition outcome so far, with the frame it came in. */
  readonly log: Array<{ readonly ordinal: number; readonly time: number; readonly outcome: TransitionOutcome }>;
}

/** A fresh fold (nothing used, locked or judged). */
export function emptyFold(): RefereeFold {
  return { used: '0', locked: '0', usedTxs: 0, lockedTxs: 0, tickets: [], terminated: undefined, verdicts: new Map(), lastFrame: undefined, log: [] };
}

/** Quota figures as recorded in rulings and shown by `describe`. */
export interface QuotaFigures extends CanonicalObject {
  readonly cap: string;
  readonly used: string;
  readonly locked: string;
  readonly free: string;
  readonly tx_cap: number;
  readonly used_txs: number;
  readonly locked_txs: number;
}

/** The quota figures of a fold under a mandate. */
export function quotaOf(m: Mandate, f: Pick<RefereeFold, 'used' | 'locked' | 'usedTxs' | 'lockedTxs'>): QuotaFigures {
  return { cap: m.quotaCap, used: f.used, locked: f.locked, free: decSub(decSub(m.quotaCap, f.used), f.locked), tx_cap: m.txCap, used_txs: f.usedTxs, locked_txs: f.lockedTxs };
}

/**
 * Quota weight of an intent: `size × weights[action]` (exact decimal; the
 * multiplier defaults to `"1"`).
 *
 * @example
 * weightOf(mandate, { action: 'open', size: '1.5', … }); // '1.5'
 */
export function weightOf(m: Mandate, intent: Pick<Intent, 'action' | 'size'>): string {
  return decMul(intent.size, m.weights[intent.action]);
}

/** Whether a ticket of `weight` fits: `used + locked + weight ≤ cap`. */
export function quotaFits(m: Mandate, f: RefereeFold, weight: string): boolean {
  return decCmp(decAdd(decAdd(f.used, f.locked), weight), m.quotaCap) <= 0;
}

/** Whether one more transaction fits: `used_txs + locked_txs < tx_cap`. */
export function txFits(m: Mandate, f: RefereeFold): boolean {
  return f.usedTxs + f.lockedTxs < m.txCap;
}

/** The ticket an admission creates (not yet added to the fold). */
export function makeTicket(m: Mandate, session: string, f: RefereeFold, intent: Intent, intentHash: string, ordinal: number, frameTime: number): Ticket {
  const id = f.tickets.length + 1;
  const weight = weightOf(m, intent);
  const ttl = normalizeTtl(intent.ttl);
  const ttlMs = ttl.ok ? ttl.ms : frameTime;
  // Version 2: the ticket lives exactly as long as its intent does (intentEndMs, the one ttl edge rule), so an
  // intent admitted at its ttl can still be redeemed at that instant. Version 1 ended it AT the ttl (replay only).
  const intentEnd = m.version === 1 ? ttlMs : intentEndMs(ttlMs, m.intentSkewMs);
  const expiresAt = Math.min(m.expiresAt, intentEnd, frameTime + m.ticketTtlMs);
  const intentObject = intent as unknown as CanonicalObject;
  const proofHash = ticketProofHash(ticketAnchor({ instance: m.instance, session, ticket: id, executor: m.executor, weight, intentHash, intent: intentObject }));
  return { id, ordinal, agentId: intent.agent_id, action: intent.action, intentHash, weight, expiresAt, proofHash, intentJson: canonicalJson(intentObject), state: 'ACTIVE' };
}

/** Adds an admitted ticket: locks its weight and one transaction. */
export function lockTicket(f: RefereeFold, t: Ticket): void {
  f.tickets.push(t);
  f.locked = decAdd(f.locked, t.weight);
  f.lockedTxs += 1;
}

/** ACTIVE → REDEEMED: the weight and the transaction move from locked to used. */
export function redeemTicket(f: RefereeFold, t: Ticket, ordinal: number, time: number): void {
  f.locked = decSub(f.locked, t.weight);
  f.lockedTxs -= 1;
  f.used = decAdd(f.used, t.weight);
  f.usedTxs += 1;
  t.state = 'REDEEMED';
  t.settled = { op: 'redeem', ordinal, time };
}

/** ACTIVE → RELEASED: the weight and the transaction are freed. */
export function releaseTicket(f: RefereeFold, t: Ticket, ordinal: number, time: number): void {
  f.locked = decSub(f.locked, t.weight);
  f.lockedTxs -= 1;
  t.state = 'RELEASED';
  t.settled = { op: 'release', ordinal, time };
}

/** Parses a normalized signed Intent out of a value (already validated once). */
export function parseAnchoredIntent(value: unknown): Intent | undefined {
  const r = intentSchema.safeParse(value);
  return r.success ? r.data : undefined;
}

/**
 * A session's payments as a deterministic fold over its transcript: admitted payment turns open
 * tickets (the amount RESERVED against the asset's budget), frames bring settlement facts:
 *
 * ```json
 * "data": { "x402": { "offers": [{ "id": "o-1", "required": <PaymentRequired> }],
 *   "settlements": [
 *     { "ticket": 1, "response": <SettleResponse> },          // success → SETTLED, else FAILED
 *     { "ticket": 2, "unknown": "timeout" },                  // no answer → UNKNOWN (still held)
 *     { "ticket": 2, "receipt": { "transaction", "status", "logs" } }, // chain evidence → SETTLED
 *     { "ticket": 3, "lapsed": { "authorization_state": false } } ] } } // unused after validBefore → FAILED
 * ```
 *
 * RESERVED → SETTLED | FAILED | UNKNOWN; UNKNOWN → SETTLED (an answer or a receipt) | FAILED
 * (only by a lapse: chain evidence, never a facilitator's "failed"). SETTLED uses the amount,
 * FAILED frees it, RESERVED and UNKNOWN hold it. Nothing here reads a clock.
 */
import type { CanonicalValue } from '../protocol/index.js';
import type { PaymentState, SettlementFactCode } from './codes.js';
import { readReceipt, receiptSettles } from './evidence.js';
import type { Authorization } from './payload.js';

/** Most settlement facts one frame may carry. */
export const MAX_SETTLEMENTS_PER_FRAME = 64;

/** One admitted payment. */
export interface PaymentTicket {
  readonly id: number;
  readonly ordinal: number;
  readonly agentId: string;
  /** Lowercase. */
  readonly payer: string;
  readonly network: string;
  /** Lowercase. */
  readonly asset: string;
  readonly paymentHash: string;
  readonly acceptedJson: string;
  readonly authorization: Authorization;
  readonly retryOf: number | undefined;
  state: PaymentState;
  transaction?: string;
}

/** What one settlement fact did. */
export type SettlementOutcome =
  | { readonly ticket: number; readonly ok: true; readonly state: PaymentState; readonly transaction?: string }
  | { readonly ticket?: number; readonly ok: false; readonly code: SettlementFactCode; readonly message: string; readonly index: number };

/** Budget figures of one asset (atomic units, decimal strings). */
export interface BudgetFigures {
  readonly network: string;
  readonly asset: string;
  readonly budget: string;
  readonly used: string;
  readonly locked: string;
  readonly free: string;
}

/** The folded payments of one session. */
export interface PaymentsFold {
  readonly tickets: PaymentTicket[];
  /** `network asset` → amounts used (SETTLED) and locked (RESERVED, UNKNOWN). */
  readonly spent: Map<string, { used: bigint; locked: bigint }>;
  lastFrame: { readonly ordinal: number; readonly time: number; readonly data: CanonicalValue | undefined; readonly outcomes: readonly SettlementOutcome[] | undefined } | undefined;
}

export function emptyPaymentsFold(): PaymentsFold {
  return { tickets: [], spent: new Map(), lastFrame: undefined };
}

export const assetKey = (network: string, asset: string): string => `${network} ${asset.toLowerCase()}`;

function spentOf(f: PaymentsFold, t: Pick<PaymentTicket, 'network' | 'asset'>): { used: bigint; locked: bigint } {
  const k = assetKey(t.network, t.asset);
  let s = f.spent.get(k);
  if (!s) f.spent.set(k, (s = { used: 0n, locked: 0n }));
  return s;
}

/** Opens a ticket: its value is locked. */
export function reserve(f: PaymentsFold, t: PaymentTicket): void {
  f.tickets.push(t);
  spentOf(f, t).locked += t.authorization.value;
}

function settle(f: PaymentsFold, t: PaymentTicket, transaction: string): void {
  const s = spentOf(f, t);
  s.locked -= t.authorization.value;
  s.used += t.authorization.value;
  t.state = 'SETTLED';
  t.transaction = transaction;
}

function fail(f: PaymentsFold, t: PaymentTicket): void {
  spentOf(f, t).locked -= t.authorization.value;
  t.state = 'FAILED';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const TX = /^0x[0-9a-fA-F]{64}$/;

function applyOne(f: PaymentsFold, time: number, item: unknown, index: number): SettlementOutcome {
  const bad = (code: SettlementFactCode, message: string, ticket?: number): SettlementOutcome => ({ ...(ticket === undefined ? {} : { ticket }), ok: false, code, message, index });
  if (!isObject(item)) return bad('settlement_malformed', 'a settlement fact must be an object { ticket, response | unknown | receipt | lapsed }');
  const kinds = ['response', 'unknown', 'receipt', 'lapsed'].filter((k) => Object.hasOwn(item, k));
  if (Object.keys(item).length !== 2 || !Object.hasOwn(item, 'ticket') || kinds.length !== 1) return bad('settlement_malformed', 'a settlement fact is { ticket } and exactly one of response, unknown, receipt, lapsed');
  const id = item['ticket'];
  const t = typeof id === 'number' && Number.isSafeInteger(id) && id >= 1 ? f.tickets[id - 1] : undefined;
  if (!t) return bad('ticket_unknown', `no payment ticket ${JSON.stringify(id)} in this session`);
  const kind = kinds[0]!;
  const open = t.state === 'RESERVED' || t.state === 'UNKNOWN';
  if (!open) return bad('ticket_not_open', `payment ticket ${t.id} is ${t.state}`, t.id);
  if (kind === 'unknown') {
    if (typeof item['unknown'] !== 'string' || item['unknown'].length === 0 || item['unknown'].length > 200) return bad('settlement_malformed', 'unknown must be a reason of 1–200 characters', t.id);
    if (t.state !== 'RESERVED') return bad('ticket_not_open', `payment ticket ${t.id} is already UNKNOWN`, t.id);
    t.state = 'UNKNOWN';
    return { ticket: t.id, ok: true, state: 'UNKNOWN' };
  }
  if (kind === 'response') {
    const r = item['response'];
    if (!isObject(r) || typeof r['success'] !== 'boolean' || typeof r['network'] !== 'string' || typeof r['transaction'] !== 'string') return bad('settlement_malformed', 'response must be an x402 SettleResponse { success, transaction, network, … }', t.id);
    if (r['network'] !== t.network || (r['payer'] !== undefined && (typeof r['payer'] !== 'string' || r['payer'].toLowerCase() !== t.payer))) return bad('settlement_mismatch', `the settlement names ${JSON.stringify(r['network'])} / ${JSON.stringify(r['payer'])}, the ticket ${t.network} / ${t.payer}`, t.id);
    if (r['success'] === true) {
      if (!TX.test(r['transaction'])) return bad('settlement_malformed', 'a successful settlement names its 32-byte transaction hash', t.id);
      settle(f, t, r['transaction'].toLowerCase());
      return { ticket: t.id, ok: true, state: 'SETTLED', transaction: t.transaction! };
    }
    if (t.state === 'UNKNOWN') return bad('settlement_unknown', `payment ticket ${t.id} is UNKNOWN: only chain evidence (a receipt or a lapse) decides it`, t.id);
    fail(f, t);
    return { ticket: t.id, ok: true, state: 'FAILED' };
  }
  if (kind === 'receipt') {
    const r = readReceipt(item['receipt']);
    if (typeof r === 'string') return bad('settlement_malformed', r, t.id);
    if (!receiptSettles(r, t.asset, t.authorization)) return bad('evidence_mismatch', `the receipt of ${r.transaction} does not show ticket ${t.id}'s AuthorizationUsed and Transfer`, t.id);
    settle(f, t, r.transaction);
    return { ticket: t.id, ok: true, state: 'SETTLED', transaction: r.transaction };
  }
  const l = item['lapsed'];
  if (!isObject(l) || Object.keys(l).length !== 1 || l['authorization_state'] !== false) return bad('settlement_malformed', 'lapsed must be { authorization_state: false }', t.id);
  if (BigInt(Math.floor(time / 1000)) < t.authorization.validBefore) return bad('evidence_insufficient', `payment ticket ${t.id}'s authorization is valid until ${t.authorization.validBefore} s; frame time ${Math.floor(time / 1000)} s`, t.id);
  fail(f, t);
  return { ticket: t.id, ok: true, state: 'FAILED' };
}

/** Applies a frame's settlement facts (`undefined` when it carries none), in order. */
export function applySettlements(f: PaymentsFold, time: number, data: CanonicalValue | undefined): SettlementOutcome[] | undefined {
  if (!isObject(data) || !isObject(data['x402']) || !Object.hasOwn(data['x402'], 'settlements')) return undefined;
  const list = data['x402']['settlements'];
  if (!Array.isArray(list) || list.length > MAX_SETTLEMENTS_PER_FRAME) return [{ ok: false, code: 'settlement_malformed', message: `settlements must be a list of at most ${MAX_SETTLEMENTS_PER_FRAME}`, index: 0 }];
  return list.map((item, i) => applyOne(f, time, item, i));
}

/** Budget figures of each asset of `assets`, in order. */
export function budgetsOf(f: PaymentsFold, assets: readonly { network: string; asset: string; budget: bigint }[]): BudgetFigures[] {
  return assets.map((a) => {
    const s = f.spent.get(assetKey(a.network, a.asset)) ?? { used: 0n, locked: 0n };
    return { network: a.network, asset: a.asset, budget: a.budget.toString(), used: s.used.toString(), locked: s.locked.toString(), free: (a.budget - s.used - s.locked).toString() };
  });
}

/**
 * AP2's rule "Shopping Agents MUST NOT present any subsequent open Payment or
 * Checkout Mandates without receiving a rejection receipt from the previous
 * one", derived from the transcript (PROTOCOL.md §16.8). A receipt a frame
 * carries is a fact: verified under its party's pinned key, listed in the
 * ruling of the turn that answers the frame, and claimed as the store
 * reservation (`ap2:<M>`, `receipt:<reference>`) with that turn, so every
 * session of the store sees it. Use `n` ≥ 1 of `M` is admitted only if the
 * closed mandate of use `n − 1` has a receipt: in the frame being answered,
 * or reserved by any session. Replay re-derives the day's own receipts and
 * takes another session's from the recorded ruling, as an external fact.
 */
import type { CanonicalObject, CanonicalValue } from '../protocol/index.js';
import type { NonceClaim } from '../store/index.js';
import type { RuleContext } from '../session/index.js';
import type { Ap2Code, MandateResult } from './codes.js';
import { carriedReceipts, verifyReceipt, type Parties } from './receipts.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the answered frame's receipts come to: the ruling's `receipts` list, the claims, the references verified. */
export interface FrameReceipts {
  readonly listed: readonly CanonicalObject[];
  readonly claims: readonly NonceClaim[];
  readonly references: ReadonlySet<string>;
}

/** Verifies every receipt of `ctx.frameData` and claims each verified reference not yet held in the store. */
export async function frameReceipts(ctx: RuleContext, key: string, parties: Parties, intentHash: string): Promise<FrameReceipts> {
  const carried = carriedReceipts(ctx.frameData);
  if (!carried.ok) return { listed: [{ code: carried.code }], claims: [], references: new Set() };
  const listed: CanonicalObject[] = [];
  const claims: NonceClaim[] = [];
  const references = new Set<string>();
  for (const r of carried.value) {
    const v = await verifyReceipt(r.type, r.jwt, parties);
    if (!v.ok) {
      listed.push({ type: r.type, code: v.code });
      continue;
    }
    const { type, reference, status, iss, iat } = v.value;
    listed.push({ type, reference, status, iss, iat });
    if (references.has(reference)) continue;
    references.add(reference);
    if (!(await ctx.nonceOwner(key, `receipt:${reference}`))) claims.push({ agentId: key, nonce: `receipt:${reference}`, intentHash });
  }
  return { listed, claims, references };
}

/**
 * The receipt for the previous use's closed mandate (`reference`), or a
 * refusal message; `{}` when there is no previous use. The value is what the
 * ruling records: `previous_receipt: {reference, session, index}` when it came
 * from the store (any session), `{reference, in_frame: true}` when from the frame.
 */
export async function previousReceipt(ctx: RuleContext, key: string, reference: string | undefined, inFrame: ReadonlySet<string>): Promise<MandateResult<Record<string, CanonicalValue>>> {
  if (reference === undefined) return { ok: true, value: {} };
  if (inFrame.has(reference)) return { ok: true, value: { previous_receipt: { reference, in_frame: true } } };
  const owner = await ctx.nonceOwner(key, `receipt:${reference}`);
  if (!owner) return { ok: false, code: 'receipt-missing', message: `the previous presentation (closed mandate ${reference}) has no receipt yet: AP2 forbids a subsequent presentation until one arrives` };
  return { ok: true, value: { previous_receipt: { reference, session: owner.sessionId, index: owner.index } } };
}

/** A ruling's `previous_receipt` when it names a store reservation. */
export function recordedPreviousReceipt(recorded: CanonicalObject): { reference: string; session: string; index: number } | undefined {
  const a = recorded['ap2'];
  const p = isObject(a) ? a['previous_receipt'] : undefined;
  if (!isObject(p) || typeof p['reference'] !== 'string' || typeof p['session'] !== 'string' || typeof p['index'] !== 'number') return undefined;
  return { reference: p['reference'], session: p['session'], index: p['index'] };
}

/**
 * The rule for an open **checkout** mandate (§16.11): its line items are one
 * cart that AP2 does not split across checkouts, so use `n ≥ 1` is admitted
 * only if use `n − 1` (its checkout hash `reference`) was rejected — a
 * checkout receipt with status `Error`, in the answered frame or reserved by
 * any session (`receipt-missing` without one, `checkout-fulfilled` when it is
 * a `Success`). The status of a stored receipt is read from the ruling that
 * lists it (`rulingOf`), and on replay for another session's from the
 * recorded `previous_receipt.status`.
 */
export async function previousCheckoutRejected(
  ctx: RuleContext,
  key: string,
  reference: string | undefined,
  seen: FrameReceipts,
  rulingOf: (session: string, index: number) => Promise<Record<string, unknown> | undefined>,
): Promise<{ readonly ok: boolean; readonly code?: Ap2Code; readonly message?: string; readonly facts: Record<string, CanonicalValue> }> {
  if (reference === undefined) return { ok: true, facts: {} };
  // The receipt the ruling names, admitted or not: replay re-reads another session's from it.
  const judge = (status: unknown, where: Record<string, CanonicalValue> | undefined) => {
    const facts: Record<string, CanonicalValue> = where === undefined ? {} : { previous_receipt: { reference, ...where, ...(typeof status === 'string' ? { status } : {}) } };
    if (status === 'Error') return { ok: true, facts };
    if (status === 'Success') return { ok: false, code: 'checkout-fulfilled' as const, message: `the previous checkout (${reference}) has a Success receipt: an open checkout mandate's line items are one cart, not split across checkouts`, facts };
    return { ok: false, code: 'receipt-missing' as const, message: `the previous checkout (${reference}) has no checkout receipt: AP2 forbids a subsequent presentation until one arrives`, facts };
  };
  const inFrame = checkoutStatus(seen.listed, reference);
  if (inFrame !== undefined) return judge(inFrame, { in_frame: true });
  const owner = await ctx.nonceOwner(key, `receipt:${reference}`);
  if (!owner) return judge(undefined, undefined);
  const recorded = ctx.recorded?.['ap2'];
  const status = ctx.recorded !== undefined && owner.sessionId !== ctx.sessionId
    ? (isObject(recorded) && isObject(recorded['previous_receipt']) ? recorded['previous_receipt']['status'] : undefined)
    : checkoutStatus((await rulingOf(owner.sessionId, owner.index))?.['receipts'], reference);
  return judge(status, { session: owner.sessionId, index: owner.index });
}

/** The status of the first verified checkout receipt for `reference` in a ruling's `receipts` list. */
function checkoutStatus(listed: unknown, reference: string): unknown {
  if (!Array.isArray(listed)) return undefined;
  const r = listed.find((x) => isObject(x) && x['type'] === 'checkout' && x['reference'] === reference && typeof x['status'] === 'string');
  return isObject(r) ? r['status'] : undefined;
}

/**
 * The verification of an x402 evidence pack (docs/PROTOCOL.md §17.8), apart from how its signed
 * checkpoints are opened: the caller hands in the opener, so `tally verify-evidence`, the library
 * and the grader's page run this one rule (this file loads no Node module; the page bundles it).
 */
import { canonicalJson, fromBase64, type CanonicalObject, type Entry } from '../protocol/index.js';
import { checkMandateSignature } from '../referee/mandate-sig.js';
import { verifyTurnReceiptWith, type CheckpointOpener } from '../receipt/proof/turn-receipt-check.js';
import type { PaymentRefusalCode, PaymentState } from './codes.js';
import { readReceipt, receiptSettles } from './evidence.js';
import { emptyPaymentsFold, type SettlementOutcome } from './fold.js';
import { parsePaymentTurn } from './payload.js';
import { rulePayment, type PaymentJudges, type PaymentRuling } from './ruler.js';
import { reverifyPaymentJudges } from './judges.js';
import { parsePaymentPolicy } from './spec.js';

export const EVIDENCE_FORMAT = 'tally/x402-evidence/1';

/** The reason codes a dispute names. */
export const DISPUTE_REASONS = ['authority_exceeded', 'counterparty_mismatch', 'offer_drift', 'duplicate_execution', 'settlement_unknown'] as const;
export type DisputeReason = (typeof DISPUTE_REASONS)[number];

export const REASON_OF: Partial<Record<PaymentRefusalCode, DisputeReason>> = {
  offer_drift: 'offer_drift',
  counterparty_mismatch: 'counterparty_mismatch',
  payee_not_allowed: 'authority_exceeded',
  over_payment_cap: 'authority_exceeded',
  over_budget: 'authority_exceeded',
  asset_not_allowed: 'authority_exceeded',
  network_not_allowed: 'authority_exceeded',
  payer_not_signer: 'authority_exceeded',
  unknown_agent: 'authority_exceeded',
  duplicate_execution: 'duplicate_execution',
  payment_id_conflict: 'duplicate_execution',
  // The principal's rules, as the judges the policy names read them, did not allow it.
  judge_denied: 'authority_exceeded',
  judge_quorum_not_met: 'authority_exceeded',
};

/** Refusals that depend on earlier entries (the budget, earlier tickets, the store's reservations): taken as recorded. */
export const HISTORY_CODES: readonly PaymentRefusalCode[] = ['over_budget', 'retry_not_allowed', 'settlement_unknown', 'payment_id_conflict', 'duplicate_execution'];

export type Role = 'genesis' | 'offer' | 'payment' | 'settlement-frame' | 'settlement-turn';
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const x402Of = (e: Entry): { payment?: PaymentRuling; settlements?: readonly SettlementOutcome[] } => (e.kind === 'turn' && isObject(e.ruling) && isObject(e.ruling['x402']) ? (e.ruling['x402'] as never) : {});

export type EvidenceCode = 'evidence_malformed' | 'receipt_invalid' | 'mandate_invalid' | 'ruling_mismatch' | 'judge_evidence_invalid' | 'settlement_mismatch';

/** What a verified pack proves. */
export interface EvidenceFacts {
  readonly ok: true;
  readonly session: string;
  readonly checkpoint: { readonly size: number; readonly root: string };
  readonly principal: string;
  readonly payment: PaymentRuling;
  /** Whether the ruling was re-derived from the pack alone (false: it depends on earlier entries and is taken as recorded). */
  readonly rederived: boolean;
  readonly settlements: readonly SettlementOutcome[];
  readonly state: PaymentState | undefined;
  readonly transaction?: string;
  readonly reasons: readonly DisputeReason[];
}

/** A pack refused: its code and why. */
export type EvidenceRefusal = { readonly ok: false; readonly code: EvidenceCode; readonly message: string };

/**
 * Verifies a pack offline, its checkpoints opened by `open` (the engine's pinned verifier keys:
 * node:crypto in {@link verifyPaymentEvidence}, WebCrypto in the grader's page). Never throws.
 */
export async function checkPaymentEvidence(pack: unknown, open: CheckpointOpener): Promise<EvidenceFacts | EvidenceRefusal> {
  const no = (code: EvidenceCode, message: string) => ({ ok: false as const, code, message });
  if (!isObject(pack) || pack['format'] !== EVIDENCE_FORMAT || typeof pack['checkpoint'] !== 'string' || typeof pack['session'] !== 'string' || !Array.isArray(pack['entries'])) return no('evidence_malformed', `not a ${EVIDENCE_FORMAT} pack`);
  const opened = await open(pack['checkpoint']);
  if (!opened.ok) return no('receipt_invalid', `the checkpoint does not open: ${opened.message}`);
  const cp = opened.checkpoint;
  if (cp.sessionId !== pack['session']) return no('evidence_malformed', 'the checkpoint is of another session');
  const pin = { sessionId: cp.sessionId, size: cp.size, receiptRoot: cp.root };
  const by = new Map<Role, { index: number; entry: Entry }[]>();
  for (const item of pack['entries'] as unknown[]) {
    if (!isObject(item) || typeof item['receipt'] !== 'string' || !['genesis', 'offer', 'payment', 'settlement-frame', 'settlement-turn'].includes(item['role'] as string)) return no('evidence_malformed', 'each entry is {role, receipt}');
    const r = await verifyTurnReceiptWith(item['receipt'], open, pin);
    if (!r.ok) return no('receipt_invalid', `${String(item['role'])}: ${r.message}`);
    const list = by.get(item['role'] as Role) ?? [];
    list.push({ index: r.index, entry: r.entry });
    by.set(item['role'] as Role, list);
  }
  const one = (role: Role) => (by.get(role)?.length === 1 ? by.get(role)![0]! : undefined);
  const g = one('genesis');
  const f = one('offer');
  const t = one('payment');
  if (!g || !f || !t || g.entry.kind !== 'genesis' || f.entry.kind !== 'frame' || t.entry.kind !== 'turn' || f.index !== t.index - 1 || f.entry.ordinal !== t.entry.ordinal) return no('evidence_malformed', 'a pack holds one genesis, and the payment turn right after the frame it answers');
  const spec = g.entry.spec;
  const sig = checkMandateSignature(spec);
  if (!sig.ok) return no('mandate_invalid', `the mandate's principal signature does not verify: ${sig.code}`);
  const policy = parsePaymentPolicy(spec);
  if (!policy.ok || !policy.policy) return no('mandate_invalid', 'the genesis seals no valid payment policy');
  const recorded = x402Of(t.entry).payment;
  const parsed = t.entry.body.kind === 'authored' ? parsePaymentTurn(fromBase64(t.entry.body.bytes)!) : undefined;
  if (!recorded || !parsed) return no('ruling_mismatch', 'the payment turn carries no payment or no payment ruling');
  if (recorded.payment_hash !== pack['payment_hash']) return no('evidence_malformed', 'the pack names another payment');
  let rederived = false;
  if (!parsed.ok) {
    if (recorded.admitted || recorded.code !== parsed.code) return no('ruling_mismatch', `the payment does not parse (${parsed.code}) but was ruled otherwise`);
    rederived = true;
  } else {
    // The judges' recorded answers are re-verified, never re-asked: each signature by its named key, over this payment's request, and the quorum.
    const judges = policy.policy.judging === undefined ? undefined : (request: Parameters<PaymentJudges>[0]) => reverifyPaymentJudges(policy.policy!.judging!, request, recorded.verdict);
    const again = (await rulePayment({ spec, sessionId: cp.sessionId, frameTime: f.entry.time, nonceOwner: async () => undefined }, policy.policy, emptyPaymentsFold(), f.entry.data, parsed.turn, judges)).ruling;
    if (!recorded.admitted && HISTORY_CODES.includes(recorded.code)) rederived = false;
    else {
      if (policy.policy.judging !== undefined && canonicalJson((again.verdict ?? null) as unknown as CanonicalObject) !== canonicalJson((recorded.verdict ?? null) as unknown as CanonicalObject)) {
        return no('judge_evidence_invalid', again.verdict === undefined ? `the pack re-derives ${again.admitted ? 'an admission' : again.code} before any judge, the day recorded a judged ruling` : `the judges' answers re-verified from the pack give ${again.verdict.admitted ? 'an admission' : `${again.verdict.code}: ${again.verdict.message}`}, not the recorded verdict`);
      }
      const strip = (r: PaymentRuling) => canonicalJson((r.admitted ? { ...r, ticket: 0 } : { admitted: false, code: r.code, ...(r.verdict === undefined ? {} : { verdict: r.verdict }) }) as unknown as CanonicalObject);
      if (recorded.admitted && !again.admitted) return no('ruling_mismatch', `the pack re-derives ${again.code}, the day recorded an admission`);
      if (strip(again) !== strip(recorded)) return no('ruling_mismatch', 'the ruling re-derived from the pack differs from the recorded one');
      rederived = true;
    }
  }
  const settlements: SettlementOutcome[] = [];
  let state: PaymentState | undefined = recorded.admitted ? 'RESERVED' : undefined;
  let transaction: string | undefined;
  const frames = by.get('settlement-frame') ?? [];
  for (const st of by.get('settlement-turn') ?? []) {
    const fr = frames.find((x) => x.index === st.index - 1);
    if (!fr || fr.entry.kind !== 'frame' || st.index <= t.index || !recorded.admitted) return no('evidence_malformed', 'each settlement turn comes with the frame it answers, after the payment');
    const facts = isObject(fr.entry.data) && isObject(fr.entry.data['x402']) && Array.isArray(fr.entry.data['x402']['settlements']) ? (fr.entry.data['x402']['settlements'] as unknown[]) : [];
    for (const out of x402Of(st.entry).settlements ?? []) {
      if (out.ticket !== recorded.ticket) continue;
      if (out.ok && out.state === 'SETTLED') {
        const fact = facts.find((x) => isObject(x) && x['ticket'] === recorded.ticket && isObject(x['receipt']));
        if (fact && parsed.ok) {
          const r = readReceipt((fact as Record<string, unknown>)['receipt']);
          if (typeof r === 'string' || !receiptSettles(r, recorded.asset, parsed.turn.authorization)) return no('settlement_mismatch', 'the receipt recorded as settling the payment does not show its AuthorizationUsed and Transfer');
        }
        transaction = out.transaction;
      }
      if (out.ok) state = out.state;
      settlements.push(out);
    }
  }
  const reasons = new Set<DisputeReason>();
  if (!recorded.admitted && REASON_OF[recorded.code]) reasons.add(REASON_OF[recorded.code]!);
  // No settlement fact, or only UNKNOWN, by the end of what the pack proves: nobody can say the money did not move.
  if (state === 'UNKNOWN' || state === 'RESERVED') reasons.add('settlement_unknown');
  return { ok: true, session: cp.sessionId, checkpoint: { size: cp.size, root: cp.root }, principal: sig.signer, payment: recorded, rederived, settlements, state, ...(transaction === undefined ? {} : { transaction }), reasons: [...reasons] };
}

/**
 * Dispute evidence for one x402 payment, self-contained and checked offline with nothing but the
 * engine's verifier key (docs/PROTOCOL.md §17.8). A pack is canonical JSON:
 *
 * ```json
 * { "format": "tally/x402-evidence/1", "session": "<64 hex>", "ticket": 1, "payment_hash": "…",
 *   "checkpoint": "<the signed session checkpoint, verbatim>",
 *   "entries": [{ "role": "genesis" | "offer" | "payment" | "settlement-frame" | "settlement-turn",
 *                 "receipt": "<a single-turn receipt (§11.4) under that checkpoint>" }, …] }
 * ```
 *
 * The genesis proves the mandate and its principal's signature (and so the payment policy), the
 * offer frame the PaymentRequired the agent saw, the payment turn the signed PaymentPayload and
 * its ruling, and the settlement frames and turns every fact about the ticket and its outcome.
 * Verification re-derives every rule that needs no other entry (offer byte-equality, signature,
 * payer, policy, counterparty, amount, cap, validity window) and re-checks chain evidence.
 */
import { canonicalJson, fromBase64, type CanonicalObject, type Entry } from '../protocol/index.js';
import { checkMandateSignature } from '../referee/mandate-sig.js';
import type { Notary } from '../receipt/session/notary.js';
import type { NoteVerifier } from '../receipt/note/types.js';
import { openSessionCheckpoint } from '../receipt/session/open-checkpoint.js';
import { verifyTurnReceipt } from '../receipt/proof/turn-receipt.js';
import type { Engine } from '../session/engine.js';
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

const REASON_OF: Partial<Record<PaymentRefusalCode, DisputeReason>> = {
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
const HISTORY_CODES: readonly PaymentRefusalCode[] = ['over_budget', 'retry_not_allowed', 'settlement_unknown', 'payment_id_conflict', 'duplicate_execution'];

type Role = 'genesis' | 'offer' | 'payment' | 'settlement-frame' | 'settlement-turn';
export interface EvidencePack {
  readonly format: typeof EVIDENCE_FORMAT;
  readonly session: string;
  readonly ticket?: number;
  readonly payment_hash: string;
  readonly checkpoint: string;
  readonly entries: readonly { readonly role: Role; readonly receipt: string }[];
}

/** Which payment: its ticket, its payment hash, or its transaction key. */
export type PaymentSelector = { readonly ticket: number } | { readonly paymentHash: string } | { readonly payer: string; readonly payTo: string; readonly value: string; readonly nonce: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const x402Of = (e: Entry): { payment?: PaymentRuling; settlements?: readonly SettlementOutcome[] } => (e.kind === 'turn' && isObject(e.ruling) && isObject(e.ruling['x402']) ? (e.ruling['x402'] as never) : {});

function selects(p: PaymentRuling, s: PaymentSelector): boolean {
  if ('ticket' in s) return p.admitted && p.ticket === s.ticket;
  if ('paymentHash' in s) return p.payment_hash === s.paymentHash;
  return p.admitted && p.payer === s.payer.toLowerCase() && p.pay_to === s.payTo.toLowerCase() && p.value === s.value && p.nonce === s.nonce.toLowerCase();
}

type BuildResult = { ok: true; pack: EvidencePack } | { ok: false; code: 'payment_unknown' | 'receipt_failed'; message: string };

/**
 * Assembles the pack of the payment `select` names from a session's `entries`; `prove(index)`
 * gives each chosen entry's single-turn receipt and the signed checkpoint it is under (all under
 * the same one).
 */
export async function assemblePaymentEvidence(
  entries: readonly Entry[],
  sessionId: string,
  select: PaymentSelector,
  prove: (index: number) => Promise<{ ok: true; text: string; signedCheckpoint: string } | { ok: false; message: string }>,
): Promise<BuildResult> {
  const p = entries.findIndex((e) => { const x = x402Of(e).payment; return x !== undefined && selects(x, select); });
  if (p < 0) return { ok: false, code: 'payment_unknown', message: 'no payment turn of this session matches' };
  const payment = x402Of(entries[p]!).payment!;
  if (payment.payment_hash === undefined) return { ok: false, code: 'payment_unknown', message: 'the payment turn carries no payload to name' };
  const ticket = payment.admitted ? payment.ticket : undefined;
  const picks: { role: Role; index: number }[] = [{ role: 'genesis', index: 0 }, { role: 'offer', index: p - 1 }, { role: 'payment', index: p }];
  if (ticket !== undefined) {
    for (let i = p + 1; i < entries.length; i++) {
      if ((x402Of(entries[i]!).settlements ?? []).some((s) => s.ticket === ticket)) picks.push({ role: 'settlement-frame', index: i - 1 }, { role: 'settlement-turn', index: i });
    }
  }
  let checkpoint: string | undefined;
  const out: { role: Role; receipt: string }[] = [];
  for (const pick of picks) {
    const r = await prove(pick.index);
    if (!r.ok) return { ok: false, code: 'receipt_failed', message: r.message };
    checkpoint ??= r.signedCheckpoint;
    out.push({ role: pick.role, receipt: r.text });
  }
  return { ok: true, pack: { format: EVIDENCE_FORMAT, session: sessionId, ...(ticket === undefined ? {} : { ticket }), payment_hash: payment.payment_hash, checkpoint: checkpoint!, entries: out } };
}

/**
 * Builds the evidence pack of one payment from the engine's store, every receipt under
 * `signedCheckpoint` (default: a fresh checkpoint of the whole session; pass the day's sealed,
 * witnessed one to prove it is in that day).
 */
export async function buildPaymentEvidence(o: { readonly engine: Engine; readonly notary: Notary; readonly sessionId: string; readonly select: PaymentSelector; readonly signedCheckpoint?: string }): Promise<BuildResult> {
  const entries: Entry[] = [];
  for await (const l of o.engine.exportEntries(o.sessionId)) entries.push(JSON.parse(new TextDecoder().decode(l)) as Entry);
  let checkpoint = o.signedCheckpoint;
  return assemblePaymentEvidence(entries, o.sessionId, o.select, async (index) => {
    const r = await o.notary.turnReceipt(o.engine, o.sessionId, index, checkpoint === undefined ? {} : { signedCheckpoint: checkpoint });
    if (!r.ok) return { ok: false, message: r.message };
    checkpoint ??= r.checkpoint.signedCheckpoint;
    return { ok: true, text: r.text, signedCheckpoint: checkpoint };
  });
}

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

/** Verifies a pack offline with the engine's verifier key(s). Never throws. */
export async function verifyPaymentEvidence(pack: unknown, options: { readonly verifiers: readonly (NoteVerifier | string)[] }): Promise<EvidenceFacts | { ok: false; code: EvidenceCode; message: string }> {
  const no = (code: EvidenceCode, message: string) => ({ ok: false as const, code, message });
  if (!isObject(pack) || pack['format'] !== EVIDENCE_FORMAT || typeof pack['checkpoint'] !== 'string' || typeof pack['session'] !== 'string' || !Array.isArray(pack['entries'])) return no('evidence_malformed', `not a ${EVIDENCE_FORMAT} pack`);
  const opened = openSessionCheckpoint(pack['checkpoint'], options.verifiers);
  if (!opened.ok) return no('receipt_invalid', `the checkpoint does not open: ${opened.message}`);
  const cp = opened.checkpoint;
  if (cp.sessionId !== pack['session']) return no('evidence_malformed', 'the checkpoint is of another session');
  const pin = { sessionId: cp.sessionId, size: cp.size, receiptRoot: cp.root };
  const by = new Map<Role, { index: number; entry: Entry }[]>();
  for (const item of pack['entries'] as unknown[]) {
    if (!isObject(item) || typeof item['receipt'] !== 'string' || !['genesis', 'offer', 'payment', 'settlement-frame', 'settlement-turn'].includes(item['role'] as string)) return no('evidence_malformed', 'each entry is {role, receipt}');
    const r = verifyTurnReceipt(item['receipt'], { verifiers: options.verifiers, pin });
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

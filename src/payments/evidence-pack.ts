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
import type { Entry } from '../protocol/index.js';
import type { Notary } from '../receipt/session/notary.js';
import type { NoteVerifier } from '../receipt/note/types.js';
import { openSessionCheckpoint } from '../receipt/session/open-checkpoint.js';
import type { Engine } from '../session/engine.js';
import { checkPaymentEvidence, EVIDENCE_FORMAT, x402Of, type EvidenceFacts, type EvidenceRefusal, type Role } from './evidence-check.js';
import type { PaymentRuling } from './ruler.js';

export { checkPaymentEvidence, DISPUTE_REASONS, EVIDENCE_FORMAT } from './evidence-check.js';
export type { DisputeReason, EvidenceCode, EvidenceFacts, EvidenceRefusal } from './evidence-check.js';

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

/** Verifies a pack offline with the engine's verifier key(s): {@link checkPaymentEvidence} with node:crypto. Never throws. */
export function verifyPaymentEvidence(pack: unknown, options: { readonly verifiers: readonly (NoteVerifier | string)[] }): Promise<EvidenceFacts | EvidenceRefusal> {
  return checkPaymentEvidence(pack, (signed) => openSessionCheckpoint(signed, options.verifiers));
}

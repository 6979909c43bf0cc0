/**
 * The evidence pack of one AP2 transaction (PROTOCOL.md §16.9), in the shape
 * of the x402 pack (§17.8): canonical JSON
 *
 * ```json
 * { "format": "tally/ap2-evidence/1", "session": "<64 hex>", "transaction_id": "<checkout hash>",
 *   "checkpoint": "<the signed session checkpoint, verbatim>",
 *   "entries": [{ "role": "genesis" | "purchase-frame" | "purchase" | "receipt-frame",
 *                 "receipt": "<a single-turn receipt (§11.4) under that checkpoint>" }, …] }
 * ```
 *
 * The genesis carries the open mandate and the pinned parties, the purchase
 * frame the time it was verified at, the purchase turn the checkout JWT, the
 * closed payment mandate and the ruling, each receipt frame the receipts
 * about this transaction. Verification opens every inclusion proof under the
 * one checkpoint and then runs AP2's five dispute steps (dispute.ts).
 */
import { fromBase64, type Entry } from '../protocol/index.js';
import type { NoteVerifier } from '../receipt/note/types.js';
import { openSessionCheckpoint } from '../receipt/session/open-checkpoint.js';
import { verifyTurnReceipt } from '../receipt/proof/turn-receipt.js';
import type { Ap2Code } from './codes.js';
import { runDisputeSteps, type StepOutcome } from './dispute.js';
import { b64sha256 } from './open.js';
import { carriedReceipts, type CarriedReceipt } from './receipts.js';
import { readTurn } from './ruler.js';

export const AP2_EVIDENCE_FORMAT = 'tally/ap2-evidence/1';
const ROLES = ['genesis', 'purchase-frame', 'purchase', 'receipt-frame'] as const;
type Role = (typeof ROLES)[number];

export interface Ap2EvidencePack {
  readonly format: typeof AP2_EVIDENCE_FORMAT;
  readonly session: string;
  readonly transaction_id: string;
  readonly checkpoint: string;
  readonly entries: readonly { readonly role: Role; readonly receipt: string }[];
}

type PackFailure = { readonly ok: false; readonly code: Ap2Code | 'transaction-unknown'; readonly message: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const ap2Of = (e: Entry | undefined): Record<string, unknown> | undefined => (e?.kind === 'turn' && isObject(e.ruling?.['ap2']) ? (e.ruling['ap2'] as Record<string, unknown>) : undefined);
const purchaseOf = (e: Entry | undefined) => (e?.kind === 'turn' && e.body.kind === 'authored' ? readTurn(fromBase64(e.body.bytes) ?? new Uint8Array()) : undefined);

/**
 * Assembles the pack of `transactionId` from one session's entries: the
 * admitted purchase naming it (else the first refused one), and every frame
 * of the session carrying a receipt whose reference is the transaction id or
 * the hash of that purchase's payment mandate. `prove(index)` gives an
 * entry's single-turn receipt under one signed checkpoint.
 */
export async function assembleAp2Evidence(
  entries: readonly Entry[],
  sessionId: string,
  transactionId: string,
  prove: (index: number) => Promise<{ ok: true; text: string; signedCheckpoint: string } | { ok: false; message: string }>,
): Promise<{ ok: true; pack: Ap2EvidencePack } | PackFailure> {
  const named = entries.map((e, i) => [i, ap2Of(e)] as const).filter(([, a]) => a?.['transaction_id'] === transactionId);
  const hit = named.find(([, a]) => a?.['admitted'] === true) ?? named[0];
  if (!hit) return { ok: false, code: 'transaction-unknown', message: `no turn of this session names transaction_id ${transactionId}` };
  const p = hit[0];
  const purchase = purchaseOf(entries[p]);
  if (!purchase) return { ok: false, code: 'evidence-malformed', message: 'the turn naming the transaction carries no purchase' };
  const refs = new Set([transactionId, b64sha256(purchase.payment)]);
  const picks: { role: Role; index: number }[] = [{ role: 'genesis', index: 0 }, { role: 'purchase-frame', index: p - 1 }, { role: 'purchase', index: p }];
  entries.forEach((e, i) => {
    const listed = ap2Of(entries[i + 1])?.['receipts'];
    if (e.kind === 'frame' && Array.isArray(listed) && listed.some((r) => isObject(r) && refs.has(r['reference'] as string))) picks.push({ role: 'receipt-frame', index: i });
  });
  const out: { role: Role; receipt: string }[] = [];
  let checkpoint: string | undefined;
  for (const pick of picks) {
    const r = await prove(pick.index);
    if (!r.ok) return { ok: false, code: 'evidence-inclusion', message: r.message };
    checkpoint ??= r.signedCheckpoint;
    out.push({ role: pick.role, receipt: r.text });
  }
  return { ok: true, pack: { format: AP2_EVIDENCE_FORMAT, session: sessionId, transaction_id: transactionId, checkpoint: checkpoint!, entries: out } };
}

/** What a verified pack shows. */
export interface Ap2PackFacts {
  readonly ok: true;
  readonly session: string;
  readonly checkpoint: { readonly size: number; readonly root: string };
  readonly transaction_id: string;
  /** The ruling as the purchase turn records it. */
  readonly admitted: boolean;
  readonly ruling: Readonly<Record<string, unknown>>;
  readonly amount?: number;
  readonly currency?: string;
  readonly steps: readonly StepOutcome[];
  /** All five steps passed: the pack is usable as AP2 dispute evidence. */
  readonly complete: boolean;
}

/** Verifies a pack offline with the engine's verifier key(s): inclusion of every entry, then the five steps. Never throws. */
export async function verifyAp2Evidence(pack: unknown, options: { readonly verifiers: readonly (NoteVerifier | string)[] }): Promise<Ap2PackFacts | PackFailure> {
  const no = (code: Ap2Code, message: string): PackFailure => ({ ok: false, code, message });
  if (!isObject(pack) || pack['format'] !== AP2_EVIDENCE_FORMAT || typeof pack['checkpoint'] !== 'string' || typeof pack['session'] !== 'string' || typeof pack['transaction_id'] !== 'string' || !Array.isArray(pack['entries'])) {
    return no('evidence-malformed', `not a ${AP2_EVIDENCE_FORMAT} pack`);
  }
  const opened = openSessionCheckpoint(pack['checkpoint'], options.verifiers);
  if (!opened.ok) return no('evidence-inclusion', `the checkpoint does not open: ${opened.message}`);
  const cp = opened.checkpoint;
  if (cp.sessionId !== pack['session']) return no('evidence-malformed', 'the checkpoint is of another session');
  const pin = { sessionId: cp.sessionId, size: cp.size, receiptRoot: cp.root };
  const by = new Map<Role, { index: number; entry: Entry }[]>();
  for (const item of pack['entries'] as unknown[]) {
    if (!isObject(item) || typeof item['receipt'] !== 'string' || !ROLES.includes(item['role'] as Role)) return no('evidence-malformed', 'each entry is {role, receipt}');
    const r = verifyTurnReceipt(item['receipt'], { verifiers: options.verifiers, pin });
    if (!r.ok) return no('evidence-inclusion', `${String(item['role'])}: ${r.code}: ${r.message}`);
    by.set(item['role'] as Role, [...(by.get(item['role'] as Role) ?? []), { index: r.index, entry: r.entry }]);
  }
  const one = (role: Role) => (by.get(role)?.length === 1 ? by.get(role)![0]! : undefined);
  const g = one('genesis'), f = one('purchase-frame'), t = one('purchase');
  if (g?.entry.kind !== 'genesis' || f?.entry.kind !== 'frame' || t?.entry.kind !== 'turn' || f.index !== t.index - 1 || f.entry.ordinal !== t.entry.ordinal) {
    return no('evidence-malformed', 'a pack holds one genesis, and the purchase turn right after the frame it answers');
  }
  const ruling = ap2Of(t.entry);
  const purchase = purchaseOf(t.entry);
  if (!ruling || !purchase || ruling['transaction_id'] !== pack['transaction_id']) return no('evidence-malformed', 'the purchase turn carries no AP2 purchase ruled for this transaction');
  const receipts: CarriedReceipt[] = [];
  for (const rf of by.get('receipt-frame') ?? []) {
    const c = rf.entry.kind === 'frame' ? carriedReceipts(rf.entry.data) : undefined;
    if (!c?.ok) return no('evidence-malformed', 'a receipt frame carries no data.ap2.receipts');
    receipts.push(...c.value);
  }
  const d = await runDisputeSteps({ spec: g.entry.spec, frameTime: f.entry.time, transactionId: pack['transaction_id'], purchase, receipts });
  return {
    ok: true,
    session: cp.sessionId,
    checkpoint: { size: cp.size, root: cp.root },
    transaction_id: pack['transaction_id'],
    admitted: ruling['admitted'] === true,
    ruling,
    ...(d.amount === undefined ? {} : { amount: d.amount, currency: d.currency! }),
    steps: d.steps,
    complete: d.steps.every((s) => s.outcome === 'pass'),
  };
}

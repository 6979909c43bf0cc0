/**
 * An x402 evidence pack (`tally evidence --payment`, PROTOCOL.md §17.8)
 * checked in the worker: the witness quorum first when a policy is given (as
 * `tally verify-evidence --policy`), then `checkPaymentEvidence` — the one
 * rule `verifyPaymentEvidence` runs, bundled here — with the pinned engine
 * keys opening every checkpoint through WebCrypto Ed25519 (pin.ts's opener).
 * The report is data; the page shows every string as text.
 */
import { checkPaymentEvidence } from '../../payments/evidence-check.js';
import type { OpenSessionCheckpointResult } from '../../receipt/session/checkpoint-note.js';
import { decodeVerifierKey, type DecodedVerifierKey } from '../../receipt/note/verifier-key-text.js';
import { sessionCheckpointFromNote } from '../../receipt/session/checkpoint-note.js';
import { openNoteWebCrypto } from './crypto.js';
import type { PackReport } from './messages.js';
import { checkWitnesses } from './witness.js';

/** Checks the pack `packText` with the engine keys in `vkeyText` (one a line), under the witness policy when given. */
export async function checkPack(packText: string, vkeyText: string | undefined, policyText: string | undefined): Promise<PackReport> {
  const refuse = (stage: string, code: string, message: string): PackReport => ({ state: 'refused', stage, code, message });
  const keys: DecodedVerifierKey[] = [];
  for (const line of (vkeyText ?? '').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))) {
    const k = decodeVerifierKey(line);
    if (!k.ok) return refuse('key', k.code, k.message);
    keys.push(k.key);
  }
  if (keys.length === 0) return refuse('key', 'malformed-verifier-key', 'no engine verifier key given: a pack is checked with the published key alone, so it is needed');
  // As tally verify-evidence reads it: text that is not JSON is no pack (checkPaymentEvidence names it evidence_malformed).
  let pack: { checkpoint?: unknown } | null | undefined;
  try {
    pack = JSON.parse(packText) as { checkpoint?: unknown } | null;
  } catch {
    pack = undefined;
  }
  let witnessed;
  if (policyText !== undefined && typeof pack === 'object' && pack !== null && typeof pack.checkpoint === 'string') {
    // The witnesses cosign the day's sealed checkpoint the pack's receipts are under.
    const w = await checkWitnesses(pack.checkpoint, keys, policyText);
    if ('state' in w) return refuse('witnesses', w.code, w.message);
    witnessed = w;
  }
  const opened = new Map<string, Promise<OpenSessionCheckpointResult>>();
  const open = (signed: string): Promise<OpenSessionCheckpointResult> => {
    let r = opened.get(signed);
    if (r === undefined) opened.set(signed, (r = openNoteWebCrypto(signed, keys).then((n) => sessionCheckpointFromNote(n, signed))));
    return r;
  };
  const r = await checkPaymentEvidence(pack, open);
  if (!r.ok) return refuse('pack', r.code, r.message);
  const p = r.payment;
  return {
    state: 'verified',
    session: r.session,
    size: r.checkpoint.size,
    root: r.checkpoint.root,
    principal: r.principal,
    paymentHash: p.payment_hash ?? '',
    ruling: p.admitted ? `admitted as ticket ${p.ticket}: ${p.value} atomic units of ${p.asset} on ${p.network}, from ${p.payer} to ${p.pay_to}` : `refused: ${p.code}`,
    rederived: r.rederived,
    settlements: r.settlements.map((s) => (s.ok ? `${s.state}${s.transaction === undefined ? '' : ` (${s.transaction})`}` : `rejected: ${s.code}`)),
    final: r.state ?? 'none (refused before money could move)',
    ...(r.transaction === undefined ? {} : { transaction: r.transaction }),
    reasons: [...r.reasons],
    ...(witnessed === undefined ? {} : { witnessed }),
  };
}

/**
 * Retrieval by AP2 `transaction_id` (AP2: "an automated method to retrieve
 * the Checkout Mandate … using the Payment Mandate transaction_id as the key"):
 * every turn of every session of a store whose AP2 ruling names the id, with
 * the genesis (the open mandate, verbatim), the frame the turn answered and
 * the turn itself as their exact entry bytes, and an offline check that
 * re-verifies the pack from those bytes alone.
 */
import { fromBase64, parseEntry, type CanonicalObject } from '../protocol/index.js';
import type { TranscriptStore } from '../store/index.js';
import { refuse, type MandateResult } from './codes.js';
import { hexSha256 } from './digest.js';
import { runDisputeSteps } from './dispute.js';
import { readTurn } from './ruler.js';

/** One transaction's evidence: exact entry bytes, and where they sit. */
export interface Ap2Evidence {
  readonly transactionId: string;
  readonly sessionId: string;
  /** Index of the turn in its session. */
  readonly index: number;
  readonly genesis: Uint8Array;
  readonly frame: Uint8Array;
  readonly turn: Uint8Array;
}

const leaf = (b: Uint8Array): string => {
  const pre = new Uint8Array(b.length + 1);
  pre.set(b, 1);
  return hexSha256(pre);
};
/** JSON of a pack's bytes, or undefined: a pack is untrusted input, refused (never thrown) when it is not JSON. */
const jsonOf = (b: Uint8Array): unknown => {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(b));
  } catch {
    return undefined;
  }
};
const entryOf = (b: Uint8Array) => {
  const r = parseEntry(jsonOf(b));
  return r.ok ? r.entry : undefined;
};
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every turn in the store whose AP2 ruling names `transactionId` (admitted or refused), oldest session first. */
export async function findAp2Transaction(store: TranscriptStore, transactionId: string): Promise<Ap2Evidence[]> {
  const out: Ap2Evidence[] = [];
  for (const sessionId of await store.listSessions()) {
    const head = await store.loadHead(sessionId);
    if (!head) continue;
    const [g] = await store.readRange(sessionId, 0, 1);
    const ge = g ? entryOf(g.bytes) : undefined;
    if (!g || ge?.kind !== 'genesis' || ge.spec['ap2'] === undefined) continue;
    for (let from = 1; from < head.size; from += 256) {
      const rows = await store.readRange(sessionId, from - 1, Math.min(head.size, from + 256));
      for (let i = 1; i < rows.length; i++) {
        const e = entryOf(rows[i]!.bytes);
        const a = e?.kind === 'turn' ? e.ruling?.['ap2'] : undefined;
        if (isObject(a) && a['transaction_id'] === transactionId) {
          out.push({ transactionId, sessionId, index: rows[i]!.index, genesis: g.bytes, frame: rows[i - 1]!.bytes, turn: rows[i]!.bytes });
        }
      }
    }
  }
  return out;
}

/** What an evidence pack shows once re-verified. */
export interface Ap2EvidenceCheck {
  readonly admitted: boolean;
  /** The recorded ruling, as written in the turn. */
  readonly ruling: CanonicalObject;
  /** The closed payment mandate's amount and currency. */
  readonly amount: number;
  readonly currency: string;
}

/**
 * Re-verifies a pack offline: the genesis hashes to the session id, the frame
 * and turn belong to it and chain (turn.parent = hash of the frame, same
 * ordinal), the open mandate verifies at the frame's time, the closed payment
 * mandate verifies against it with `transaction_id` = SHA-256 of the turn's
 * checkout JWT = the id asked for. The budget history is not re-derived here
 * (it spans sessions: replay the days for that).
 */
export async function checkAp2Evidence(e: Ap2Evidence): Promise<MandateResult<Ap2EvidenceCheck>> {
  const bad = (m: string) => refuse('evidence-malformed', `evidence: ${m}`);
  const g = entryOf(e.genesis), f = entryOf(e.frame), t = entryOf(e.turn);
  if (g?.kind !== 'genesis' || leaf(e.genesis) !== e.sessionId) return bad('the genesis does not hash to the session id');
  if (f?.kind !== 'frame' || t?.kind !== 'turn' || f.session !== e.sessionId || t.session !== e.sessionId) return bad('the frame and turn are not of this session');
  if (t.parent !== leaf(e.frame) || t.ordinal !== f.ordinal || t.body.kind !== 'authored') return bad('the turn does not answer this frame with an authored body');
  const purchase = t.body.kind === 'authored' ? readTurn(fromBase64(t.body.bytes) ?? new Uint8Array()) : undefined;
  if (!purchase) return bad('the turn body is not an AP2 purchase');
  // Steps 1, 2 and 4 of AP2's dispute verification (dispute.ts); receipts are the pack's business (pack.ts).
  const d = await runDisputeSteps({ spec: g.spec, frameTime: f.time, transactionId: e.transactionId, purchase, receipts: [] });
  const failed = d.steps.find((x) => x.outcome === 'fail' && x.name !== 'checkout-receipt' && x.name !== 'payment-receipt');
  if (failed) return refuse(failed.code!, `evidence: step ${failed.step} ${failed.name}: ${failed.detail}`);
  const ruling = t.ruling ?? {};
  const a = ruling['ap2'];
  return { ok: true, value: { admitted: isObject(a) && a['admitted'] === true, ruling, amount: d.amount!, currency: d.currency! } };
}

/**
 * What the wire returns beyond the engine's own results: the signed
 * checkpoint and verifier key a server with an engine key adds, and a typed
 * view of a referee ruling (instead of a bare canonical object).
 */
import type { CanonicalObject } from '../protocol/index.js';
import type { RefereeRuling } from '../referee/index.js';
import type { FinalizeResult, Receipt, TurnResult } from '../session/index.js';

/** What a server with an engine key (`tally serve --key`) adds to a seal or a receipt. */
export interface SignedParts {
  /** C2SP signed note over all `size` entries (docs/PROTOCOL.md §11.3). */
  readonly signedCheckpoint?: string;
  /** The engine's verifier key `name+keyid+base64` (pin the one you got out of band). */
  readonly verifierKey?: string;
}

/** `session/finalize` as the wire answers it. */
export type ClientFinalizeResult = (Extract<FinalizeResult, { ok: true }> & SignedParts) | Extract<FinalizeResult, { ok: false }>;

/** `GET /sessions/:id/receipt` as the wire answers it. */
export type ClientReceipt = Receipt & SignedParts;

/** A ruling's typed view: intent, policy, quota, verdict (with its panel), ticket, transitions. */
export type RulingView = RefereeRuling;

const RULING_MEMBERS: ReadonlySet<string> = new Set(['intent', 'policy', 'verdict', 'ticket', 'transitions', 'quota']);

/**
 * The typed view of a turn's ruling, or undefined when the turn has none or
 * its ruling is not a referee/intent ruling (a member this version does not know).
 *
 * @example
 * const r = await client.turn(input);
 * if (r.ok) console.log(rulingView(r)?.verdict?.panel);
 */
export function rulingView(turn: Extract<TurnResult, { ok: true }> | { readonly ruling?: CanonicalObject }): RulingView | undefined {
  const ruling = turn.ruling;
  if (ruling === undefined || typeof ruling !== 'object' || ruling === null || Array.isArray(ruling)) return undefined;
  if (!Object.keys(ruling).every((k) => RULING_MEMBERS.has(k))) return undefined;
  return ruling as unknown as RulingView;
}

/**
 * The idempotency and fail-closed primitives: {@link reconcileTurn} (the
 * seed's ladder), {@link reconcileFrame} and the {@link phaseGate}. All pure:
 * hashes arrive already computed BY THE ENGINE from the received bytes;
 * hashes a caller declared are only compared against them.
 */
import { isDigestHex } from './hex.js';
import type { FailureClass, SessionDiagnostic, SessionPhase } from './vocabulary.js';

/** A turn as the engine sees it, with every hash recomputed from its bytes. */
export interface TurnClaim {
  readonly sessionId: string;
  readonly ordinal: number;
  readonly parentHash: string;
  readonly frameRoot: string;
  readonly body: { readonly kind: 'authored'; readonly authoredHash: string } | { readonly kind: 'stand-down'; readonly failureClass: FailureClass };
  /** Engine-computed turn-claim hash (the content address of the submission). */
  readonly claimHash: string;
  /** Hashes the caller declared, if any; a disagreement is `malformed-entry`. */
  readonly declared?: { readonly claimHash?: string; readonly authoredHash?: string };
}

/**
 * What is at the slot a turn names: a recorded turn (with its claim and entry
 * hash) or the open slot the session expects to be answered next.
 */
export type SlotPrior =
  | { readonly state: 'recorded'; readonly sessionId: string; readonly ordinal: number; readonly parentHash: string; readonly frameRoot: string; readonly claimHash: string; readonly entryHash: string }
  | { readonly state: 'open'; readonly sessionId: string; readonly ordinal: number; readonly parentHash: string; readonly frameRoot: string };

/** Outcome of {@link reconcileTurn}. */
export type ReconcileResult =
  | { readonly ok: true; readonly duplicate: true; readonly entryHash: string }
  | { readonly ok: true; readonly duplicate: false }
  | { readonly ok: false; readonly diagnostic: SessionDiagnostic };

/**
 * Reconciles an incoming turn against what is at its slot. The ladder, most
 * specific first:
 * 1. unreadable, or a declared hash disagrees with the recomputed one → `malformed-entry`
 * 2. names another session → `wrong-session`
 * 3. does not continue the chain (ordinal or parent differ) → `broken-chain`
 * 4. answers another frame than the slot's → `stale-frame`
 * 5. slot recorded with the SAME claim hash → idempotent duplicate (ok)
 * 6. slot recorded with other bytes → `turn-conflict`
 * An open slot that passes 1–4 is admissible (`duplicate: false`).
 */
export function reconcileTurn(prior: SlotPrior, incoming: TurnClaim): ReconcileResult {
  if (
    !isDigestHex(incoming.claimHash) ||
    (incoming.body.kind === 'authored' && !isDigestHex(incoming.body.authoredHash)) ||
    (incoming.declared?.claimHash !== undefined && incoming.declared.claimHash !== incoming.claimHash) ||
    (incoming.declared?.authoredHash !== undefined &&
      (incoming.body.kind !== 'authored' || incoming.declared.authoredHash !== incoming.body.authoredHash))
  ) {
    return { ok: false, diagnostic: 'malformed-entry' };
  }
  if (incoming.sessionId !== prior.sessionId) return { ok: false, diagnostic: 'wrong-session' };
  if (incoming.ordinal !== prior.ordinal || incoming.parentHash !== prior.parentHash) return { ok: false, diagnostic: 'broken-chain' };
  if (incoming.frameRoot !== prior.frameRoot) return { ok: false, diagnostic: 'stale-frame' };
  if (prior.state === 'open') return { ok: true, duplicate: false };
  if (incoming.claimHash === prior.claimHash) return { ok: true, duplicate: true, entryHash: prior.entryHash };
  return { ok: false, diagnostic: 'turn-conflict' };
}

/** A frame as the engine sees it. */
export interface FrameClaim {
  readonly sessionId: string;
  readonly ordinal: number;
  /** Parent the runtime expects, if it sent one. */
  readonly parentHash?: string;
  readonly frameRoot: string;
}

/** What is at a frame's slot. */
export type FrameSlotPrior =
  | { readonly state: 'recorded'; readonly sessionId: string; readonly ordinal: number; readonly parentHash: string; readonly frameRoot: string; readonly entryHash: string }
  | { readonly state: 'open'; readonly sessionId: string; readonly ordinal: number; readonly parentHash: string };

/**
 * Reconciles a frame against its slot with the same ladder as turns: another
 * session → `wrong-session`; another ordinal or parent → `broken-chain`; a
 * recorded slot with the same frame root → duplicate; with another → `turn-conflict`.
 */
export function reconcileFrame(prior: FrameSlotPrior, incoming: FrameClaim): ReconcileResult {
  if (!isDigestHex(incoming.frameRoot) || (incoming.parentHash !== undefined && !isDigestHex(incoming.parentHash))) {
    return { ok: false, diagnostic: 'malformed-entry' };
  }
  if (incoming.sessionId !== prior.sessionId) return { ok: false, diagnostic: 'wrong-session' };
  if (incoming.ordinal !== prior.ordinal || (incoming.parentHash !== undefined && incoming.parentHash !== prior.parentHash)) {
    return { ok: false, diagnostic: 'broken-chain' };
  }
  if (prior.state === 'open') return { ok: true, duplicate: false };
  if (incoming.frameRoot === prior.frameRoot) return { ok: true, duplicate: true, entryHash: prior.entryHash };
  return { ok: false, diagnostic: 'turn-conflict' };
}

/** The verbs that write. */
export type WriteVerb = 'frame' | 'turn' | 'finalize';

/**
 * The phase gate, applied after a retry of recorded content has been
 * recognised: a sealed session takes nothing new (`sealed`); a turn needs a
 * pending frame, and a frame or a seal need none (`not-pending`).
 */
export function phaseGate(phase: SessionPhase, verb: WriteVerb): SessionDiagnostic | undefined {
  if (phase === 'sealed') return 'sealed';
  if (verb === 'turn') return phase === 'pending' ? undefined : 'not-pending';
  return phase === 'pending' ? 'not-pending' : undefined;
}

/**
 * How an exception or a notary's refusal becomes a failure of the wire
 * vocabulary (vocabulary.ts): the one mapping the HTTP and MCP transports
 * share through `WireService`.
 */
import { TallyError, isMember } from '../protocol/index.js';
import { SIGN_REFUSAL_CODES, TIMELINE_CHANGED_CODE, type NotaryRejection } from '../receipt/index.js';
import { ContentionError } from '../session/index.js';
import { WITNESS_CONFLICT_CODE } from '../witness/conflict.js';
import type { WireFailure } from './vocabulary.js';

/** Store failures a retry can outlive (the database is down, busy, or this process is closing it). */
const TRANSIENT_STORE_CODES = ['TALLY_STORE_IO', 'TALLY_STORE_BUSY', 'TALLY_STORE_CLOSED', 'TALLY_SIGN_CONTENDED'];

/**
 * The wire failure of an exception from the engine, the store or the signing
 * log: `unavailable` for what a retry can outlive (contention, a store that is
 * down, busy or closing, a failed intent lookup over such a store), else
 * `internal` (the exception itself goes to the log, never to the caller) —
 * marked `retryable: false` when a retry gets the same answer: the store is
 * corrupt (`TALLY_STORE_CORRUPT`), the signing log refuses
 * (`TALLY_SIGN_EQUIVOCATION`, `TALLY_SIGN_INCONSISTENT`), a witness holds a
 * history the store lost (`TALLY_SIGN_WITNESS_CONFLICT`), the store failed
 * over and cannot be shown to hold what was signed (`TALLY_SIGN_TIMELINE_CHANGED`), or the store keeps
 * no signing log (`TALLY_SIGN_NO_LOG`).
 */
export function failureOfException(e: unknown): WireFailure {
  if (e instanceof ContentionError) return { type: 'unavailable', message: 'the session is too contended right now; retry' };
  // An intent seam (the nonce lookup, the signer lookup) reads the store or a registry: a failure there is
  // a failed lookup, not a verdict, so it is as transient as the store — unless what failed underneath is not.
  if (e instanceof TallyError && e.code === 'TALLY_INTENT_SEAM_FAILED') {
    const inner = e.cause instanceof TallyError ? failureOfException(e.cause) : undefined;
    return inner?.type === 'internal' ? inner : { type: 'unavailable', message: `a lookup the intent ruling needs failed (${e.cause instanceof TallyError ? e.cause.code : 'TALLY_INTENT_SEAM_FAILED'}); retry` };
  }
  if (e instanceof TallyError && TRANSIENT_STORE_CODES.includes(e.code)) return { type: 'unavailable', message: `the store is unavailable (${e.code}); retry` };
  // A corrupt store answers the same however often it is asked: an operator must repair it (not retryable).
  if (e instanceof TallyError && e.code === 'TALLY_STORE_CORRUPT') return { type: 'internal', message: `store error (${e.code})`, retryable: false };
  if (e instanceof TallyError && e.code.startsWith('TALLY_STORE')) return { type: 'internal', message: `store error (${e.code})` };
  // The signing log refused (SigningRefusedError): the store no longer holds the history the key signed.
  // It refuses the same however often it is asked, like a corrupt store (not retryable).
  if (e instanceof TallyError && isMember(SIGN_REFUSAL_CODES, e.code)) {
    return { type: 'internal', message: `the engine refuses to sign (${e.code}): its store no longer holds the history it signed`, retryable: false };
  }
  // The store failed over or was replaced and cannot be shown to hold what the key signed: the same until an operator acknowledges.
  if (e instanceof TallyError && e.code === TIMELINE_CHANGED_CODE) {
    return { type: 'internal', message: `the engine refuses to sign (${e.code}): its store is on another database or timeline than the history it signed; an operator must acknowledge it`, retryable: false };
  }
  // A witness cosigned a history the store no longer holds (rolled back, failed over): the same until an operator acts.
  if (e instanceof TallyError && e.code === WITNESS_CONFLICT_CODE) {
    return { type: 'internal', message: `the engine refuses to sign (${e.code}): a witness cosigned a history its store no longer holds`, retryable: false };
  }
  // The store keeps no signing log at all: nothing will be signed until the server runs on one that does.
  if (e instanceof TallyError && e.code === 'TALLY_SIGN_NO_LOG') return { type: 'internal', message: `the engine cannot sign (${e.code}): its store keeps no signing log`, retryable: false };
  if (e instanceof TallyError && e.code.startsWith('TALLY_SIGN_')) return { type: 'internal', message: `the engine could not sign (${e.code})` };
  return { type: 'internal', message: 'internal error' };
}

/** The wire failure of a notary's refusal: `wrong-session` for an unknown session, else `not-found`. */
export function notaryFailure(r: NotaryRejection): WireFailure {
  return r.code === 'unknown-session' ? { type: 'wrong-session', message: r.message } : { type: 'not-found', message: r.message };
}

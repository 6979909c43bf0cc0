/**
 * A day's log binding under a witness policy (docs/PROTOCOL.md §15.5 step
 * 8), with the note opener and digest passed in: the binding must verify by
 * the one rule `verifyLogBindingWith`, then its log checkpoint must carry
 * the quorum of valid cosignatures — what witnesses cosign is the engine
 * log. Node (`verifyWitnessedLogBinding`, verify.ts) and the page (under a
 * log identity) run this one composition. Browser-safe.
 */
import { verifyLogBindingWith, type VerifyLogBindingResult, type VerifyLogBindingWithOptions } from '../../log/binding-rule.js';
import type { NoteVerifier } from '../../receipt/note/types.js';
import { checkWitnessPolicy, type CheckWitnessPolicyResult } from './check.js';
import type { WitnessPolicy } from './types.js';

/** A witness-policy refusal, as a verifier stage. */
export type WitnessStageFailure = Exclude<CheckWitnessPolicyResult, { ok: true }> & { readonly stage: 'witnesses' };

/** A log verifier the quorum rule reads (its public key, when it has one, keeps the log's own signature from counting as a witness's). */
export type LogVerifier = NoteVerifier & { readonly publicKey?: Uint8Array };

/** Outcome of {@link verifyWitnessedLogBindingWith}. */
export type WitnessedLogBindingResult = (VerifyLogBindingResult & { readonly ok: false }) | WitnessStageFailure | (VerifyLogBindingResult & { readonly ok: true; readonly cosignedBy: readonly string[] });

/**
 * Checks `text` by §15.5 (`open`, `digest`), then the quorum of `policy` on
 * its log checkpoint (cosignatures besides the `logVerifiers`' own). Never
 * throws on input.
 *
 * @example
 * const r = verifyWitnessedLogBindingWith(text, { open: (n) => openPinnedNote(n, [logKey]), digest, logVerifiers: [logKey], checkpoint, policy });
 */
export function verifyWitnessedLogBindingWith(text: string, options: VerifyLogBindingWithOptions & { readonly logVerifiers: readonly LogVerifier[]; readonly policy: WitnessPolicy }): WitnessedLogBindingResult {
  const { logVerifiers, policy, ...rest } = options;
  const r = verifyLogBindingWith(text, rest);
  if (!r.ok) return r;
  const w = checkWitnessPolicy(r.signedCheckpoint, logVerifiers, policy);
  return w.ok ? { ...r, cosignedBy: w.signed } : { ...w, stage: 'witnesses' };
}

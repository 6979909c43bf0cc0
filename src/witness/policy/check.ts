import { bytesEqual } from '../../protocol/hex.js';
import type { NoteVerifier, OpenNoteCode } from '../../receipt/note/types.js';
import { verifyCosignaturesPinned, type VerifiedCosignature } from '../cosignature/verify-pinned.js';
import type { QuorumRule, WitnessPolicy } from './types.js';

/** Outcome of {@link checkWitnessPolicy}. */
export type CheckWitnessPolicyResult =
  | { readonly ok: true; readonly signed: readonly string[]; readonly missing: readonly string[]; readonly cosignatures: readonly VerifiedCosignature[] }
  | { readonly ok: false; readonly code: 'below-quorum'; readonly signed: readonly string[]; readonly missing: readonly string[]; readonly message: string }
  | { readonly ok: false; readonly code: 'log-key-not-in-policy'; readonly message: string }
  | { readonly ok: false; readonly code: OpenNoteCode; readonly message: string };

function satisfied(rule: QuorumRule, signed: ReadonlySet<string>): boolean {
  if (rule.kind === 'none') return true;
  if (rule.kind === 'witness') return signed.has(rule.name);
  return rule.members.filter((m) => satisfied(m, signed)).length >= rule.threshold;
}


/**
 * What a grader checks before trusting a checkpoint against split views, in
 * this order: (1) the note opens with the pinned log keys and the policy's
 * witness keys together (signed-note rules: a line by a pinned name and key ID
 * MUST verify — a bad cosignature by a pinned witness rejects the note —
 * unknown lines are ignored, at least one pinned signature); (2) if the
 * policy lists `log` keys, a log key that signed is among them; (3) the
 * witnesses whose cosignatures verified satisfy the quorum. A refusal names
 * the witnesses that signed and those that did not.
 *
 * @example
 * const r = checkWitnessPolicy(signedCheckpoint, [engineVkey], policy);
 * if (!r.ok && r.code === 'below-quorum') console.error(r.signed, r.missing);
 */
export function checkWitnessPolicy(signedCheckpoint: string, logVerifiers: readonly (NoteVerifier & { readonly publicKey?: Uint8Array })[], policy: WitnessPolicy): CheckWitnessPolicyResult {
  const r = verifyCosignaturesPinned(
    signedCheckpoint,
    logVerifiers,
    policy.witnesses.map((w) => w.verifier),
  );
  if (!r.ok) return r;
  if (policy.logKeys.length > 0) {
    const listed = logVerifiers.some((v) => v.publicKey !== undefined && policy.logKeys.some((k) => bytesEqual(k, v.publicKey!)));
    if (!listed) return { ok: false, code: 'log-key-not-in-policy', message: 'none of the pinned log keys is a log key of the policy' };
  }
  const signedSet = new Set(r.cosignatures.map((c) => c.name));
  const signed = policy.witnesses.filter((w) => signedSet.has(w.name)).map((w) => w.name);
  const missing = policy.witnesses.filter((w) => !signedSet.has(w.name)).map((w) => w.name);
  if (!satisfied(policy.quorum, signedSet)) {
    return {
      ok: false,
      code: 'below-quorum',
      signed,
      missing,
      message: `witness quorum not met: cosigned by ${signed.length === 0 ? 'no witness' : signed.join(', ')}; not cosigned by ${missing.length === 0 ? 'none' : missing.join(', ')}`,
    };
  }
  return { ok: true, signed, missing, cosignatures: r.cosignatures };
}

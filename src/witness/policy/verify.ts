import type { NoteVerifier } from '../../receipt/note/types.js';
import { parseTlogProof } from '../../receipt/checkpoint/tlogProof.js';
import { verifyBundleCheckpoint, type BundleChunks, type StreamOptions, type VerifyBundleCheckpointResult } from '../../receipt/proof/bundle.js';
import { verifyTurnReceipt, type VerifyTurnReceiptOptions, type VerifyTurnReceiptResult } from '../../receipt/proof/turn-receipt.js';
import { verifyLogBinding, type VerifyLogBindingOptions, type VerifyLogBindingResult } from '../../log/binding.js';
import { checkWitnessPolicy, type CheckWitnessPolicyResult } from './check.js';
import type { WitnessPolicy } from './types.js';

/** A witness-policy refusal, as a verifier stage. */
export type WitnessStageFailure = Exclude<CheckWitnessPolicyResult, { ok: true }> & { readonly stage: 'witnesses' };

type LogVerifier = NoteVerifier & { readonly publicKey?: Uint8Array };

/**
 * `verifyTurnReceipt` under a witness policy: the receipt must verify (engine
 * signature, entry bytes, inclusion, pin), then its checkpoint must carry a
 * quorum of valid cosignatures (see `checkWitnessPolicy`).
 *
 * @example
 * const r = verifyWitnessedTurnReceipt(text, { verifiers: [engine], policy });
 */
export function verifyWitnessedTurnReceipt(
  text: string,
  options: Omit<VerifyTurnReceiptOptions, 'verifiers'> & { readonly verifiers: readonly LogVerifier[]; readonly policy: WitnessPolicy },
): VerifyTurnReceiptResult | WitnessStageFailure {
  const r = verifyTurnReceipt(text, options);
  if (!r.ok) return r;
  const parsed = parseTlogProof(text);
  if (!parsed.ok) return { ok: false, stage: 'witnesses', code: 'malformed-note', message: parsed.message };
  const w = checkWitnessPolicy(parsed.tlogProof.signedCheckpoint, options.verifiers, options.policy);
  return w.ok ? r : { ...w, stage: 'witnesses' };
}

/**
 * `verifyBundleCheckpoint` under a witness policy: the cosignature quorum is
 * checked first (cheap), then the bundle is streamed against the checkpoint.
 *
 * @example
 * const r = await verifyWitnessedBundleCheckpoint(bundleFileChunks(path), { signedCheckpoint, verifiers: [engine], policy });
 */
export async function verifyWitnessedBundleCheckpoint(
  chunks: BundleChunks,
  options: StreamOptions & { readonly signedCheckpoint: string; readonly verifiers: readonly LogVerifier[]; readonly policy: WitnessPolicy },
): Promise<VerifyBundleCheckpointResult | WitnessStageFailure> {
  const w = checkWitnessPolicy(options.signedCheckpoint, options.verifiers, options.policy);
  if (!w.ok) return { ...w, stage: 'witnesses' };
  return verifyBundleCheckpoint(chunks, options);
}

/**
 * `verifyLogBinding` under a witness policy (docs/PROTOCOL.md §15.5 step 8):
 * the binding must verify, then its log checkpoint must carry the quorum of
 * valid cosignatures — what witnesses cosign is the engine log.
 *
 * @example
 * const r = verifyWitnessedLogBinding(text, { logVerifiers: [logVkey], checkpoint, policy });
 */
export function verifyWitnessedLogBinding(
  text: string,
  options: Omit<VerifyLogBindingOptions, 'logVerifiers'> & { readonly logVerifiers: readonly LogVerifier[]; readonly policy: WitnessPolicy },
): (VerifyLogBindingResult & { readonly ok: false }) | WitnessStageFailure | (VerifyLogBindingResult & { readonly ok: true; readonly cosignedBy: readonly string[] }) {
  const r = verifyLogBinding(text, options);
  if (!r.ok) return r;
  const w = checkWitnessPolicy(r.signedCheckpoint, options.logVerifiers, options.policy);
  return w.ok ? { ...r, cosignedBy: w.signed } : { ...w, stage: 'witnesses' };
}

import { parseTlogProof } from '../../receipt/checkpoint/tlogProof.js';
import { verifyBundleCheckpoint, type BundleChunks, type StreamOptions, type VerifyBundleCheckpointResult } from '../../receipt/proof/bundle.js';
import { verifyTurnReceipt, type VerifyTurnReceiptOptions, type VerifyTurnReceiptResult } from '../../receipt/proof/turn-receipt.js';
import type { VerifyLogBindingOptions } from '../../log/binding.js';
import { openNote } from '../../receipt/note/open.js';
import { sha256 } from '../../codec/sha256.js';
import { checkWitnessPolicy } from './check.js';
import { verifyWitnessedLogBindingWith, type LogVerifier, type WitnessedLogBindingResult, type WitnessStageFailure } from './log-binding.js';
import type { WitnessPolicy } from './types.js';

export type { WitnessStageFailure } from './log-binding.js';

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
 * valid cosignatures — what witnesses cosign is the engine log. The one
 * composition {@link verifyWitnessedLogBindingWith} (log-binding.ts), with
 * node's Ed25519 and SHA-256.
 *
 * @example
 * const r = verifyWitnessedLogBinding(text, { logVerifiers: [logVkey], checkpoint, policy });
 */
export function verifyWitnessedLogBinding(
  text: string,
  options: Omit<VerifyLogBindingOptions, 'logVerifiers'> & { readonly logVerifiers: readonly LogVerifier[]; readonly policy: WitnessPolicy },
): WitnessedLogBindingResult {
  const { logVerifiers } = options;
  return verifyWitnessedLogBindingWith(text, { ...options, digest: sha256, open: (note) => openNote(note, logVerifiers) });
}

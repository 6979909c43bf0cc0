/**
 * Which cosigners' cosignatures verify on a signed note, by the one signed-
 * note rule (`openPinnedNote`) with verifiers already bound to their keys: no
 * platform here (node:crypto in the CLI, WebCrypto answers in the audit page).
 */
import { decodeBase64Strict } from '../../receipt/note/base64.js';
import { formatKeyId } from '../../receipt/note/layout.js';
import { openPinnedNote } from '../../receipt/note/open-pinned.js';
import type { NoteSignature, NoteVerifier, OpenNoteCode } from '../../receipt/note/types.js';
import type { CosignerVerifier } from './verifier.js';

const encoder = new TextEncoder();

/** One verified cosignature. */
export interface VerifiedCosignature {
  /** The cosigner's vkey. */
  readonly verifierKey: string;
  readonly name: string;
  /** `name+hex8`. */
  readonly id: string;
  /** POSIX seconds the cosigner signed at. */
  readonly time: number;
}

/** Outcome of {@link verifyCosignaturesPinned} (and `verifyCosignatures`). */
export type VerifyCosignaturesResult =
  | { readonly ok: true; readonly text: string; readonly cosignatures: readonly VerifiedCosignature[] }
  | { readonly ok: false; readonly code: OpenNoteCode; readonly message: string };

/** The cosigners among a note's verified signatures, with their timestamps. */
export function cosignaturesOf(text: string, verified: readonly NoteSignature[], cosigners: readonly CosignerVerifier[]): VerifyCosignaturesResult {
  const message = encoder.encode(text);
  const cosignatures: VerifiedCosignature[] = [];
  for (const sig of verified) {
    const c = cosigners.find((v) => v.name === sig.name && v.keyId === sig.keyId);
    if (c === undefined) continue;
    const time = c.cosignatureTime(message, decodeBase64Strict(sig.base64)!.subarray(4));
    if (time === undefined) continue; // openPinnedNote verified it; unreachable
    cosignatures.push({ verifierKey: c.verifierKey, name: c.name, id: `${c.name}+${formatKeyId(c.keyId)}`, time });
  }
  return { ok: true, text, cosignatures };
}

/**
 * Opens a signed note with the log's verifiers and the cosigners' verifiers
 * together (signed-note rules) and returns the cosigners whose cosignature
 * verified, with their timestamps.
 *
 * @example
 * const r = verifyCosignaturesPinned(note, [engineVerifier], [w1.verifier, w2.verifier]);
 */
export function verifyCosignaturesPinned(signedNote: string, logVerifiers: readonly NoteVerifier[], cosigners: readonly CosignerVerifier[]): VerifyCosignaturesResult {
  const opened = openPinnedNote(signedNote, [...logVerifiers, ...cosigners]);
  return opened.ok ? cosignaturesOf(opened.text, opened.verified, cosigners) : opened;
}

import { decodeBase64Strict } from '../../receipt/note/base64.js';
import { SIGNATURE_LINE_PREFIX } from '../../receipt/note/layout.js';
import { isValidKeyName } from '../../receipt/note/name.js';
import { signNote } from '../../receipt/note/sign.js';
import { openNote } from '../../receipt/note/open.js';
import type { NoteVerifier } from '../../receipt/note/types.js';
import { chop } from '../../receipt/note/verifierKey.js';
import type { CosignerKey, CosignerVerifier } from './key.js';
import { cosignaturesOf, type VerifyCosignaturesResult } from './verify-pinned.js';
import { TallyError } from '../../protocol/errors.js';


/**
 * The cosignature line of `key` over a checkpoint note text (the body: every
 * line up to the blank line, ending in `\n`), at `time` (POSIX seconds):
 * `— <name> base64(keyID ‖ u64 time ‖ sig64)\n`. Rendered by the signed-note
 * layer's `signNote`, so the line is byte-for-byte a note signature line.
 *
 * @example
 * const line = cosignatureLine(opened.text, witnessKey, 1679315147);
 * const cosigned = addSignatureLines(signedCheckpoint, [line]);
 */
export function cosignatureLine(text: string, key: CosignerKey, time: number): string {
  const note = signNote(text, [{ name: key.name, keyId: key.keyId, sign: (message) => key.cosign(message, time) }]);
  return note.slice(text.length + 1);
}

/** True when `line` has the shape of one note signature line (`— name base64\n`, 5+ bytes, canonical base64). */
export function isSignatureLine(line: string): boolean {
  if (typeof line !== 'string' || !line.startsWith(SIGNATURE_LINE_PREFIX) || !line.endsWith('\n') || line.indexOf('\n') !== line.length - 1) return false;
  const [name, b64] = chop(line.slice(SIGNATURE_LINE_PREFIX.length, -1), ' ');
  const raw = decodeBase64Strict(b64);
  return isValidKeyName(name) && raw !== undefined && raw.length >= 5;
}

/** Splits a block of signature lines (a witness's 200 answer); `undefined` unless every line is a signature line. */
export function splitSignatureLines(block: string): string[] | undefined {
  if (typeof block !== 'string' || block === '' || !block.endsWith('\n')) return undefined;
  const lines = block.slice(0, -1).split('\n').map((l) => `${l}\n`);
  return lines.every(isSignatureLine) ? lines : undefined;
}

/**
 * Appends signature lines (cosignatures) to a signed note; a line the note
 * already carries is not repeated. The note's text and its existing lines are
 * kept byte for byte. Throws `TALLY_NOTE_SIGNATURE_LINE_INVALID` for a line
 * that is not one signature line, `TALLY_NOTE_TEXT_INVALID` for a note without
 * a signature block.
 *
 * @example
 * addSignatureLines(signedCheckpoint, ['— witness.example/w1 jWbP…\n'])
 */
export function addSignatureLines(signedNote: string, lines: readonly string[]): string {
  const split = typeof signedNote === 'string' ? signedNote.lastIndexOf('\n\n') : -1;
  if (split < 0 || !signedNote.endsWith('\n')) throw new TallyError('TALLY_NOTE_TEXT_INVALID', 'Not a signed note (no blank line before the signatures).');
  const have = new Set(signedNote.slice(split + 2, -1).split('\n').map((l) => `${l}\n`));
  let out = signedNote;
  for (const line of lines) {
    if (!isSignatureLine(line)) throw new TallyError('TALLY_NOTE_SIGNATURE_LINE_INVALID', 'Not a note signature line.', { details: JSON.stringify(String(line).slice(0, 80)) });
    if (have.has(line)) continue;
    have.add(line);
    out += line;
  }
  return out;
}

export type { VerifiedCosignature, VerifyCosignaturesResult } from './verify-pinned.js';

/**
 * Opens a signed note with the log's verifiers and the cosigners' verifiers
 * together (signed-note rules: a line by a pinned name and key ID must verify,
 * unknown lines are ignored, at least one pinned line must verify) and returns
 * the cosigners whose cosignature verified, with their timestamps. Log
 * verifiers may be vkey strings (parsed with node:crypto); with parsed ones
 * only, this is {@link verifyCosignaturesPinned}.
 *
 * @example
 * const r = verifyCosignatures(note, [engineVkey], [w1.verifier, w2.verifier]);
 * if (r.ok) r.cosignatures.map((c) => c.name);
 */
export function verifyCosignatures(signedNote: string, logVerifiers: readonly (NoteVerifier | string)[], cosigners: readonly CosignerVerifier[]): VerifyCosignaturesResult {
  const opened = openNote(signedNote, [...logVerifiers, ...cosigners]);
  return opened.ok ? cosignaturesOf(opened.text, opened.verified, cosigners) : opened;
}

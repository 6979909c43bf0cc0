import { openPinnedNote } from './open-pinned.js';
import type { NoteVerifier, OpenNoteResult } from './types.js';
import { chop, parseVerifierKey } from './verifierKey.js';

/**
 * Opens a signed note and checks its signatures against the pinned verifiers
 * by C2SP signed-note and Go's `sumdb/note.Open` rules ({@link openPinnedNote}
 * is the rule). Verifiers may be given parsed or as verifier key strings
 * (parsed first, with node:crypto Ed25519; a malformed one is
 * `malformed-verifier-key`). Never throws for note content; returns a result.
 *
 * @example
 * const r = openNote(note, ['PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW']);
 * if (r.ok) r.verified[0]?.name;  // 'PeterNeumann'
 */
export function openNote(note: string | Uint8Array, verifiers: readonly (NoteVerifier | string)[]): OpenNoteResult {
  const parsed: NoteVerifier[] = [];
  for (const v of verifiers) {
    if (typeof v !== 'string') {
      parsed.push(v);
      continue;
    }
    const r = parseVerifierKey(v);
    // Echo only the part before the first "+": a private key pasted here by mistake must not reach logs.
    if (!r.ok) return { ok: false, code: 'malformed-verifier-key', message: `verifier key ${JSON.stringify(chop(v, '+')[0])}+…: ${r.message}` };
    parsed.push(r.verifier);
  }
  return openPinnedNote(note, parsed);
}

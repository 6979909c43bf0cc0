import { encodeBase64 } from './base64.js';
import { MAX_SIGNATURES, formatKeyId, signatureLine, signatureLineBytes, signedMessage } from './layout.js';
import { hasLoneSurrogate, isValidKeyName } from './name.js';
import type { NoteSigner } from './types.js';
import { TallyError } from '../../protocol/errors.js';

// Control characters other than "\n" are forbidden anywhere in a signed note.
// eslint-disable-next-line no-control-regex
const FORBIDDEN_CONTROL = /[\u0000-\u0009\u000b-\u001f]/;

/**
 * Checks that `text` can be the text of a signed note that `openNote` will
 * accept: non-empty, ends in `\n`, well-formed Unicode, no control character
 * other than `\n`. Throws `TALLY_NOTE_TEXT_INVALID` otherwise.
 */
export function assertNoteText(text: string): void {
  if (typeof text !== 'string' || !text.endsWith('\n')) {
    throw new TallyError('TALLY_NOTE_TEXT_INVALID', 'A note text must end with a newline.');
  }
  if (FORBIDDEN_CONTROL.test(text)) {
    throw new TallyError('TALLY_NOTE_TEXT_INVALID', 'A note text must not contain control characters other than newline.');
  }
  if (hasLoneSurrogate(text)) {
    throw new TallyError('TALLY_NOTE_TEXT_INVALID', 'A note text must be well-formed Unicode (no lone surrogates).');
  }
}

/**
 * Signs `text` with every signer, in order, and returns the signed note:
 * `text ‖ "\n" ‖ ("— " name " " base64(keyID ‖ sig) "\n")*`. Each signer signs
 * the UTF-8 bytes of `text` exactly (the blank separator and the other
 * signatures are not signed). Throws `TALLY_NOTE_TEXT_INVALID` for a text
 * `openNote` would reject and `TALLY_NOTE_SIGNER_INVALID` for no signers, a bad
 * name, two signers with the same name and key ID, or more than 100 signers.
 *
 * @example
 * const key = generateEngineKey('tally.example/acme');
 * const note = signNote('hello\n', [key]);
 * // 'hello\n\n— tally.example/acme <base64>\n'
 */
export function signNote(text: string, signers: readonly NoteSigner[]): string {
  assertNoteText(text);
  if (!Array.isArray(signers) || signers.length === 0 || signers.length > MAX_SIGNATURES) {
    throw new TallyError('TALLY_NOTE_SIGNER_INVALID', `A note needs 1 to ${MAX_SIGNATURES} signers.`);
  }
  const message = signedMessage(text);
  const seen = new Set<string>();
  let lines = '';
  for (const signer of signers) {
    const { name, keyId } = signer;
    if (!isValidKeyName(name) || !Number.isInteger(keyId) || keyId < 0 || keyId > 0xffffffff) {
      throw new TallyError('TALLY_NOTE_SIGNER_INVALID', 'Signer has an invalid name or key ID.', { details: JSON.stringify(name) });
    }
    const id = `${name}+${formatKeyId(keyId)}`;
    if (seen.has(id)) throw new TallyError('TALLY_NOTE_SIGNER_INVALID', 'Two signers share a name and key ID.', { details: id });
    seen.add(id);
    const signature = signer.sign(message);
    if (!(signature instanceof Uint8Array) || signature.length === 0) {
      throw new TallyError('TALLY_NOTE_SIGNER_INVALID', 'Signer returned no signature.', { details: id });
    }
    lines += signatureLine(name, encodeBase64(signatureLineBytes(keyId, signature)));
  }
  return `${text}\n${lines}`;
}

/** C2SP signed notes: key IDs, verifier keys, signing and opening. */
export { OPEN_NOTE_CODES, VERIFIER_KEY_CODES } from './types.js';
export type {
  NoteSigner,
  NoteVerifier,
  NoteSignature,
  OpenNoteCode,
  OpenNoteResult,
  VerifierKeyCode,
  ParsedVerifierKey,
  ParseVerifierKeyResult,
} from './types.js';
export { keyId, formatVerifierKey, parseVerifierKey } from './verifierKey.js';
export { signNote, assertNoteText } from './sign.js';
export { openNote } from './open.js';
export { openPinnedNote } from './open-pinned.js';
export { decodeVerifierKey } from './verifier-key-text.js';
export type { DecodedVerifierKey, DecodeVerifierKeyResult } from './verifier-key-text.js';
export { isValidKeyName } from './name.js';
export { encodeBase64, decodeBase64Strict } from './base64.js';
export {
  ALG_ED25519,
  MAX_SIGNATURES,
  PRIVATE_KEY_PREFIX,
  SIGNATURE_LINE_PREFIX,
  formatKeyId,
} from './layout.js';

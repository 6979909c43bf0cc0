/**
 * The browser's cryptography for the audit page, passed into the pure rules:
 * SHA-256 as the protocol's synchronous `Digest` (the chain verifier calls it
 * once per entry and per tree node, synchronously, so WebCrypto's
 * promise-only `digest` cannot serve it; @noble/hashes does, in the worker),
 * and Ed25519 through WebCrypto for the signed checkpoint. WebCrypto's verify
 * is asynchronous while the one note rule (`openPinnedNote`) asks its
 * verifiers synchronously, so the note is opened twice: once to learn which
 * signatures the rule checks, then — after WebCrypto answered — again with
 * those answers. The rule asks the same questions in the same order both
 * times up to its first "no", so the second pass is exactly the rule's verdict.
 */
import { bytesEqual, type Digest } from '../../protocol/index.js';
import { ED25519_SIGNATURE_BYTES } from '../../receipt/note/layout.js';
import { openPinnedNote } from '../../receipt/note/open-pinned.js';
import type { NoteVerifier, OpenNoteResult } from '../../receipt/note/types.js';
import type { DecodedVerifierKey } from '../../receipt/note/verifier-key-text.js';
import { sha256 as nobleSha256 } from './sha256.js';

/** SHA-256 for the pure protocol layer. */
export const sha256: Digest = nobleSha256;

/** Ed25519 (RFC 8032) verification through WebCrypto; `false` for any refusal. */
export async function ed25519VerifyWebCrypto(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  if (signature.length !== ED25519_SIGNATURE_BYTES) return false;
  try {
    const key = await crypto.subtle.importKey('raw', new Uint8Array(publicKey), { name: 'Ed25519' }, false, ['verify']);
    return await crypto.subtle.verify({ name: 'Ed25519' }, key, new Uint8Array(signature), new Uint8Array(message));
  } catch {
    return false;
  }
}

interface Question {
  readonly key: DecodedVerifierKey;
  readonly message: Uint8Array;
  readonly signature: Uint8Array;
}

/** Opens a signed note against decoded verifier keys with WebCrypto Ed25519, by the one rule `openPinnedNote`. */
export async function openNoteWebCrypto(note: string, keys: readonly DecodedVerifierKey[]): Promise<OpenNoteResult> {
  const asked: Question[] = [];
  const recording: NoteVerifier[] = keys.map((key) => ({
    name: key.name,
    keyId: key.keyId,
    verify: (message, signature) => {
      asked.push({ key, message: message.slice(), signature: signature.slice() });
      return true;
    },
  }));
  openPinnedNote(note, recording);
  const answers = await Promise.all(asked.map((q) => ed25519VerifyWebCrypto(q.key.publicKey, q.message, q.signature)));
  let n = 0;
  const answering: NoteVerifier[] = keys.map((key) => ({
    name: key.name,
    keyId: key.keyId,
    verify: (message, signature) => {
      const q = asked[n];
      const a = answers[n++];
      return q !== undefined && q.key === key && bytesEqual(q.message, message) && bytesEqual(q.signature, signature) && a === true;
    },
  }));
  return openPinnedNote(note, answering);
}

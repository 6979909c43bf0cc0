/**
 * The browser's cryptography for the audit page, passed into the pure rules:
 * SHA-256 as the protocol's synchronous `Digest` (the chain verifier calls it
 * once per entry and per tree node, synchronously, so WebCrypto's
 * promise-only `digest` cannot serve it; WebAssembly (hash-wasm, with
 * @noble/hashes until it is compiled) does, in the worker: ./sha256.ts),
 * and Ed25519 through WebCrypto for signed checkpoints and witness
 * cosignatures. WebCrypto's verify is asynchronous while the one note rule
 * (`openPinnedNote`, and the witness rules built on it) asks synchronously,
 * so a rule runs under an {@link Ed25519Oracle}: every pass answers the
 * questions WebCrypto already answered truthfully and records new ones
 * (answering "yes" for now); once a pass asks nothing new, every answer it
 * got was WebCrypto's and its result is exactly the rule's verdict.
 */
import { toHex, type Digest } from '../../protocol/index.js';
import { ED25519_SIGNATURE_BYTES } from '../../receipt/note/layout.js';
import { openPinnedNote } from '../../receipt/note/open-pinned.js';
import type { OpenNoteResult } from '../../receipt/note/types.js';
import type { DecodedVerifierKey } from '../../receipt/note/verifier-key-text.js';
import { sha256 as pageSha256 } from './sha256.js';

/** SHA-256 for the pure protocol layer. */
export const sha256: Digest = pageSha256;

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
  readonly id: string;
  readonly publicKey: Uint8Array;
  readonly message: Uint8Array;
  readonly signature: Uint8Array;
}

/** Synchronous Ed25519 answers for the pure rules, from WebCrypto (see the module comment). */
export class Ed25519Oracle {
  private readonly answers = new Map<string, boolean>();
  private fresh: Question[] = [];

  /** A synchronous check bound to `publicKey`, for the rules' verifiers. */
  readonly bind = (publicKey: Uint8Array) => (message: Uint8Array, signature: Uint8Array): boolean => {
    const id = `${toHex(publicKey)}.${toHex(message)}.${toHex(signature)}`;
    const known = this.answers.get(id);
    if (known !== undefined) return known;
    this.fresh.push({ id, publicKey: publicKey.slice(), message: message.slice(), signature: signature.slice() });
    return true;
  };

  /** Runs `rule` until a pass asks no new question; that pass's result is exact. */
  async exact<T>(rule: () => T): Promise<T> {
    for (;;) {
      this.fresh = [];
      const result = rule();
      const asked = this.fresh;
      if (asked.length === 0) return result;
      const got = await Promise.all(asked.map((q) => ed25519VerifyWebCrypto(q.publicKey, q.message, q.signature)));
      asked.forEach((q, i) => this.answers.set(q.id, got[i]!));
    }
  }
}

/** Opens a signed note against decoded verifier keys with WebCrypto Ed25519, by the one rule `openPinnedNote`. */
export function openNoteWebCrypto(note: string, keys: readonly DecodedVerifierKey[], oracle = new Ed25519Oracle()): Promise<OpenNoteResult> {
  const verifiers = keys.map((key) => ({ name: key.name, keyId: key.keyId, verify: oracle.bind(key.publicKey) }));
  return oracle.exact(() => openPinnedNote(note, verifiers));
}

/** Something that can add its signature line to a note (an engine key, a witness key…). */
export interface NoteSigner {
  /** Key name written in the signature line; must satisfy `isValidKeyName`. */
  readonly name: string;
  /** 32-bit key ID written (big-endian) in front of the signature. */
  readonly keyId: number;
  /** Signs the exact note-text bytes; returns the raw signature (64 bytes for Ed25519). */
  sign(message: Uint8Array): Uint8Array;
}

/** A known (pinned) key that can check signatures made under `name` + `keyId`. */
export interface NoteVerifier {
  /** Key name the signature line must carry. */
  readonly name: string;
  /** Key ID the signature must start with. */
  readonly keyId: number;
  /** True when `signature` is a valid signature of `message` by this key. */
  verify(message: Uint8Array, signature: Uint8Array): boolean;
}

/** One signature line of a note, as written (verified or not). */
export interface NoteSignature {
  /** Key name from the signature line. */
  readonly name: string;
  /** Key ID: the first 4 bytes of the decoded signature, big-endian. */
  readonly keyId: number;
  /** The base64 text of the line (key ID ‖ signature), exactly as written. */
  readonly base64: string;
}

/** Every reason `openNote` can reject a note. Closed set; codes never change meaning. */
export const OPEN_NOTE_CODES = [
  /** Not a well-formed signed note (layout, UTF-8, control characters, bad signature line). */
  'malformed-note',
  /** More than `MAX_SIGNATURES` signature lines. */
  'too-many-signatures',
  /** A verifier key string given to `openNote` does not parse. */
  'malformed-verifier-key',
  /** Two pinned verifiers share the name and key ID a signature line uses. */
  'ambiguous-verifier',
  /** A signature by a pinned key (same name and key ID) does not verify. */
  'bad-signature',
  /** Well-formed, but no signature from any pinned key. */
  'no-pinned-signature',
] as const;

/** Why `openNote` rejected a note. */
export type OpenNoteCode = (typeof OPEN_NOTE_CODES)[number];

/** Outcome of `openNote`. */
export type OpenNoteResult =
  | {
      readonly ok: true;
      /** The note text: everything before the separating blank line, ending in `\n`. */
      readonly text: string;
      /** Signatures by pinned keys, all verified, in note order (duplicates dropped). */
      readonly verified: readonly NoteSignature[];
      /** Signatures by keys that are not pinned: ignored, kept for the record (identical lines dropped). */
      readonly unverified: readonly NoteSignature[];
    }
  | { readonly ok: false; readonly code: OpenNoteCode; readonly message: string };

/** Every reason `parseVerifierKey` can reject a verifier key string. */
export const VERIFIER_KEY_CODES = [
  /** Not `name+hex8+base64`, bad name, bad hex, bad base64 or wrong key length. */
  'malformed-verifier-key',
  /** The algorithm byte is not 0x01 (Ed25519). */
  'unknown-key-algorithm',
  /** The key ID does not match SHA-256(name ‖ 0x0A ‖ key)[0:4]. */
  'key-id-mismatch',
] as const;

/** Why `parseVerifierKey` rejected a key. */
export type VerifierKeyCode = (typeof VERIFIER_KEY_CODES)[number];

/** A parsed verifier key. */
export interface ParsedVerifierKey extends NoteVerifier {
  /** The 32-byte Ed25519 public key. */
  readonly publicKey: Uint8Array;
  /** The canonical `name+keyid+base64` string. */
  readonly verifierKey: string;
}

/** Outcome of `parseVerifierKey`. */
export type ParseVerifierKeyResult =
  | { readonly ok: true; readonly verifier: ParsedVerifierKey }
  | { readonly ok: false; readonly code: VerifierKeyCode; readonly message: string };

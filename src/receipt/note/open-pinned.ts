/**
 * THE rule that opens a C2SP signed note against pinned verifiers. Pure and
 * browser-safe: each verifier brings its own signature check (node:crypto on
 * the server, WebCrypto in the audit page). `openNote` in open.ts is the same
 * rule for verifier key strings.
 */
import { decodeBase64Strict } from './base64.js';
import { chop } from './verifier-key-text.js';
import { MAX_SIGNATURES, SIGNATURE_LINE_PREFIX, SIGNATURE_SEPARATOR, formatKeyId, signedMessage } from './layout.js';
import { hasLoneSurrogate, isValidKeyName } from './name.js';
import { pooledBytes } from '../pool.js';
import type { NoteSignature, NoteVerifier, OpenNoteCode, OpenNoteResult } from './types.js';

// eslint-disable-next-line no-control-regex
const FORBIDDEN_CONTROL = /[\u0000-\u0009\u000b-\u001f]/;
const utf8Fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Stands for "more than one pinned verifier has this name and key ID". */
const AMBIGUOUS: NoteVerifier = { name: '', keyId: -1, verify: () => false };

/** A pinned verifier and its key ID as an unsigned 32-bit number. */
interface Pinned {
  readonly verifier: NoteVerifier;
  readonly keyId: number;
}

/** The one pinned verifier of `keyId` among those of a name; {@link AMBIGUOUS} for several; `undefined` for none. */
function pinnedFor(named: readonly Pinned[] | undefined, keyId: number): NoteVerifier | undefined {
  if (named === undefined) return undefined;
  let found: NoteVerifier | undefined;
  for (const p of named) {
    if (p.keyId !== keyId) continue;
    if (found !== undefined) return AMBIGUOUS;
    found = p.verifier;
  }
  return found;
}

function fail(code: OpenNoteCode, message: string): OpenNoteResult {
  return { ok: false, code, message };
}

function decodeNote(note: string | Uint8Array): string | undefined {
  if (typeof note === 'string') return hasLoneSurrogate(note) ? undefined : note;
  if (!(note instanceof Uint8Array)) return undefined;
  try {
    return utf8Fatal.decode(note);
  } catch {
    return undefined;
  }
}

/**
 * Opens a signed note and checks its signatures against the pinned verifiers,
 * following C2SP signed-note and Go's `sumdb/note.Open` rule for rule:
 *
 * - the note must be valid UTF-8 with no control character but `\n`;
 * - the text is everything up to and including the first `\n` of the LAST
 *   `\n\n` in the note; every line after that blank line must be a signature
 *   line `— <name> <base64(keyID ‖ sig)>` and the note must end in `\n`
 *   (so a signature line placed before the blank line is just text, and a
 *   note without a signature after its last blank line is malformed);
 * - names must be valid key names; the base64 must be canonical and carry at
 *   least 5 bytes; at most 100 signature lines;
 * - a line whose name and key ID match no pinned verifier is ignored and kept
 *   in `unverified` (identical lines once); one that matches a pinned verifier
 *   MUST verify (`bad-signature` otherwise); repeats by one key count once;
 * - at least one pinned signature must verify (`no-pinned-signature`).
 *
 * Never throws for note content; returns a result.
 *
 * @example
 * const r = openPinnedNote(note, [verifier]);
 * if (r.ok) r.verified[0]?.name;  // 'PeterNeumann'
 */
export function openPinnedNote(note: string | Uint8Array, verifiers: readonly NoteVerifier[]): OpenNoteResult {
  // Pinned verifiers by name; a line's key ID then picks among them. (Name and
  // key ID compare as the id `name+hex8(keyId)` would: the hex is 8 digits.)
  const known = new Map<string, Pinned[]>();
  for (const verifier of verifiers) {
    const name = `${verifier.name}`;
    const pinned = { verifier, keyId: verifier.keyId >>> 0 };
    const list = known.get(name);
    if (list === undefined) known.set(name, [pinned]);
    else list.push(pinned);
  }

  const msg = decodeNote(note);
  if (msg === undefined) return fail('malformed-note', 'note is not well-formed UTF-8');
  if (FORBIDDEN_CONTROL.test(msg)) return fail('malformed-note', 'note contains a control character other than newline');

  const split = msg.lastIndexOf(SIGNATURE_SEPARATOR);
  if (split < 0) return fail('malformed-note', 'note has no blank line before its signatures');
  const text = msg.slice(0, split + 1);
  const sigStart = split + 2;
  if (sigStart >= msg.length || !msg.endsWith('\n')) return fail('malformed-note', 'note must end with signature lines, each ending in a newline');

  const message = signedMessage(text);
  const verified: NoteSignature[] = [];
  const unverified: NoteSignature[] = [];
  const seen = new Set<NoteVerifier>();
  const seenUnverified = new Set<string>();
  let count = 0;
  for (let pos = sigStart; pos < msg.length; ) {
    // The note ends in "\n", so indexOf always finds one.
    const nl = msg.indexOf('\n', pos);
    let line = msg.slice(pos, nl);
    pos = nl + 1;
    if (!line.startsWith(SIGNATURE_LINE_PREFIX)) return fail('malformed-note', 'a line after the blank line is not a signature line');
    line = line.slice(SIGNATURE_LINE_PREFIX.length);
    const [name, b64] = chop(line, ' ');
    const raw = decodeBase64Strict(b64, pooledBytes);
    if (raw === undefined || !isValidKeyName(name) || b64 === '' || raw.length < 5) {
      return fail('malformed-note', `malformed signature line for ${JSON.stringify(name)}`);
    }
    if (++count > MAX_SIGNATURES) return fail('too-many-signatures', `more than ${MAX_SIGNATURES} signature lines`);
    const keyId = ((raw[0]! << 24) | (raw[1]! << 16) | (raw[2]! << 8) | raw[3]!) >>> 0;
    const verifier = pinnedFor(known.get(name), keyId);
    if (verifier === undefined) {
      if (!seenUnverified.has(line)) {
        seenUnverified.add(line);
        unverified.push({ name, keyId, base64: b64 });
      }
      continue;
    }
    if (verifier === AMBIGUOUS) return fail('ambiguous-verifier', `more than one pinned verifier for ${name}+${formatKeyId(keyId)}`);
    if (seen.has(verifier)) continue;
    seen.add(verifier);
    if (!verifier.verify(message, raw.subarray(4))) return fail('bad-signature', `invalid signature for key ${name}+${formatKeyId(keyId)}`);
    verified.push({ name, keyId, base64: b64 });
  }
  if (verified.length === 0) {
    const names = unverified.map((s) => `${s.name}+${formatKeyId(s.keyId)}`).join(', ');
    return fail('no-pinned-signature', `note has no signature from a pinned key (signed by: ${names})`);
  }
  return { ok: true, text, verified, unverified };
}

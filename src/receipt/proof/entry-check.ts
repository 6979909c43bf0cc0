import { sha256 } from '../../codec/sha256.js';
import type { Entry } from '../../protocol/index.js';
import { AUTHORED_MESSAGES, authoredProblem, frameRootHex, inspectLine } from '../../protocol/chain.js';

/** Every reason {@link checkEntryBytes} rejects bytes (the entry-local rules of PROTOCOL.md §5 steps 1, 2 and 5). */
export const ENTRY_CHECK_CODES = ['too-large', 'not-utf8', 'not-json', 'not-canonical', 'bad-structure', 'bad-frame-root', 'bad-authored-bytes', 'bad-authored-hash'] as const;
/** Why {@link checkEntryBytes} rejected bytes. */
export type EntryCheckCode = (typeof ENTRY_CHECK_CODES)[number];

/** Outcome of {@link checkEntryBytes}. */
export type CheckEntryResult = { readonly ok: true; readonly entry: Entry; /** The entry hash (= its RFC 6962 leaf hash, `SHA-256(0x00 ‖ bytes)`). */ readonly hash: Uint8Array } | { readonly ok: false; readonly code: EntryCheckCode; readonly message: string };

/**
 * Checks one entry on its own, without its neighbours: valid UTF-8, canonical
 * JSON (the bytes re-encode to themselves), exactly the keys of its kind, and
 * every hash the entry carries about itself (a frame's `frameRoot`, an
 * authored turn's `body.hash` over canonical base64 bytes). What needs the
 * rest of the chain (links, ordinals, the seal) is not checked here.
 *
 * @example
 * const r = checkEntryBytes(extraData);
 * if (r.ok && r.entry.kind === 'turn') r.entry.ruling;
 */
export function checkEntryBytes(bytes: Uint8Array): CheckEntryResult {
  const fail = (code: EntryCheckCode, message: string): CheckEntryResult => ({ ok: false, code, message });
  // isView first: it reads an internal slot, so a Proxy posing as bytes is refused without running its traps.
  if (!ArrayBuffer.isView(bytes) || !(bytes instanceof Uint8Array)) return fail('not-utf8', 'entry must be bytes');
  // The one line check of the chain verifier: raw bytes equal to the canonical encoding.
  const seen = inspectLine(sha256, bytes);
  if (!seen.ok) return fail(seen.code, seen.message);
  const e = seen.entry;
  // The chain verifier's own rules for a frame's root and an authored body (one copy each).
  if (e.kind === 'frame') {
    const root = frameRootHex(sha256, e);
    if (root !== e.frameRoot) return fail('bad-frame-root', `frameRoot ${e.frameRoot} does not match the frame content (${root})`);
  }
  if (e.kind === 'turn' && e.body.kind === 'authored') {
    const bad = authoredProblem(sha256, e.body);
    if (bad !== undefined) return fail(bad, AUTHORED_MESSAGES[bad]);
  }
  return { ok: true, entry: e, hash: seen.hash };
}

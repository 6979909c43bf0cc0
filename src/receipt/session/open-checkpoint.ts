import { fromHex } from '../../protocol/index.js';
import { openNote } from '../note/open.js';
import type { NoteVerifier, ParsedVerifierKey } from '../note/types.js';
import { isDeterministicVerifier, parseVerifierKeyCached } from '../note/verifierKey.js';
import { sessionCheckpointFromNote, type OpenSessionCheckpointResult, type SessionCheckpoint } from './checkpoint-note.js';

export { sessionCheckpointFromNote } from './checkpoint-note.js';
export type { SessionCheckpoint, OpenSessionCheckpointFailure, OpenSessionCheckpointResult } from './checkpoint-note.js';

/**
 * Opens a signed session checkpoint the way a grader must: the note must carry
 * a valid signature by a pinned key (C2SP signed-note rules: unknown
 * signatures ignored, a bad signature by a pinned key rejected), its text must
 * be a C2SP tlog-checkpoint, and its origin must be `<name>/<64 hex session
 * id>` where `<name>` is the name of a key that verified — so a checkpoint is
 * only accepted from the engine it names. With `sessionId`, the origin must
 * name that session. Never throws on input.
 *
 * @example
 * const r = openSessionCheckpoint(text, [engineVerifierKey]);
 * if (r.ok) pin = { sessionId: r.checkpoint.sessionId, size: r.checkpoint.size, receiptRoot: r.checkpoint.root };
 */
export function openSessionCheckpoint(
  signedCheckpoint: string,
  verifiers: readonly (NoteVerifier | string)[],
  options: { readonly sessionId?: string } = {},
): OpenSessionCheckpointResult {
  const pinned = rememberable(verifiers);
  if (pinned === undefined || typeof signedCheckpoint !== 'string') return sessionCheck(openUncached(signedCheckpoint, verifiers), options);
  let memo = OPENED.get(pinned[0]!);
  if (memo === undefined) OPENED.set(pinned[0]!, (memo = new Map()));
  const key = pinned.length === 1 ? signedCheckpoint : `${pinned.map((v) => v.verifierKey).join('\n')}\n\n${signedCheckpoint}`;
  let r = memo.get(key);
  if (r === undefined) {
    r = openUncached(signedCheckpoint, pinned);
    if (memo.size >= OPENED_MAX) memo.clear();
    memo.set(key, r);
  }
  return sessionCheck(r, options);
}

/**
 * Openings remembered per (first) verifier: the same checkpoint text under the
 * same deterministic keys opens to the same answer, so a batch of receipts of
 * one seal pays the checkpoint's Ed25519 verification once. Bounded per key.
 */
const OPENED = new WeakMap<NoteVerifier, Map<string, OpenSessionCheckpointResult>>();
const OPENED_MAX = 256;

/** The verifiers as parsed Ed25519 verifiers (strings parsed once), or `undefined` when one is caller-built or malformed. */
function rememberable(verifiers: readonly (NoteVerifier | string)[]): ParsedVerifierKey[] | undefined {
  if (verifiers.length === 0) return undefined;
  const out: ParsedVerifierKey[] = [];
  for (const v of verifiers) {
    if (typeof v === 'string') {
      const p = parseVerifierKeyCached(v);
      if (!p.ok) return undefined;
      out.push(p.verifier);
    } else if (isDeterministicVerifier(v)) out.push(v);
    else return undefined;
  }
  return out;
}

function sessionCheck(r: OpenSessionCheckpointResult, options: { readonly sessionId?: string }): OpenSessionCheckpointResult {
  if (!r.ok || options.sessionId === undefined || options.sessionId === r.checkpoint.sessionId) return r;
  return { ok: false, stage: 'origin', code: 'wrong-session', message: `checkpoint is for session ${r.checkpoint.sessionId}, not ${options.sessionId}` };
}

/** {@link openSessionCheckpoint} without memory and without the session pin. */
export function openUncached(signedCheckpoint: string, verifiers: readonly (NoteVerifier | string)[]): OpenSessionCheckpointResult {
  return sessionCheckpointFromNote(openNote(signedCheckpoint, verifiers), signedCheckpoint);
}

/** The root of an opened checkpoint as bytes. */
export function checkpointRootBytes(cp: SessionCheckpoint): Uint8Array {
  return fromHex(cp.root);
}

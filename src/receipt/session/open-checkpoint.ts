import { fromHex } from '../../protocol/index.js';
import { openNote } from '../note/open.js';
import type { NoteVerifier } from '../note/types.js';
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
  return sessionCheckpointFromNote(openNote(signedCheckpoint, verifiers), signedCheckpoint, options);
}

/** The root of an opened checkpoint as bytes. */
export function checkpointRootBytes(cp: SessionCheckpoint): Uint8Array {
  return fromHex(cp.root);
}

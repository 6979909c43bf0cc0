/**
 * THE rules a session checkpoint must meet once its note has been opened:
 * a C2SP tlog-checkpoint text whose origin is `<name>/<64 hex session id>`,
 * signed by a pinned key of that name. Pure and browser-safe (the audit page
 * opens the note with WebCrypto, the CLI with node:crypto; both end here).
 */
import { toHex } from '../../protocol/index.js';
import { parseCheckpoint, type CheckpointCode } from '../checkpoint/checkpoint.js';
import { splitSessionOrigin } from '../checkpoint/origin.js';
import type { NoteSignature, OpenNoteCode, OpenNoteResult } from '../note/types.js';

/** A signed session checkpoint that verified against a pinned key. */
export interface SessionCheckpoint {
  /** `<engineName>/<sessionId>`. */
  readonly origin: string;
  /** The engine's note key name (it signed this checkpoint). */
  readonly engineName: string;
  /** The session (64 hex). */
  readonly sessionId: string;
  /** Number of entries the checkpoint commits to. */
  readonly size: number;
  /** RFC 6962 root over those entries, hex. */
  readonly root: string;
  /** Signatures by pinned keys (the engine's first among them). */
  readonly signedBy: readonly NoteSignature[];
  /** Unknown signatures, ignored (witness cosignatures nobody pinned, …). */
  readonly unverified: readonly NoteSignature[];
  /** Extension lines of the checkpoint text (opaque, ignored). */
  readonly extensions: readonly string[];
  /** The signed note, verbatim. */
  readonly signedCheckpoint: string;
}

/** Why a session checkpoint failed to open. */
export type OpenSessionCheckpointFailure =
  | { readonly ok: false; readonly stage: 'note'; readonly code: OpenNoteCode; readonly message: string }
  | { readonly ok: false; readonly stage: 'checkpoint'; readonly code: CheckpointCode; readonly message: string }
  | { readonly ok: false; readonly stage: 'origin'; readonly code: 'not-a-session-origin' | 'origin-not-signer' | 'wrong-session'; readonly message: string };

/** Outcome of {@link openSessionCheckpoint}. */
export type OpenSessionCheckpointResult = { readonly ok: true; readonly checkpoint: SessionCheckpoint } | OpenSessionCheckpointFailure;

/**
 * The session checkpoint of a note already opened against pinned keys (see
 * `openSessionCheckpoint`): the note's failure as stage `note`, else the
 * checkpoint text and origin rules. With `sessionId`, the origin must name
 * that session. Never throws on input.
 */
export function sessionCheckpointFromNote(
  opened: OpenNoteResult,
  signedCheckpoint: string,
  options: { readonly sessionId?: string } = {},
): OpenSessionCheckpointResult {
  if (!opened.ok) return { ok: false, stage: 'note', code: opened.code, message: opened.message };
  const cp = parseCheckpoint(opened.text);
  if (!cp.ok) return { ok: false, stage: 'checkpoint', code: cp.code, message: cp.message };
  const { origin, size, root, extensions } = cp.checkpoint;
  const split = splitSessionOrigin(origin);
  if (!split) return { ok: false, stage: 'origin', code: 'not-a-session-origin', message: `origin ${JSON.stringify(origin)} is not <engine name>/<64 hex session id>` };
  if (!opened.verified.some((s) => s.name === split.engineName)) {
    return { ok: false, stage: 'origin', code: 'origin-not-signer', message: `origin names engine ${JSON.stringify(split.engineName)}, but no pinned key of that name signed it` };
  }
  if (options.sessionId !== undefined && options.sessionId !== split.sessionId) {
    return { ok: false, stage: 'origin', code: 'wrong-session', message: `checkpoint is for session ${split.sessionId}, not ${options.sessionId}` };
  }
  const signedBy = opened.verified.length === 1 ? opened.verified : [...opened.verified].sort((a, b) => Number(b.name === split.engineName) - Number(a.name === split.engineName));
  return {
    ok: true,
    checkpoint: {
      origin,
      engineName: split.engineName,
      sessionId: split.sessionId,
      size,
      root: toHex(root),
      signedBy,
      unverified: opened.unverified,
      extensions,
      signedCheckpoint,
    },
  };
}


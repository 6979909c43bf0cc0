import { fromHex, toHex } from '../../protocol/index.js';
import { splitSessionOrigin } from '../bytes.js';
import { parseCheckpoint, type CheckpointCode } from '../checkpoint/checkpoint.js';
import { openNote } from '../note/open.js';
import type { NoteSignature, NoteVerifier, OpenNoteCode, ParsedVerifierKey } from '../note/types.js';
import { isDeterministicVerifier, parseVerifierKeyCached } from '../note/verifierKey.js';

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
  const opened = openNote(signedCheckpoint, verifiers);
  if (!opened.ok) return { ok: false, stage: 'note', code: opened.code, message: opened.message };
  const cp = parseCheckpoint(opened.text);
  if (!cp.ok) return { ok: false, stage: 'checkpoint', code: cp.code, message: cp.message };
  const { origin, size, root, extensions } = cp.checkpoint;
  const split = splitSessionOrigin(origin);
  if (!split) return { ok: false, stage: 'origin', code: 'not-a-session-origin', message: `origin ${JSON.stringify(origin)} is not <engine name>/<64 hex session id>` };
  if (!opened.verified.some((s) => s.name === split.engineName)) {
    return { ok: false, stage: 'origin', code: 'origin-not-signer', message: `origin names engine ${JSON.stringify(split.engineName)}, but no pinned key of that name signed it` };
  }
  const signedBy = [...opened.verified].sort((a, b) => Number(b.name === split.engineName) - Number(a.name === split.engineName));
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

/** The root of an opened checkpoint as bytes. */
export function checkpointRootBytes(cp: SessionCheckpoint): Uint8Array {
  return fromHex(cp.root);
}

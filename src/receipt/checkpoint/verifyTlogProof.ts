import { createHash } from 'node:crypto';
import { openNote } from '../note/open.js';
import type { NoteSignature, NoteVerifier, OpenNoteCode } from '../note/types.js';
import { parseCheckpoint, type Checkpoint, type CheckpointCode } from './checkpoint.js';
import { parseTlogProof, type TlogProofCode } from './tlogProof.js';
import { rfc6962Hasher, verifyInclusion, type MerkleFailureCode, type MerkleHasher } from '../../protocol/merkle/index.js';

/** Parameters of `verifyTlogProof`. */
export interface VerifyTlogProofParameters {
  /** Pinned log keys (parsed or `name+keyid+base64`); at least one must have signed the checkpoint. */
  readonly verifiers: readonly (NoteVerifier | string)[];
  /** RFC 6962 leaf hash of the entry the proof is about: `H(0x00 ‖ entryBytes)`. */
  readonly leafHash: Uint8Array;
  /** Expected checkpoint origin; when given, the checkpoint's origin must equal it. */
  readonly origin?: string;
  /** Tree hasher; defaults to RFC 6962 over SHA-256. */
  readonly hasher?: MerkleHasher;
}

/** Which step of `verifyTlogProof` failed. */
export type VerifyTlogProofStage = 'proof' | 'note' | 'checkpoint' | 'origin' | 'inclusion';

/** Outcome of `verifyTlogProof`. */
export type VerifyTlogProofResult =
  | {
      readonly ok: true;
      readonly index: number;
      readonly checkpoint: Checkpoint;
      readonly verified: readonly NoteSignature[];
      readonly unverified: readonly NoteSignature[];
      /** Unauthenticated extra data, if the proof carried any. */
      readonly extraData?: Uint8Array;
    }
  | { readonly ok: false; readonly stage: 'proof'; readonly code: TlogProofCode; readonly message: string }
  | { readonly ok: false; readonly stage: 'note'; readonly code: OpenNoteCode; readonly message: string }
  | { readonly ok: false; readonly stage: 'checkpoint'; readonly code: CheckpointCode; readonly message: string }
  | { readonly ok: false; readonly stage: 'origin'; readonly code: 'wrong-origin'; readonly message: string }
  | { readonly ok: false; readonly stage: 'inclusion'; readonly code: MerkleFailureCode; readonly message: string };

const sha256 = (data: Uint8Array): Uint8Array => new Uint8Array(createHash('sha256').update(data).digest());
const defaultHasher = rfc6962Hasher(sha256);

/**
 * Verifies a tlog-proof offline, in order: parse the proof text
 * (`parseTlogProof`), open the embedded checkpoint against the pinned keys
 * (`openNote`), parse the checkpoint text (`parseCheckpoint`), compare the
 * origin if one is expected, then check the RFC 6962 inclusion of `leafHash`
 * at `index` in the checkpoint's tree. The first failing step is reported with
 * its stage and that step's own code. Never throws on bad input.
 *
 * @example
 * const r = verifyTlogProof(text, { verifiers: [engineVerifierKey], leafHash, origin });
 * if (!r.ok) reject(r.stage, r.code);
 */
export function verifyTlogProof(text: string, params: VerifyTlogProofParameters): VerifyTlogProofResult {
  const parsed = parseTlogProof(text);
  if (!parsed.ok) return { ok: false, stage: 'proof', code: parsed.code, message: parsed.message };
  const { index, proof, signedCheckpoint, extraData } = parsed.tlogProof;
  const opened = openNote(signedCheckpoint, params.verifiers);
  if (!opened.ok) return { ok: false, stage: 'note', code: opened.code, message: opened.message };
  const cp = parseCheckpoint(opened.text);
  if (!cp.ok) return { ok: false, stage: 'checkpoint', code: cp.code, message: cp.message };
  const { checkpoint } = cp;
  if (params.origin !== undefined && checkpoint.origin !== params.origin) {
    return { ok: false, stage: 'origin', code: 'wrong-origin', message: `checkpoint origin ${JSON.stringify(checkpoint.origin)} is not ${JSON.stringify(params.origin)}` };
  }
  const inc = verifyInclusion(params.hasher ?? defaultHasher, index, checkpoint.size, params.leafHash, proof, checkpoint.root);
  if (!inc.ok) return { ok: false, stage: 'inclusion', code: inc.code, message: inc.message };
  const base = { ok: true as const, index, checkpoint, verified: opened.verified, unverified: opened.unverified };
  return extraData === undefined ? base : { ...base, extraData };
}

/**
 * The one rule of a day's log binding (docs/PROTOCOL.md §15.5), with the
 * note opener passed in: `tally verify --log-key` opens the log checkpoint
 * with node's Ed25519 ({@link verifyLogBinding} in binding.ts), the
 * grader's page with WebCrypto (src/web/browser/log-binding.ts) — both run
 * exactly these checks, in this order, with these codes. Browser-safe: no
 * `node:` module in its import graph.
 */
import { entryHash, parseEngineLogLeaf, rfc6962Hasher, toHex, verifyInclusion, type CheckpointLeaf, type Digest, type MerkleHasher } from '../protocol/index.js';
import { parseCheckpoint } from '../receipt/checkpoint/checkpoint.js';
import { parseTlogProof } from '../receipt/checkpoint/tlogProof.js';
import type { NoteVerifier, OpenNoteResult } from '../receipt/note/types.js';

/** The session checkpoint a binding is about: its origin (`<engine name>/<session id>`), size and root (64 lowercase hex). */
export interface BoundCheckpoint {
  readonly origin: string;
  readonly size: number;
  readonly root: string;
}

/** Every code {@link verifyLogBinding} refuses with, in the order the checks run (§15.5). */
export const LOG_BINDING_CODES = [
  /** No binding was given where one is required. */
  'TALLY_LOG_BINDING_MISSING',
  /** The text is not a C2SP tlog-proof in its one encoding. */
  'TALLY_LOG_PROOF_INVALID',
  /** The proof carries no `extra` line: the leaf's bytes are missing. */
  'TALLY_LOG_LEAF_MISSING',
  /** The log checkpoint does not open with the pinned log key, or is not a tlog-checkpoint. */
  'TALLY_LOG_UNSIGNED',
  /** No pinned key that signed it is named as the checkpoint's origin (the log key's name is the log's origin). */
  'TALLY_LOG_WRONG_ORIGIN',
  /** The `extra` bytes are not a canonical engine-log checkpoint leaf. */
  'TALLY_LOG_LEAF_INVALID',
  /** The leaf records another session checkpoint (origin, size or root), or another seal flag than the one expected. */
  'TALLY_LOG_LEAF_MISMATCH',
  /** The leaf is not included at the stated index of the log checkpoint's tree. */
  'TALLY_LOG_NOT_INCLUDED',
] as const;
/** A code of {@link LOG_BINDING_CODES}. */
export type LogBindingCode = (typeof LOG_BINDING_CODES)[number];

/** Options of {@link verifyLogBinding}. */
export interface VerifyLogBindingOptions {
  /** The pinned log verifier key(s); one of them must have signed, under the checkpoint's origin as its name. */
  readonly logVerifiers: readonly (NoteVerifier | string)[];
  /** The session checkpoint the day was accepted against (already verified with the engine key). */
  readonly checkpoint: BoundCheckpoint;
  /** When given, the leaf's `seal` must equal it (true: this checkpoint is the seal). */
  readonly seal?: boolean;
}

/** Options of {@link verifyLogBindingWith}: the log checkpoint is opened by `open` (a pinned log key's rules, §11.2). */
export interface VerifyLogBindingWithOptions extends Omit<VerifyLogBindingOptions, 'logVerifiers'> {
  readonly open: (signedCheckpoint: string) => OpenNoteResult;
  /** SHA-256 (node's, or the page's): the leaf hash `D(0x00 ‖ extra)` and the tree's nodes. */
  readonly digest: Digest;
}

const hashers = new WeakMap<Digest, MerkleHasher>();
function hasherOf(digest: Digest): MerkleHasher {
  let h = hashers.get(digest);
  if (!h) hashers.set(digest, (h = rfc6962Hasher(digest)));
  return h;
}

/** Outcome of {@link verifyLogBinding}. */
export type VerifyLogBindingResult =
  | {
      readonly ok: true;
      /** The leaf's position in the engine log. */
      readonly index: number;
      /** The leaf, parsed (its origin, size and root are the bound checkpoint's). */
      readonly leaf: CheckpointLeaf;
      /** The log checkpoint the leaf is included in. */
      readonly log: { readonly origin: string; readonly size: number; readonly root: string };
      /** The log checkpoint note, verbatim (for a witness policy). */
      readonly signedCheckpoint: string;
    }
  | { readonly ok: false; readonly stage: 'log'; readonly code: LogBindingCode; readonly message: string };

function refuse(code: LogBindingCode, message: string): VerifyLogBindingResult {
  return { ok: false, stage: 'log', code, message };
}

/**
 * Checks a log binding offline, in order (§15.5): (1) the text is a
 * tlog-proof; (2) it carries the leaf bytes (`extra`); (3) its checkpoint
 * opens with a pinned log key and is a tlog-checkpoint; (4) a key that
 * verified is named as the checkpoint's origin; (5) the leaf is a canonical
 * checkpoint leaf; (6) it records exactly the bound session checkpoint
 * (origin, size, root; and `seal` when one is expected); (7) `H(0x00 ‖ leaf)`
 * is included at the index in the log checkpoint's tree. The first failing
 * check is the answer. Never throws on input.
 *
 * @example
 * const r = verifyLogBindingWith(text, { open: (note) => openNote(note, [logVkey]), digest: sha256, checkpoint: { origin, size, root }, seal: true });
 * if (!r.ok) refuse(r.code); // e.g. TALLY_LOG_LEAF_MISMATCH
 */
export function verifyLogBindingWith(text: string, options: VerifyLogBindingWithOptions): VerifyLogBindingResult {
  const parsed = parseTlogProof(text);
  if (!parsed.ok) return refuse('TALLY_LOG_PROOF_INVALID', `the log binding is not a tlog-proof (${parsed.code}): ${parsed.message}`);
  const extra = parsed.tlogProof.extraData;
  if (extra === undefined) return refuse('TALLY_LOG_LEAF_MISSING', 'the log binding carries no "extra" line: the engine-log leaf it proves is missing');
  const { index, proof, signedCheckpoint } = parsed.tlogProof;
  const opened = options.open(signedCheckpoint);
  if (!opened.ok) return refuse('TALLY_LOG_UNSIGNED', `the log checkpoint does not open with the pinned log key (${opened.code}): ${opened.message}`);
  const c = parseCheckpoint(opened.text);
  if (!c.ok) return refuse('TALLY_LOG_UNSIGNED', `the log's signed note is not a tlog-checkpoint (${c.code}): ${c.message}`);
  const cp = c.checkpoint;
  if (!opened.verified.some((s) => s.name === cp.origin)) {
    return refuse('TALLY_LOG_WRONG_ORIGIN', `the log checkpoint's origin ${JSON.stringify(cp.origin)} is not the name of a pinned log key that signed it (${opened.verified.map((s) => s.name).join(', ')})`);
  }
  const leaf = parseEngineLogLeaf(extra);
  if (!leaf.ok) return refuse('TALLY_LOG_LEAF_INVALID', `the "extra" bytes are not an engine-log leaf (${leaf.code}): ${leaf.message}`);
  if (leaf.leaf.kind !== 'checkpoint') return refuse('TALLY_LOG_LEAF_INVALID', `the "extra" leaf is a ${leaf.leaf.kind} leaf, not a checkpoint leaf`);
  const l = leaf.leaf;
  const want = options.checkpoint;
  if (l.origin !== want.origin || l.size !== want.size || l.root !== want.root) {
    return refuse('TALLY_LOG_LEAF_MISMATCH', `the log leaf records checkpoint (${l.origin}, ${l.size}, ${l.root}), not the day's (${want.origin}, ${want.size}, ${want.root})`);
  }
  if (options.seal !== undefined && l.seal !== options.seal) {
    return refuse('TALLY_LOG_LEAF_MISMATCH', options.seal ? 'the log leaf does not mark this checkpoint as the seal' : 'the log leaf marks this checkpoint as the seal, but it does not cover the finalize entry');
  }
  const inc = verifyInclusion(hasherOf(options.digest), index, cp.size, entryHash(options.digest, extra), proof, cp.root);
  if (!inc.ok) return refuse('TALLY_LOG_NOT_INCLUDED', `the leaf is not included at index ${index} of the log checkpoint (size ${cp.size}): ${inc.code}: ${inc.message}`);
  return { ok: true, index, leaf: l, log: { origin: cp.origin, size: cp.size, root: toHex(cp.root) }, signedCheckpoint };
}


import { createReadStream } from 'node:fs';
import { sha256 } from '../../codec/sha256.js';
import { splitLines, unterminatedProblem } from '../../codec/bundle.js';
import {
  ChainVerifier,
  Frontier,
  fromHex,
  toHex,
  type ChainError,
  type ChainPin,
  type ChainSummary,
  type VerifiedEntry,
} from '../../protocol/index.js';
import type { NoteVerifier } from '../note/types.js';
import { openSessionCheckpoint, type OpenSessionCheckpointFailure, type SessionCheckpoint } from '../session/open-checkpoint.js';
import { PackedMerkleTree } from '../session/packed-tree.js';
import { receiptHasher } from '../session/trees.js';

/** A source of bundle bytes: chunks (sync or async), as `verifyBundle` takes them. */
export type BundleChunks = AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

/** Streams a bundle file in 1 MiB chunks. */
export function bundleFileChunks(path: string): AsyncIterable<Uint8Array> {
  return createReadStream(path, { highWaterMark: 1 << 20 });
}

/** Options of {@link streamVerifiedEntries}. */
export interface StreamOptions {
  readonly requireSealed?: boolean;
  readonly pin?: ChainPin;
}

/**
 * Runs the streaming chain verifier over `chunks` and calls `visit` for every
 * entry that passed, with its exact line bytes (a view: copy to keep) and the
 * verifier (for its frontier). Stops at the first chain error. The shared
 * engine of `indexBundle`, `verifyBundleCheckpoint` and `replay`.
 */
export async function streamVerifiedEntries(
  chunks: BundleChunks,
  visit: (entry: VerifiedEntry, line: Uint8Array, verifier: ChainVerifier) => void | Promise<void>,
  options: StreamOptions = {},
): Promise<ChainSummary | ChainError> {
  const v = new ChainVerifier(sha256);
  for await (const { line, terminated } of splitLines(chunks)) {
    if (!terminated) {
      const p = unterminatedProblem(line);
      return v.reject(p.code, p.message);
    }
    const r = v.push(line);
    if (!r.ok) return r;
    const p = visit(r, line, v);
    if (p !== undefined) await p;
  }
  return v.finish({
    ...(options.requireSealed === undefined ? {} : { requireSealed: options.requireSealed }),
    ...(options.pin === undefined ? {} : { pin: options.pin }),
  });
}

/** A verified bundle with its full Merkle tree, ready to prove any entry. */
export interface IndexedBundle {
  readonly ok: true;
  readonly summary: ChainSummary;
  /** Every perfect-subtree hash of the bundle's tree (packed, 64–128 bytes per entry): proofs at any size in O(log n). */
  readonly tree: PackedMerkleTree;
  /** Bytes of the entries that were asked for (by index). */
  readonly entries: ReadonlyMap<number, Uint8Array>;
}

/**
 * Verifies a bundle (every rule of PROTOCOL.md §5) and builds its tree from
 * the verified entry hashes — O(n) once, one amortised interior hash per
 * entry on top of verification — keeping the bytes of the `entries` asked
 * for. Returns the first chain error instead when the bundle is bad.
 *
 * @example
 * const ix = await indexBundle(bundleFileChunks('day.jsonl'), { entries: [4] });
 * if (ix.ok) ix.tree.inclusionProof(4, ix.summary.size);
 */
export async function indexBundle(chunks: BundleChunks, options: StreamOptions & { readonly entries?: readonly number[] } = {}): Promise<IndexedBundle | ChainError> {
  const want = new Set(options.entries ?? []);
  const tree = new PackedMerkleTree(receiptHasher);
  const entries = new Map<number, Uint8Array>();
  const r = await streamVerifiedEntries(
    chunks,
    (e, line) => {
      tree.append(fromHex(e.hash));
      if (want.has(e.index)) entries.set(e.index, line.slice());
    },
    options,
  );
  if (!r.ok) return r;
  return { ok: true, summary: r, tree, entries };
}

/** Outcome of {@link verifyBundleCheckpoint}. */
export type VerifyBundleCheckpointResult =
  | { readonly ok: true; readonly summary: ChainSummary; readonly checkpoint: SessionCheckpoint; readonly coversAll: boolean }
  | (ChainError & { readonly stage: 'chain' })
  | OpenSessionCheckpointFailure
  | { readonly ok: false; readonly stage: 'match'; readonly code: 'empty-checkpoint' | 'beyond-bundle' | 'root-mismatch'; readonly message: string };

/**
 * Verifies a bundle against a signed checkpoint: the checkpoint must open
 * with a pinned key and name the bundle's session; the bundle must verify;
 * and the RFC 6962 root of its first `checkpoint.size` entries must be the
 * checkpoint's root. For the sealed receipt (size = every entry) that pins
 * the whole day; for a mid-day checkpoint it proves the day extends it.
 *
 * @example
 * const r = await verifyBundleCheckpoint(bundleFileChunks('day.jsonl'), { signedCheckpoint, verifiers: [vkey] });
 */
export async function verifyBundleCheckpoint(
  chunks: BundleChunks,
  options: StreamOptions & { readonly signedCheckpoint: string; readonly verifiers: readonly (NoteVerifier | string)[] },
): Promise<VerifyBundleCheckpointResult> {
  const opened = openSessionCheckpoint(options.signedCheckpoint, options.verifiers);
  if (!opened.ok) return opened;
  const cp = opened.checkpoint;
  if (cp.size < 1) return { ok: false, stage: 'match', code: 'empty-checkpoint', message: 'the checkpoint commits to no entry (size 0)' };
  let rootAt: string | undefined;
  const r = await streamVerifiedEntries(
    chunks,
    (e, _line, v) => {
      if (e.index + 1 === cp.size) rootAt = toHex(Frontier.fromHashes(receiptHasher, cp.size, v.frontierHashes()).root());
    },
    { ...options, pin: { ...options.pin, sessionId: cp.sessionId } },
  );
  if (!r.ok) return { ...r, stage: 'chain' };
  if (rootAt === undefined) return { ok: false, stage: 'match', code: 'beyond-bundle', message: `the checkpoint covers ${cp.size} entries, the bundle has only ${r.size}` };
  if (rootAt !== cp.root) {
    return { ok: false, stage: 'match', code: 'root-mismatch', message: `the root of the bundle's first ${cp.size} entries is ${rootAt}, the signed checkpoint says ${cp.root}` };
  }
  return { ok: true, summary: r, checkpoint: cp, coversAll: cp.size === r.size };
}

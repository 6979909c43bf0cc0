import { createReadStream } from 'node:fs';
import { sha256 } from '../../codec/sha256.js';
import { verifyChunks } from '../../protocol/stream.js';
import {
  fromHex,
  type ChainVerifier,
  type ChainError,
  type ChainPin,
  type ChainSummary,
  type VerifiedEntry,
} from '../../protocol/index.js';
import type { NoteVerifier } from '../note/types.js';
import { openSessionCheckpoint, type OpenSessionCheckpointFailure } from '../session/open-checkpoint.js';
import { verifyChunksAgainstCheckpoint, type CheckpointMatchResult } from './bundle-checkpoint.js';
import { PackedMerkleTree } from '../session/packed-tree.js';
import { receiptHasher } from '../session/trees.js';

/** A source of bundle bytes: chunks (sync or async), as `verifyBundle` takes them. */
export type BundleChunks = AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

/** Streams a bundle file in 256 KiB chunks. */
export function bundleFileChunks(path: string): AsyncIterable<Uint8Array> {
  // 256 KiB reads: less external memory waiting for the collector on long days than 1 MiB ones.
  return createReadStream(path, { highWaterMark: 1 << 18 });
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
  return verifyChunks(sha256, chunks, {
    onEntry: visit,
    ...(options.requireSealed === undefined ? {} : { requireSealed: options.requireSealed }),
    ...(options.pin === undefined ? {} : { pin: options.pin }),
  });
}

/** A verified bundle with its Merkle tree, ready to prove the entries asked for. */
export interface IndexedBundle {
  readonly ok: true;
  readonly summary: ChainSummary;
  /**
   * The bundle's tree (packed): every perfect-subtree hash (64–128 bytes per
   * entry), or with `floor` only those of 2^floor entries and up plus the
   * chunks the asked-for entries and sizes need. Proofs in O(log n).
   */
  readonly tree: PackedMerkleTree;
  /** Bytes of the entries that were asked for (by index). */
  readonly entries: ReadonlyMap<number, Uint8Array>;
}

/** Options of {@link indexBundle}. */
export interface IndexBundleOptions extends StreamOptions {
  /** Entries whose bytes are kept (and, with `floor`, whose chunks are kept for their proofs). */
  readonly entries?: readonly number[];
  /**
   * Keep only subtrees of 2^floor entries and up (default 0: every node):
   * O(n / 2^floor) memory. The chunks of `entries` and of the tree sizes in
   * `sizes` are kept, so roots at those sizes and proofs of those entries at
   * those sizes need nothing else; any other node below the floor throws
   * `ChunkNeededError`.
   */
  readonly floor?: number;
  /** Tree sizes roots and proofs will be asked at (a checkpoint's size), with `floor`. */
  readonly sizes?: readonly number[];
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
export async function indexBundle(chunks: BundleChunks, options: IndexBundleOptions = {}): Promise<IndexedBundle | ChainError> {
  const want = new Set(options.entries ?? []);
  const floor = options.floor ?? 0;
  const width = 2 ** floor;
  // The chunks a proof of a wanted entry, or a root at a wanted size, reads below the floor.
  const keep = new Set<number>();
  if (floor > 0) {
    for (const i of want) if (Number.isSafeInteger(i) && i >= 0) keep.add(Math.floor(i / width));
    for (const m of options.sizes ?? []) if (Number.isSafeInteger(m) && m > 0 && m % width !== 0) keep.add(Math.floor((m - 1) / width));
  }
  const tree = new PackedMerkleTree(receiptHasher, { floor, chunks: Math.min(1024, Math.max(3, keep.size)) });
  const entries = new Map<number, Uint8Array>();
  let chunk: Uint8Array[] = [];
  const r = await streamVerifiedEntries(
    chunks,
    (e, line) => {
      const leaf = fromHex(e.hash);
      tree.append(leaf);
      if (want.has(e.index)) entries.set(e.index, line.slice());
      if (floor > 0 && keep.has(Math.floor(e.index / width))) {
        chunk.push(leaf);
        if (chunk.length === width) {
          tree.loadChunk(Math.floor(e.index / width), chunk);
          chunk = [];
        }
      }
    },
    options,
  );
  if (!r.ok) return r;
  return { ok: true, summary: r, tree, entries };
}

/** Outcome of {@link verifyBundleCheckpoint}. */
export type VerifyBundleCheckpointResult = CheckpointMatchResult | OpenSessionCheckpointFailure;

/**
 * Verifies a bundle against a signed checkpoint: the checkpoint must open
 * with a pinned key and name the bundle's session; the bundle must verify;
 * and the RFC 6962 root of its first `checkpoint.size` entries must be the
 * checkpoint's root ({@link verifyChunksAgainstCheckpoint} is the rule, which
 * the browser audit page runs too). For the sealed receipt (size = every
 * entry) that pins the whole day; for a mid-day checkpoint it proves the day
 * extends it.
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
  return verifyChunksAgainstCheckpoint(sha256, chunks, opened.checkpoint, {
    ...(options.requireSealed === undefined ? {} : { requireSealed: options.requireSealed }),
    ...(options.pin === undefined ? {} : { pin: options.pin }),
  });
}

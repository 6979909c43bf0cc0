/**
 * THE rule that matches a bundle with an opened session checkpoint. Pure and
 * browser-safe: the digest is passed in (node:crypto for `tally verify
 * --checkpoint`, the audit page's worker SHA-256 in the browser) and the
 * chain is checked by the protocol's one streaming loop, `verifyChunks`.
 */
import { Frontier, rfc6962Hasher, toHex, type ChainError, type ChainVerifier, type ChainPin, type ChainSummary, type Digest, type VerifiedEntry } from '../../protocol/index.js';
import { verifyChunks } from '../../protocol/stream.js';
import type { SessionCheckpoint } from '../session/checkpoint-note.js';

/** Outcome of {@link verifyChunksAgainstCheckpoint}. */
export type CheckpointMatchResult =
  | { readonly ok: true; readonly summary: ChainSummary; readonly checkpoint: SessionCheckpoint; readonly coversAll: boolean }
  | (ChainError & { readonly stage: 'chain' })
  | { readonly ok: false; readonly stage: 'match'; readonly code: 'empty-checkpoint' | 'beyond-bundle' | 'root-mismatch'; readonly message: string };

/** A checkpoint that does not match the verified entries (the `match` stage). */
export type CheckpointMismatch = Extract<CheckpointMatchResult, { stage: 'match' }>;

/**
 * The match rule itself, for a chain already verified up to `size` entries:
 * `rootAt` is the RFC 6962 root of its first `cp.size` entries (`undefined`
 * when `cp.size > size`). Shared by {@link verifyChunksAgainstCheckpoint} and
 * the audit page following a live day.
 */
export function matchCheckpoint(cp: SessionCheckpoint, size: number, rootAt: string | undefined): CheckpointMismatch | undefined {
  if (cp.size < 1) return { ok: false, stage: 'match', code: 'empty-checkpoint', message: 'the checkpoint commits to no entry (size 0)' };
  if (rootAt === undefined) return { ok: false, stage: 'match', code: 'beyond-bundle', message: `the checkpoint covers ${cp.size} entries, the bundle has only ${size}` };
  if (rootAt !== cp.root) {
    return { ok: false, stage: 'match', code: 'root-mismatch', message: `the root of the bundle's first ${cp.size} entries is ${rootAt}, the signed checkpoint says ${cp.root}` };
  }
  return undefined;
}

/** Options of {@link verifyChunksAgainstCheckpoint}. */
export interface CheckpointMatchOptions {
  readonly requireSealed?: boolean;
  readonly pin?: ChainPin;
  /** Called for every verified entry with its line bytes (a view: copy to keep). */
  readonly onEntry?: (entry: VerifiedEntry, line: Uint8Array) => void;
  /** Called for every accepted line when `onEntry` is absent (nothing built per line: see `VerifyChunksOptions.onAccepted`). */
  readonly onAccepted?: (line: Uint8Array, verifier: ChainVerifier) => void;
  /** Called after each chunk (progress; may yield). */
  readonly onChunk?: () => void | Promise<void>;
}

/**
 * Verifies a bundle against a checkpoint that already opened with a pinned
 * key: the checkpoint must commit to at least one entry, the bundle must
 * verify with the checkpoint's session pinned, and the RFC 6962 root of its
 * first `checkpoint.size` entries must be the checkpoint's root.
 */
export async function verifyChunksAgainstCheckpoint(
  digest: Digest,
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  cp: SessionCheckpoint,
  options: CheckpointMatchOptions = {},
): Promise<CheckpointMatchResult> {
  if (cp.size < 1) return matchCheckpoint(cp, 0, undefined)!;
  const hasher = rfc6962Hasher(digest);
  const onEntry = options.onEntry;
  const onAccepted = options.onAccepted;
  let rootAt: string | undefined;
  const r = await verifyChunks(digest, chunks, {
    ...(options.requireSealed === undefined ? {} : { requireSealed: options.requireSealed }),
    pin: { ...options.pin, sessionId: cp.sessionId },
    // Without an onEntry nothing is built per line (the verdict-only path); the root at the checkpoint's size is taken either way.
    ...(onEntry === undefined
      ? {
          onAccepted: (line: Uint8Array, v: ChainVerifier) => {
            if (v.size === cp.size) rootAt = toHex(Frontier.fromHashes(hasher, cp.size, v.frontierHashes()).root());
            onAccepted?.(line, v);
          },
        }
      : {
          onEntry: (e: VerifiedEntry, line: Uint8Array, v: ChainVerifier) => {
            if (e.index + 1 === cp.size) rootAt = toHex(Frontier.fromHashes(hasher, cp.size, v.frontierHashes()).root());
            onEntry(e, line);
          },
        }),
    ...(options.onChunk === undefined ? {} : { onChunk: options.onChunk }),
  });
  if (!r.ok) return { ...r, stage: 'chain' };
  const mismatch = matchCheckpoint(cp, r.size, rootAt);
  if (mismatch) return mismatch;
  return { ok: true, summary: r, checkpoint: cp, coversAll: cp.size === r.size };
}

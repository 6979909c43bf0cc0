import { toHex } from '../../protocol/index.js';
import { describeValue, splitSessionOrigin } from '../bytes.js';
import { parseCheckpoint } from '../checkpoint/checkpoint.js';
import type { NoteVerifier } from '../note/types.js';
import { openSessionCheckpoint } from '../session/open-checkpoint.js';
import type { IndexedBundle } from './bundle.js';
import { ChunkNeededError } from '../session/packed-tree.js';
import { formatTurnReceipt } from './turn-receipt.js';

/**
 * The origin, size and root a signed checkpoint states, read WITHOUT checking
 * any signature (a prover matching a checkpoint to its bundle; verifiers use
 * `openSessionCheckpoint`). `undefined` when it is not a session checkpoint.
 */
export function peekSessionCheckpoint(signedCheckpoint: string): { sessionId: string; engineName: string; size: number; root: string } | undefined {
  if (typeof signedCheckpoint !== 'string') return undefined;
  const split = signedCheckpoint.lastIndexOf('\n\n');
  if (split < 0) return undefined;
  const cp = parseCheckpoint(signedCheckpoint.slice(0, split + 1));
  if (!cp.ok) return undefined;
  const o = splitSessionOrigin(cp.checkpoint.origin);
  return o && { ...o, size: cp.checkpoint.size, root: toHex(cp.checkpoint.root) };
}

/** Outcome of {@link turnReceiptFromBundle}. */
export type TurnReceiptFromBundleResult =
  | { readonly ok: true; readonly index: number; readonly size: number; readonly text: string }
  | { readonly ok: false; readonly code: 'index-out-of-range' | 'checkpoint-unverified' | 'checkpoint-mismatch' | 'entry-not-loaded'; readonly message: string };

/**
 * A single-turn receipt for entry `index` of an indexed bundle against
 * `signedCheckpoint` — the engine's signed checkpoint, given as input: this
 * signs nothing. The checkpoint must open with one of `verifiers` (the
 * engine's verifier key: `openSessionCheckpoint`, C2SP signed-note rules,
 * the origin naming the signer), name this bundle's session, and its root
 * must be the root of the bundle's first `size` entries (so a receipt is
 * never made against a checkpoint of another transcript); `index < size`.
 * The proof costs O(log n) from the bundle's stored tree.
 *
 * @example
 * const ix = await indexBundle(chunks, { entries: [4] });
 * if (ix.ok) turnReceiptFromBundle(ix, 4, sealedCheckpoint, { verifiers: [engineVkey] });
 */
export function turnReceiptFromBundle(
  ix: IndexedBundle,
  index: number,
  signedCheckpoint: string,
  options: { readonly verifiers: readonly (NoteVerifier | string)[] },
): TurnReceiptFromBundleResult {
  const opened = openSessionCheckpoint(signedCheckpoint, options.verifiers);
  if (!opened.ok) return { ok: false, code: 'checkpoint-unverified', message: `the checkpoint does not open with the given key: ${opened.stage}: ${opened.code}: ${opened.message}` };
  const cp = opened.checkpoint;
  if (cp.sessionId !== ix.summary.sessionId) return { ok: false, code: 'checkpoint-mismatch', message: `the checkpoint is for session ${cp.sessionId}, the bundle is ${ix.summary.sessionId}` };
  if (cp.size < 1 || cp.size > ix.summary.size) return { ok: false, code: 'checkpoint-mismatch', message: `the checkpoint covers ${cp.size} entries, the bundle has ${ix.summary.size}` };
  let root: string;
  let proof: Uint8Array[] | undefined;
  try {
    root = toHex(ix.tree.root(cp.size));
    if (Number.isSafeInteger(index) && index >= 0 && index < cp.size) proof = ix.tree.inclusionProof(index, cp.size);
  } catch (e) {
    if (!(e instanceof ChunkNeededError)) throw e;
    return { ok: false, code: 'entry-not-loaded', message: `the tree was indexed with a floor and without the chunks of entry ${describeValue(index)} at size ${cp.size} (pass them in options.entries and options.sizes)` };
  }
  if (root !== cp.root) return { ok: false, code: 'checkpoint-mismatch', message: `the bundle's root at size ${cp.size} is ${root}, the checkpoint says ${cp.root}` };
  if (!Number.isSafeInteger(index) || index < 0 || index >= cp.size) return { ok: false, code: 'index-out-of-range', message: `entry must be 0 to ${cp.size - 1}, got ${describeValue(index)}` };
  const entryBytes = ix.entries.get(index);
  if (!entryBytes) return { ok: false, code: 'entry-not-loaded', message: `entry ${index} was not kept when the bundle was indexed (pass it in options.entries)` };
  return { ok: true, index, size: cp.size, text: formatTurnReceipt({ index, proof: proof!, signedCheckpoint, entryBytes }) };
}

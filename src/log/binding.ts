/**
 * The log binding of a session checkpoint (docs/PROTOCOL.md §15.5): a C2SP
 * tlog-proof whose `extra` line is the session checkpoint's engine-log leaf
 * (§15.1), whose index and inclusion path place that leaf in the engine
 * log, and whose checkpoint is a log checkpoint signed by the log key
 * (§15.3; witnesses' cosignatures may follow). It shows a grader that the
 * day they were handed is one the public log lists: an operator who hides a
 * day, or shows a second run of it, is seen by whoever reads the log.
 *
 * Made by {@link logBinding} from an {@link EngineLog}; checked by
 * {@link verifyLogBinding} with the log's verifier key alone, in the order
 * of §15.5. Expected refusals are results with a stable `TALLY_LOG_*` code.
 */
import { TallyError, parseEngineLogLeaf } from '../protocol/index.js';
import { formatTlogProof } from '../receipt/checkpoint/tlogProof.js';
import { openNote } from '../receipt/note/open.js';
import { sha256 } from '../codec/sha256.js';
import type { EngineLog, LogCheckpoint } from './engine-log.js';
import { verifyLogBindingWith, type BoundCheckpoint, type VerifyLogBindingOptions, type VerifyLogBindingResult } from './binding-rule.js';

export { LOG_BINDING_CODES, verifyLogBindingWith } from './binding-rule.js';
export type { BoundCheckpoint, LogBindingCode, VerifyLogBindingOptions, VerifyLogBindingResult, VerifyLogBindingWithOptions } from './binding-rule.js';

/**
 * Checks a log binding offline with the pinned log verifier key(s), by the
 * one rule {@link verifyLogBindingWith} (§15.5's order and codes). Never
 * throws on input.
 *
 * @example
 * const r = verifyLogBinding(text, { logVerifiers: [logVkey], checkpoint: { origin, size, root }, seal: true });
 * if (!r.ok) refuse(r.code); // e.g. TALLY_LOG_LEAF_MISMATCH
 */
export function verifyLogBinding(text: string, options: VerifyLogBindingOptions): VerifyLogBindingResult {
  const { logVerifiers, ...rest } = options;
  return verifyLogBindingWith(text, { ...rest, digest: sha256, open: (note) => openNote(note, logVerifiers) });
}

/** Leaves read per step while looking for a checkpoint leaf, from the end backwards. */
const FIND_CHUNK = 1024;

/**
 * The position of the checkpoint leaf of `checkpoint` in the log read so far
 * (the last one, should a process have logged it twice), or -1. Reads the
 * leaves from the end backwards (a recent checkpoint is found in the first
 * read; one not logged reads them all).
 */
export async function findCheckpointLeaf(log: EngineLog, checkpoint: BoundCheckpoint, upTo = log.size): Promise<number> {
  for (let end = Math.min(upTo, log.size); end > 0; end -= FIND_CHUNK) {
    const from = Math.max(0, end - FIND_CHUNK);
    const got = await log.leaves(from, end);
    for (let i = got.length - 1; i >= 0; i--) {
      const p = parseEngineLogLeaf(got[i]!);
      if (p.ok && p.leaf.kind === 'checkpoint' && p.leaf.origin === checkpoint.origin && p.leaf.size === checkpoint.size && p.leaf.root === checkpoint.root) return from + i;
    }
  }
  return -1;
}

/**
 * The log binding of `checkpoint` (a tlog-proof text, §15.5) in the log
 * checkpoint `logCheckpoint` (its signed note may carry cosignatures; default:
 * sign one now, {@link EngineLog.checkpoint}). Throws `TALLY_LOG_NOT_LOGGED`
 * when the log of that size holds no leaf for the checkpoint.
 *
 * @example
 * const text = await logBinding(log, { origin, size, root });
 */
export async function logBinding(log: EngineLog, checkpoint: BoundCheckpoint, logCheckpoint?: LogCheckpoint): Promise<string> {
  const cp = logCheckpoint ?? (await log.checkpoint());
  if (cp.size > log.size) await log.sync();
  const index = await findCheckpointLeaf(log, checkpoint, cp.size);
  if (index < 0) throw new TallyError('TALLY_LOG_NOT_LOGGED', 'The engine log holds no leaf for this session checkpoint.', { details: `${checkpoint.origin} size ${checkpoint.size} root ${checkpoint.root}; log size ${cp.size}` });
  return formatTlogProof({ index, proof: await log.inclusionProof(index, cp.size), signedCheckpoint: cp.signedCheckpoint, extraData: await log.leaf(index) });
}

/**
 * The one misuse rule every store applies to an append request before it
 * looks at its data: the request must describe one consistent step.
 */
import { TallyError } from '../protocol/errors.js';
import { phaseAfter, slotIndex } from '../protocol/slots.js';
import type { AppendRequest, SessionHead, StoredEntry } from './types.js';

/**
 * Throws `TALLY_STORE_MISUSE` unless `r` adds entry `expected.size` and
 * produces the head (size + 1, entry hash) of the same session, and the
 * entry sits where the phase rules put its kind: a frame or turn at
 * {@link slotIndex} of its ordinal, a finalize (no ordinal) anywhere after
 * the genesis, and the new head is in the phase that kind leaves
 * ({@link phaseAfter}). A genesis is never appended (`createSession` writes
 * it). A store that keeps the phase (or judges "sealed" by the last kind)
 * can then never be told two different things.
 *
 * @example
 * checkAppendRequest(request); // before any store work
 */
export function checkAppendRequest(r: AppendRequest): void {
  const e = r.entry;
  if (e.index !== r.expected.size || r.next.size !== r.expected.size + 1 || r.next.head !== e.hash || r.next.sessionId !== r.sessionId) {
    throw new TallyError('TALLY_STORE_MISUSE', 'An append request must add entry `expected.size` and produce the head (size + 1, entry hash) of the same session.');
  }
  const placed =
    e.kind === 'frame' || e.kind === 'turn'
      ? e.ordinal !== undefined && slotIndex(e.kind, e.ordinal) === e.index
      : e.kind === 'finalize' && e.ordinal === undefined && e.index > 0;
  if (!placed) {
    throw new TallyError('TALLY_STORE_MISUSE', `An append request puts a ${e.kind}${e.ordinal === undefined ? '' : ` of ordinal ${e.ordinal}`} at entry ${e.index}, where the phase rules do not (a frame of ordinal k is entry 2k + 3, its turn 2k + 4).`);
  }
  if (r.next.phase !== phaseAfter(e.kind)) {
    throw new TallyError('TALLY_STORE_MISUSE', `An append request leaves the session ${JSON.stringify(r.next.phase)} after a ${e.kind}; the phase rules say ${phaseAfter(e.kind)}.`);
  }
}

/**
 * Throws `TALLY_STORE_MISUSE` unless `genesis` and `head` describe a new
 * session: the genesis at index 0 and the head of size 1 it makes, awaiting
 * its first frame.
 */
export function checkNewSession(genesis: StoredEntry, head: SessionHead): void {
  if (genesis.kind !== 'genesis' || genesis.index !== 0 || head.size !== 1 || head.head !== genesis.hash || head.phase !== phaseAfter('genesis')) {
    throw new TallyError('TALLY_STORE_MISUSE', 'createSession needs the genesis entry (index 0) and the head of size 1 it makes, awaiting its first frame.');
  }
}

/** Refuses an engine-log leaf that is not 1 to 65535 bytes (what a tlog-tiles entry bundle holds). */
export function checkLogLeaf(leaf: Uint8Array | undefined): void {
  if (leaf === undefined) return;
  if (!(leaf instanceof Uint8Array) || leaf.length < 1 || leaf.length > 0xffff) throw new TallyError('TALLY_STORE_MISUSE', 'An engine log leaf is 1 to 65535 bytes.');
}

/** Refuses a full engine-log hash tile that is not 8192 bytes at a level 0 to 63 and a non-negative index. */
export function checkTile(level: number, index: number, hashes: Uint8Array): void {
  if (!Number.isInteger(level) || level < 0 || level > 63 || !Number.isSafeInteger(index) || index < 0) throw new TallyError('TALLY_STORE_MISUSE', 'An engine log tile has a level 0 to 63 and a non-negative index.');
  if (!(hashes instanceof Uint8Array) || hashes.length !== 8192) throw new TallyError('TALLY_STORE_MISUSE', 'A full engine log tile is 256 hashes of 32 bytes.');
}

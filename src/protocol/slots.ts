/**
 * Where each frame and turn sits in a valid chain.
 *
 * The phase rules (docs/PROTOCOL.md §5, "Verifying a bundle") fix the layout:
 * entry 0 is the genesis, frame ordinals run -1, 0, 1, … without gaps, and
 * every frame is answered by exactly one turn before the next frame (or the
 * finalize, which is last). So the frame of ordinal `k` is entry `2k + 3`
 * and its turn is entry `2k + 4`. A store may key slots by index through
 * this (the PostgreSQL store does: one key for both, see migration 6). The
 * same rules fix the phase each kind of entry leaves the session in.
 */
import type { EntryKind, SessionPhase } from './vocabulary.js';

/**
 * The index of the entry holding the frame or turn of `ordinal` in any valid
 * chain.
 *
 * @example
 * slotIndex('frame', -1); // 1 (the OPEN frame)
 * slotIndex('turn', 0);   // 4
 */
export function slotIndex(kind: 'frame' | 'turn', ordinal: number): number {
  return 2 * ordinal + (kind === 'frame' ? 3 : 4);
}

/**
 * The phase a session is in after an entry of `kind`: a genesis or a turn
 * leaves it awaiting a frame, a frame leaves that frame pending, a finalize
 * seals it.
 *
 * @example
 * phaseAfter('frame'); // 'pending'
 */
export function phaseAfter(kind: EntryKind): SessionPhase {
  return kind === 'frame' ? 'pending' : kind === 'finalize' ? 'sealed' : 'awaiting-frame';
}

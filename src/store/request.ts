/**
 * The one misuse rule every store applies to an append request before it
 * looks at its data: the request must describe one consistent step.
 */
import { TallyError } from '../protocol/errors.js';
import { slotIndex } from '../protocol/slots.js';
import type { AppendRequest } from './types.js';

/**
 * Throws `TALLY_STORE_MISUSE` unless `r` adds entry `expected.size` and
 * produces the head (size + 1, entry hash) of the same session, and the
 * entry sits where the phase rules put its kind: a frame or turn at
 * {@link slotIndex} of its ordinal, a finalize (no ordinal) anywhere after
 * the genesis. A genesis is never appended (`createSession` writes it).
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
}

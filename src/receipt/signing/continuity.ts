/**
 * The continuity rule: the engine key signs only on a database that can be
 * shown to hold everything the key signed from it. A failover (a promoted
 * standby starts a new timeline), a restored backup or another database
 * changes the store's position ({@link StorePosition}); an asynchronous
 * standby may then lack the last rows of the signing log, and signing on it
 * could give a second root for a size already signed. The store itself
 * cannot show that nothing was lost (the lost rows are gone with it), so
 * across a change of system or timeline continuity needs evidence from
 * outside the new store:
 *
 * - this signer's own last row, still held by the store: the WAL a standby
 *   replays is a prefix, so every earlier commit of this signer is held too
 *   (and one that is not held proves a loss: the refusal is recorded in the
 *   store, so every signer and every restart refuses until an operator
 *   acknowledges);
 * - an operator's acknowledgement of this system and timeline
 *   (`tally operator acknowledge-failover`, which checks the store against
 *   the signing log and what witnesses acknowledged).
 *
 * Without either, signing is refused (`TALLY_SIGN_TIMELINE_CHANGED`, not
 * retryable). This module decides; the stores read and stamp positions.
 */
import { TallyError } from '../../protocol/index.js';
import type { ContinuityEvent, ContinuityState, SignedCheckpointRecord, StorePosition } from '../../store/types.js';

/** The code of a continuity refusal. */
export const TIMELINE_CHANGED_CODE = 'TALLY_SIGN_TIMELINE_CHANGED';

/** Why signing may go on. */
export type ContinuityProof = 'no-history' | 'same-position' | 'own-record-held' | 'acknowledged';

/** The verdict of {@link judgeContinuity}. */
export type ContinuityVerdict =
  | { readonly ok: true; readonly proof: ContinuityProof }
  | {
      readonly ok: false;
      readonly message: string;
      /** A loss this signer proved: record it (a `refused` event) so the refusal outlives this process. */
      readonly record?: Omit<ContinuityEvent, 'at'>;
    };

/** Whether two positions are on one system and timeline (LSNs move on). */
export function samePlace(a: StorePosition, b: StorePosition): boolean {
  return a.system === b.system && a.timeline === b.timeline;
}

/** A position as text for messages: `system 7301… timeline 2 at 0/3000148`. */
export function describePosition(p: StorePosition): string {
  return `system ${p.system} timeline ${p.timeline} at ${p.lsn}`;
}

function describeRecord(r: SignedCheckpointRecord): string {
  return `${r.origin} size ${r.size} root ${r.root.slice(0, 16)}…`;
}

/**
 * The rule (see the module comment), in order: a recorded refusal for the
 * current system and timeline that no later acknowledgement lifted refuses;
 * this signer's last row missing refuses (and is to be recorded); otherwise
 * signing goes on when the signing log is empty or unpositioned, when its
 * last row is on the current system and timeline, when an operator
 * acknowledged this system and timeline, or when this signer's own last row
 * is held. Anything else refuses.
 */
export function judgeContinuity(state: ContinuityState): ContinuityVerdict {
  const { current, last, mine, events } = state;
  let here: ContinuityEvent | undefined;
  for (const e of events) if (samePlace(e.position, current)) here = e;
  if (here?.kind === 'refused') {
    return { ok: false, message: `signing on this store was refused at ${new Date(here.at).toISOString()} (${here.detail}); an operator must check and acknowledge it (tally operator acknowledge-failover)` };
  }
  if (mine !== undefined && !mine.held) {
    const detail = `this engine recorded ${describeRecord(mine.record)}${mine.record.position ? ` on ${describePosition(mine.record.position)}` : ''}; the store, now on ${describePosition(current)}, no longer holds it`;
    return {
      ok: false,
      message: `${detail}; an operator must check and acknowledge it (tally operator acknowledge-failover)`,
      record: { kind: 'refused', position: current, detail, lost: { origin: mine.record.origin, size: mine.record.size, root: mine.record.root } },
    };
  }
  if (last?.position === undefined) return { ok: true, proof: 'no-history' };
  if (samePlace(last.position, current)) return { ok: true, proof: 'same-position' };
  if (here?.kind === 'acknowledged') return { ok: true, proof: 'acknowledged' };
  if (mine !== undefined) return { ok: true, proof: 'own-record-held' };
  const what = last.position.system === current.system ? `timeline ${last.position.timeline} to ${current.timeline}` : `system ${last.position.system} to ${current.system}`;
  return {
    ok: false,
    message: `the store moved from ${what} since the signing log's last row (${describeRecord(last)} on ${describePosition(last.position)}), and nothing outside the store proves it holds everything signed there; an operator must check and acknowledge it (tally operator acknowledge-failover)`,
  };
}

/** The key refused to sign: the store may have forgotten what it signed (nothing was signed). */
export class ContinuityRefusedError extends TallyError {
  declare readonly code: typeof TIMELINE_CHANGED_CODE;
  constructor(message: string, current: StorePosition) {
    super(TIMELINE_CHANGED_CODE, `The engine key refuses to sign: ${message}.`, { details: `store now on ${describePosition(current)}` });
    this.name = 'ContinuityRefusedError';
  }
}

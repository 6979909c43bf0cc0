/** Witness answers that mean the engine's store lost or forked the history a witness cosigned. */
import { instruments } from './instruments.js';
import type { WitnessConflictReason } from './names.js';

/** Counts one such answer (`tally.witness.conflicts`, label `reason`). */
export function recordWitnessConflict(reason: WitnessConflictReason): void {
  instruments()?.witnessConflicts.add(1, { reason });
}

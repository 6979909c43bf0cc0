import { TallyError } from '../protocol/index.js';

/** A stored row failed re-derivation on load: the store was corrupted or tampered with. */
export class StoreCorruptionError extends TallyError {
  /** The first bad entry's index in its session. */
  readonly index: number;
  readonly sessionId: string;
  constructor(sessionId: string, index: number, reason: string) {
    super('TALLY_STORE_CORRUPT', `Stored session ${sessionId.slice(0, 16)}… is corrupt at entry ${index}.`, { details: reason });
    this.name = 'StoreCorruptionError';
    this.index = index;
    this.sessionId = sessionId;
  }
}

/** The engine could not settle an append after repeated races (should not happen with a correct store). */
export class ContentionError extends TallyError {
  constructor(sessionId: string, attempts: number) {
    super('TALLY_CONTENTION', `Could not append to session ${sessionId.slice(0, 16)}… after ${attempts} attempts.`);
    this.name = 'ContentionError';
  }
}

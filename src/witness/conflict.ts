/**
 * Witnesses as the engine's outside signing log. Each witness's answers say
 * what it cosigned for an origin (its size from a 409, its size and root from
 * a cosignature); the engine's store must hold that history. When an answer
 * says it does not — the witness holds a size beyond the store's tree, or its
 * root at a size the store holds is not the store's (409 at a known size,
 * 422 on the consistency proof from its root) — the store was rolled back or
 * failed over and lost what the witness saw: the engine refuses to sign that
 * origin again ({@link WITNESS_CONFLICT_CODE}, not retryable), and the
 * conflict is counted, logged and reported to readiness.
 */
import { TallyError } from '../protocol/index.js';
import { recordWitnessConflict, type WitnessConflictReason } from '../telemetry/index.js';

/** The code of a refusal to sign over a witness's contradicting history (thrown, like a signing-log refusal). */
export const WITNESS_CONFLICT_CODE = 'TALLY_SIGN_WITNESS_CONFLICT';

/** One witness answer that contradicts the store. */
export interface WitnessConflict {
  readonly witness: string;
  readonly origin: string;
  readonly reason: WitnessConflictReason;
  /** The size the witness holds (cosigned) for the origin. */
  readonly witnessSize: number;
  /** The store's tree size for the origin when the answer came. */
  readonly storeSize: number;
  readonly message: string;
}

/** What a witness is known to hold for an origin (root only once it cosigned a checkpoint of ours). */
export interface WitnessHolds {
  readonly size: number;
  readonly root?: string;
}

/** Receives each new conflict once (`tally serve` logs it at error level). */
export type ConflictListener = (conflict: WitnessConflict) => void;

/** The per-process record of what witnesses hold and where they contradict the store. */
export class WitnessWatch {
  private readonly holds = new Map<string, WitnessHolds>(); // witness \n origin
  private readonly byOrigin = new Map<string, WitnessConflict>();
  private readonly listeners: ConflictListener[] = [];

  /** Adds a listener of new conflicts. */
  onConflict(listener: ConflictListener): void {
    this.listeners.push(listener);
  }

  /** Records what a witness holds for an origin (a larger size replaces a smaller one). */
  learn(witness: string, origin: string, holds: WitnessHolds): void {
    const k = `${witness}\n${origin}`;
    const had = this.holds.get(k);
    if (had === undefined || holds.size > had.size || (holds.size === had.size && holds.root !== undefined)) this.holds.set(k, holds);
  }

  /** What each witness is known to hold for `origin`. */
  heldFor(origin: string): readonly (WitnessHolds & { readonly witness: string })[] {
    const out: (WitnessHolds & { readonly witness: string })[] = [];
    for (const [k, h] of this.holds) {
      const i = k.indexOf('\n');
      if (k.slice(i + 1) === origin) out.push({ witness: k.slice(0, i), ...h });
    }
    return out;
  }

  /** Records a conflict (the first per origin is kept), counts it and tells the listeners. */
  conflict(c: WitnessConflict): void {
    recordWitnessConflict(c.reason);
    if (!this.byOrigin.has(c.origin)) this.byOrigin.set(c.origin, c);
    for (const l of this.listeners) l(c);
  }

  /** The conflict that bars signing `origin`, if any. */
  conflictOf(origin: string): WitnessConflict | undefined {
    return this.byOrigin.get(origin);
  }

  /** Every origin's conflict, oldest first (readiness fails while this is not empty). */
  conflicts(): readonly WitnessConflict[] {
    return [...this.byOrigin.values()];
  }
}

/** The refusal to sign `c.origin`. */
export function witnessConflictError(c: WitnessConflict): TallyError {
  return new TallyError(
    WITNESS_CONFLICT_CODE,
    `Witness ${c.witness} holds a history of ${c.origin} the store does not (${c.reason}): the store lost what was signed; nothing is signed for this origin.`,
    { details: c.message },
  );
}

import type { CanonicalObject, ChainError, ChainPin, Entry, SessionDiagnostic } from '../../protocol/index.js';
import type { TurnRuler } from '../../session/index.js';
import type { NonceOwner, TranscriptStore } from '../../store/types.js';
import type { FieldChange } from './diff.js';

/** How a replayed entry differs from the recorded one. */
export type ReplayDivergenceKind = 'ruling-diverged' | 'entry-diverged' | 'rejected';

/**
 * One nondeterminism error: the entry at `index` could not be re-derived
 * from the transcript (a durable-execution engine would call it a
 * nondeterminism error).
 * - `ruling-diverged`: the same turn, but the ruler now rules otherwise;
 *   `expected`/`actual` are the recorded and re-derived rulings (absent =
 *   no ruling).
 * - `entry-diverged`: the engine built another entry from the same input;
 *   `expected`/`actual` are both entries (links excluded from the comparison).
 * - `rejected`: the engine refused the recorded input outright; `actual`
 *   is its diagnostic. Replay cannot go on after a refusal.
 *
 * `recorded` / `rederived` name the two sides plainly (`expected` read
 * backwards: it is what the transcript recorded); `expected` / `actual` are
 * kept, with the same values, for readers of the first JSON shape
 * (deprecated). `changes` lists the differing fields, paths from the entry
 * (`ruling.quota.cap`), at most FIELD_CHANGES_MAX.
 */
export type ReplayDivergence =
  | { readonly index: number; readonly kind: 'ruling-diverged'; readonly message: string; readonly recorded?: CanonicalObject; readonly rederived?: CanonicalObject; readonly changes: readonly FieldChange[]; readonly expected?: CanonicalObject; readonly actual?: CanonicalObject }
  | { readonly index: number; readonly kind: 'entry-diverged'; readonly message: string; readonly recorded: Entry; readonly rederived: Entry; readonly changes: readonly FieldChange[]; readonly expected: Entry; readonly actual: Entry }
  | { readonly index: number; readonly kind: 'rejected'; readonly message: string; readonly recorded: Entry; readonly expected: Entry; readonly actual: { readonly diagnostic: SessionDiagnostic; readonly message: string } };

/**
 * A fact replay took from the transcript because it cannot be re-derived
 * offline: a nonce first used in ANOTHER session (`nonce-owner`: the recorded
 * `replayed_nonce` ruling names it), or a reservation the ruler's
 * `recordedReservations` names (`judge-slot`: the owner of the last slot of
 * a full judge-rate window, `agentId` being the window's key). Trusted, not
 * verified: check it by replaying the named session too.
 */
export interface ExternalFact {
  /** Index of the turn whose ruling relied on the fact. */
  readonly index: number;
  readonly kind: 'nonce-owner' | (string & {});
  readonly agentId: string;
  readonly nonce: string;
  readonly owner: NonceOwner;
}

/** Options of `replay`. */
export interface ReplayOptions {
  /**
   * The ruler to re-derive rulings with: an instance, or a factory given the
   * replay engine's store (for rulers that read the transcript they rule on,
   * like the referee's: `(store) => createRefereeRuler({ store })`). Default:
   * a fresh `createIntentRuler()`; `null` for a session recorded without a
   * ruler. It MUST be the ruler the session was recorded with.
   */
  readonly ruler?: TurnRuler | ((store: TranscriptStore) => TurnRuler) | null;
  /** Values pinned out of band (from a signed checkpoint): a mismatch fails the chain stage. */
  readonly pin?: ChainPin;
  /** Accept a bundle without a seal (default false: a sealed day). */
  readonly requireSealed?: boolean;
  /** Stop collecting (and replaying) after this many divergences (default 100). */
  readonly maxDivergences?: number;
  /**
   * Reads an external nonce fact from a recorded ruling (default:
   * {@link intentExternalNonceFact}, the intent ruling's `first` when it
   * names another session).
   */
  readonly externalNonceFact?: (recorded: CanonicalObject, sessionId: string, index?: number) => NonceOwner | undefined;
  /** Called after each entry is replayed (progress). */
  readonly onEntry?: (index: number) => void;
  /**
   * Where the fresh engine writes the re-derived day: `'disk'` (default) a
   * `ScratchStore` (a throwaway SQLite file) in a new directory under the OS
   * temp dir (or `scratchDir`), removed afterwards, so memory stays bounded however long
   * the day (the store holds what grows: entries, slots, nonce reservations);
   * `'memory'` a `MemoryStore`, the reference (every entry on the heap).
   * Both re-derive the same bytes.
   */
  readonly scratch?: 'disk' | 'memory';
  /** Parent directory of the `'disk'` scratch (default: the OS temp dir). */
  readonly scratchDir?: string;
}

/** Outcome of `replay`. */
export type ReplayResult =
  | {
      readonly ok: true;
      readonly sessionId: string;
      readonly size: number;
      readonly receiptRoot: string;
      readonly sealed: boolean;
      /** Turns replayed, and how many of them carried a ruling that was re-derived identically. */
      readonly turns: number;
      readonly rulings: number;
      readonly externalFacts: readonly ExternalFact[];
    }
  | (ChainError & { readonly stage: 'chain' })
  | {
      readonly ok: false;
      readonly stage: 'replay';
      readonly sessionId: string;
      readonly size: number;
      readonly receiptRoot: string;
      /** In entry order; the first is the root cause, later ones may follow from it. */
      readonly divergences: readonly ReplayDivergence[];
      /** True when replay stopped early (a refusal, or `maxDivergences` reached). */
      readonly stoppedAt?: number;
      readonly externalFacts: readonly ExternalFact[];
    };

/** Inputs, results and extension points of the session controller. */
import type { CanonicalObject, CanonicalValue, FailureClass, SessionDiagnostic, SessionPhase, SessionSpec, Entry } from '../protocol/index.js';
import type { NonceClaim, NonceOwner } from '../store/types.js';

/** An expected refusal: nothing was written. */
export interface Rejection {
  readonly ok: false;
  readonly diagnostic: SessionDiagnostic;
  /** What exactly was wrong, for humans. */
  readonly message: string;
}

/** `session/open` result. */
export type OpenResult = { readonly ok: true; readonly sessionId: string; readonly created: boolean } | Rejection;

/** `session/frame` input: the runtime delivers the OPEN frame (-1) or a wake. */
export interface FrameInput {
  readonly sessionId: string;
  readonly ordinal: number;
  /** Frame time, epoch milliseconds; never decreases along a session. */
  readonly time: number;
  readonly data?: CanonicalValue;
  /** The head the runtime believes it extends (optional; checked when given). */
  readonly parentHash?: string;
}

/** `session/frame` result. */
export type FrameResult =
  | {
      readonly ok: true;
      readonly sessionId: string;
      readonly ordinal: number;
      readonly index: number;
      readonly entryHash: string;
      readonly frameRoot: string;
      readonly duplicate: boolean;
    }
  | Rejection;

/** A turn body as submitted. */
export type TurnBodyInput =
  | { readonly kind: 'authored'; readonly bytes: Uint8Array; /** declared authored hash, checked */ readonly hash?: string }
  | { readonly kind: 'stand-down'; readonly failureClass: FailureClass };

/** `session/turn` input: the one answer to the frame at `ordinal`. */
export interface TurnInput {
  readonly sessionId: string;
  readonly ordinal: number;
  /** Hash of the frame entry this turn answers (the chain head when it was delivered). */
  readonly parentHash: string;
  /** Root of the frame this turn answers. */
  readonly frameRoot: string;
  readonly body: TurnBodyInput;
  /** Declared turn-claim hash, checked against the recomputed one. */
  readonly claimHash?: string;
}

/** `session/turn` result; a retry of recorded bytes returns the settled result with `duplicate: true`. */
export type TurnResult =
  | {
      readonly ok: true;
      readonly sessionId: string;
      readonly ordinal: number;
      readonly index: number;
      readonly entryHash: string;
      readonly duplicate: boolean;
      readonly ruling?: CanonicalObject;
    }
  | Rejection;

/** The sealed receipt: pin `receiptRoot` and `size` to verify the day. */
export interface Receipt {
  readonly sessionId: string;
  /** Entries in the sealed transcript, the seal included. */
  readonly size: number;
  /** RFC 6962 root over all `size` entries (hex). */
  readonly receiptRoot: string;
  /** Hash of the finalize entry. */
  readonly head: string;
}

/** `session/finalize` result. */
export type FinalizeResult = { readonly ok: true; readonly receipt: Receipt; readonly duplicate: boolean } | Rejection;

/** One entry as `session/events` returns it. */
export interface SessionEvent {
  readonly index: number;
  readonly hash: string;
  readonly entry: Entry;
}

/** `session/events` result; pass `next` as `after` to resume. */
export type EventsResult =
  | { readonly ok: true; readonly sessionId: string; readonly events: readonly SessionEvent[]; readonly next: number; readonly more: boolean; readonly phase: SessionPhase }
  | Rejection;

/** Counts of what a session holds. */
export interface SessionCounts {
  readonly frames: number;
  readonly turns: number;
  readonly authored: number;
  readonly standDowns: number;
}

/** `session/describe` result. */
export type DescribeResult =
  | {
      readonly ok: true;
      readonly sessionId: string;
      readonly name: string;
      readonly phase: SessionPhase;
      readonly size: number;
      readonly head: string;
      /** RFC 6962 root over every entry so far. */
      readonly root: string;
      /** The ordinal the next frame must carry. */
      readonly nextOrdinal: number;
      readonly pending?: { readonly ordinal: number; readonly frameRoot: string; readonly entryHash: string; readonly time: number };
      readonly lastFrameTime?: number;
      readonly counts: SessionCounts;
      readonly receipt?: Receipt;
      /** What a ruler adds (for example quota figures). */
      readonly extensions?: CanonicalObject;
    }
  | Rejection;

/** What a ruler sees when it rules on an authored turn. */
export interface RuleContext {
  readonly sessionId: string;
  readonly spec: SessionSpec;
  readonly ordinal: number;
  /** Time of the frame being answered: the ruler's only clock. */
  readonly frameTime: number;
  readonly frameData?: CanonicalValue;
  readonly authored: Uint8Array;
  /** Who first reserved a nonce, in any session of the store. */
  nonceOwner(agentId: string, nonce: string): Promise<NonceOwner | undefined>;
  /**
   * Reserves `claims` now, for the entry this turn will be, ahead of its
   * append (present when the store can, and never on replay): a ruler about
   * to spend something outside the transcript — a judge call — reserves what
   * the call uses first, so racing engines never spend it twice. Resolves
   * once every claim is reserved; when one is already held the engine rules
   * the turn again on fresh state (the call does not return). Reserved claims
   * are not passed again in the outcome's `nonces`; they stay reserved
   * whether or not the turn is ever written.
   */
  readonly reserve?: (claims: readonly NonceClaim[]) => Promise<void>;
  /**
   * Replay only: the ruling as recorded in the transcript being replayed. A
   * ruler whose decision depended on an outside party (a judge model) takes
   * that party's signed evidence from here instead of asking again, and
   * re-verifies it; everything else it re-derives.
   */
  readonly recorded?: CanonicalObject;
}

/** Options of `Engine.turn`. */
export interface TurnOptions {
  /** Replay only: the recorded ruling, passed to the ruler as `context.recorded`. */
  readonly recordedRuling?: CanonicalObject;
}

/** A ruling and the nonces it consumes (reserved atomically with the turn). */
export interface RuleOutcome {
  readonly ruling: CanonicalObject;
  readonly nonces: readonly NonceClaim[];
}

/**
 * A store reservation a recorded ruling names as the fact it relied on, which
 * replay (holding only one session) may not re-derive: replay answers lookups
 * of exactly this key from it when its own store does not know the key, and
 * lists it as an external fact (trusted, not verified).
 */
export interface RecordedReservation {
  /** What the reservation is, for the listing (e.g. `judge-slot`). */
  readonly kind: string;
  readonly agentId: string;
  readonly nonce: string;
  readonly owner: NonceOwner;
}

/**
 * Rules on authored turns (the intent contract plugs in here). A ruler MUST be
 * deterministic in its context, so replaying a transcript reaches the same
 * rulings.
 */
export interface TurnRuler {
  /** Validates spec extensions at `open`; returns a problem or `undefined`. */
  checkSpec?(spec: SessionSpec): string | undefined;
  /** Rules on one authored body; `undefined` records no ruling. */
  rule(context: RuleContext): Promise<RuleOutcome | undefined> | RuleOutcome | undefined;
  /**
   * Rules on a stand-down (for example to record what the answered frame
   * carried, such as ticket transitions); absent or `undefined` = no ruling.
   */
  ruleStandDown?(context: Omit<RuleContext, 'authored'>): Promise<RuleOutcome | undefined> | RuleOutcome | undefined;
  /**
   * Replay only: the reservations (other than the intent's own nonce owner)
   * this ruler's recorded ruling names as facts from the store.
   */
  recordedReservations?(recorded: CanonicalObject, sessionId: string): readonly RecordedReservation[];
  /**
   * The engine has just appended `entry` (its stored bytes are exactly the canonical encoding of
   * this value, of hash `hash`, at `index`); `authored`, for an authored turn, is the very byte
   * array it ruled on. A ruler may fold it from here instead of reading it back; it must change
   * nothing the ruler would derive from the store (the engine calls it after the commit, under
   * the session's lock, and ignores what it does).
   */
  appended?(sessionId: string, spec: SessionSpec, index: number, hash: string, entry: Entry, authored?: Uint8Array): void;
}

/**
 * The verifier's result and option types (chain.ts re-exports them): its
 * error codes, its summary, a pin, and the state a proven segment ends in.
 */
import type { Entry } from './entries.js';

/** Why a bundle failed verification. */
export type ChainErrorCode =
  | 'empty'
  | 'too-large'
  | 'not-utf8'
  | 'not-json'
  | 'not-canonical'
  | 'bad-structure'
  | 'not-genesis'
  | 'wrong-session'
  | 'broken-link'
  | 'unexpected-entry'
  | 'bad-ordinal'
  | 'time-regressed'
  | 'bad-frame-root'
  | 'bad-authored-bytes'
  | 'bad-authored-hash'
  | 'bad-seal-size'
  | 'bad-seal-root'
  | 'after-seal'
  | 'not-sealed'
  | 'missing-newline'
  | 'pin-mismatch';
/** Runtime tuple of every {@link ChainErrorCode}. */
export const CHAIN_ERROR_CODES = [
  'empty',
  'too-large',
  'not-utf8',
  'not-json',
  'not-canonical',
  'bad-structure',
  'not-genesis',
  'wrong-session',
  'broken-link',
  'unexpected-entry',
  'bad-ordinal',
  'time-regressed',
  'bad-frame-root',
  'bad-authored-bytes',
  'bad-authored-hash',
  'bad-seal-size',
  'bad-seal-root',
  'after-seal',
  'not-sealed',
  'missing-newline',
  'pin-mismatch',
] as const satisfies readonly ChainErrorCode[];

/** A verification failure naming the 0-based entry (line) index. */
export interface ChainError {
  readonly ok: false;
  readonly index: number;
  readonly code: ChainErrorCode;
  readonly message: string;
}

/** A verified chain. `receiptRoot` is the RFC 6962 root over all `size` entries. */
export interface ChainSummary {
  readonly ok: true;
  readonly sessionId: string;
  readonly size: number;
  readonly head: string;
  readonly receiptRoot: string;
  readonly sealed: boolean;
  readonly frames: number;
  readonly turns: number;
}

/** A checked entry as the verifier saw it, for callers that want more than a verdict. */
export interface VerifiedEntry {
  readonly ok: true;
  readonly index: number;
  readonly hash: string;
  readonly entry: Entry;
}

/** What a grader pins: any given member must match the bundle. */
export interface ChainPin {
  readonly sessionId?: string;
  readonly size?: number;
  readonly receiptRoot?: string;
}

/** Options of {@link ChainVerifier.finish}. */
export interface FinishOptions {
  /** Reject a bundle that stops before its seal (default true): this is how a truncated tail is caught. */
  readonly requireSealed?: boolean;
  /** Values pinned out of band (for example from a signed receipt); a mismatch is `pin-mismatch`. */
  readonly pin?: ChainPin;
}

/**
 * Where a segment of lines, proven by a verifier that {@link SegmentVerifier.assume}d
 * its first line, left the chain state (src/codec/parallel/segments.ts).
 * Counts and `firstFrameTime` cover the lines after the first.
 */
export interface SegmentState {
  readonly head: Uint8Array;
  readonly pending: boolean;
  readonly pendingOrdinal: number;
  readonly pendingRoot: Uint8Array;
  readonly expectOrdinal: number;
  readonly lastTime: number;
  readonly frames: number;
  readonly turns: number;
  /** The time of the segment's first frame after its first line (its check against the frame before was left to the join), or -1. */
  readonly firstFrameTime: number;
}

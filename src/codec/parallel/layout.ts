/**
 * The compact summary a verification worker returns for each line: one
 * fixed-size record per line in a transferable buffer, so the main thread
 * applies a batch in order without parsing or hashing anything itself.
 *
 * Record layout (byte offsets, {@link RECORD_BYTES} per line):
 * - 0  u8  status: {@link STATUS_OK} or {@link STATUS_FAILED} (failure in `failures`)
 * - 1  u8  kind: {@link KIND_CODES}
 * - 2  u8  authored problem: 0 none, 1 bad-authored-bytes, 2 bad-authored-hash
 * - 3  u8  body is authored (turns): 1 or 0
 * - 8  f64 ordinal (frame, turn)
 * - 16 f64 time (frame) or size (finalize)
 * - 24 32B entry hash
 * - 56 32B session (non-genesis)
 * - 88 32B parent (non-genesis)
 * - 120 32B frameRoot as written (frame, turn) or root (finalize)
 * - 152 32B frame root recomputed from the frame's content (frame)
 */
import type { LineInspection, SegmentState } from '../../protocol/chain.js';

/** Bytes per line record. */
export const RECORD_BYTES = 184;
/** Field offsets inside a record. */
export const OFF = { status: 0, kind: 1, authored: 2, isAuthored: 3, ordinal: 8, timeOrSize: 16, hash: 24, session: 56, parent: 88, claimedRoot: 120, computedRoot: 152 } as const;
/** The line passed its context-free checks. */
export const STATUS_OK = 0;
/** The line failed a context-free check (see the batch's `failures`). */
export const STATUS_FAILED = 1;
/** Entry kinds as record codes. */
export const KIND_CODES = { genesis: 0, frame: 1, turn: 2, finalize: 3 } as const;
/** Authored problems as record codes. */
export const AUTHORED_CODES = { none: 0, 'bad-authored-bytes': 1, 'bad-authored-hash': 2 } as const;

/** A batch of lines sent to a worker: the lines back to back, and where each ends. */
export interface BatchRequest {
  readonly id: number;
  readonly bytes: ArrayBuffer;
  /**
   * `ends[i]` is the offset just past line i; line i starts at `ends[i - 1]`
   * (or 0), or one byte later when `separated` (each line then followed by
   * its newline, as the bundle has it).
   */
  readonly ends: Uint32Array;
  /** Each line is followed by one newline byte in `bytes` (default false). */
  readonly separated?: boolean;
  /**
   * The bundle index of the batch's first line: when given, the worker also
   * returns the roots of the batch's aligned perfect subtrees
   * ({@link subtreeHeights}), so the main thread merges a few roots instead of
   * hashing every interior node.
   */
  readonly base?: number;
}

/**
 * The heights of the perfect subtrees that tile the leaves `[base, base +
 * count)`, left to right, each starting on its own boundary (a multiple of
 * its width): the same split a frontier of `base` leaves merges. Pure.
 *
 * @example
 * subtreeHeights(6, 7) // [1, 2, 0]: leaves 6-7, 8-11 and 12
 */
export function subtreeHeights(base: number, count: number): number[] {
  const out: number[] = [];
  let at = base;
  const end = base + count;
  while (at < end) {
    let h = 0;
    // Grow while the next width still starts on its boundary and fits.
    while (at % 2 ** (h + 1) === 0 && at + 2 ** (h + 1) <= end) h++;
    out.push(h);
    at += 2 ** h;
  }
  return out;
}

/** A line that failed a context-free check. */
export interface LineFailure {
  readonly line: number;
  readonly code: Extract<LineInspection, { ok: false }>['code'];
  readonly message: string;
}

/** A worker's answer for one batch. */
export interface BatchResult {
  readonly id: number;
  readonly records: ArrayBuffer;
  readonly failures: readonly LineFailure[];
  /** With a request's `base`: the 32-byte roots of `subtreeHeights(base, lines)`, back to back (meaningless past a failed line). */
  readonly roots?: ArrayBuffer;
  /** The request's `bytes`, handed back (transferred) once read, for the sender to reuse. */
  readonly bytes?: ArrayBuffer;
}

/** A segment of whole lines (each with its newline), in pieces, for a pool to prove apart from the lines before it (./segments.ts). */
export interface SegmentJob {
  /** The segment's bytes, in order (views the caller keeps, unchanged, until the answer). */
  readonly pieces: readonly Uint8Array[];
  /** Their total length. */
  readonly length: number;
}

/** A segment handed to a pool: proven as soon as a worker takes it; its tree part once `finish` gives its place. */
export interface SegmentTicket {
  /** The answer, given the bundle index of the segment's first line (call once). */
  finish(base: number): Promise<SegmentResult>;
  /** Called once the worker has proven the segment, before `finish`: how many lines, ending where (so the places of the segments after it are known early). */
  onProven?: (proven: number, provenEnd: number) => void;
}

/** Messages to a worker thread (./worker.ts): a segment to prove, then the index of its first line. It answers `{ id, proven, provenEnd, early: true }` once proven, then the {@link SegmentResult}. */
export type SegmentMessage = { readonly segment: true; readonly id: number; readonly bytes: ArrayBuffer; readonly length: number } | { readonly finish: true; readonly id: number; readonly base: number };

/** What a worker proved of a segment: its first `proven` lines (ending at byte `provenEnd`), and the tree part and state of all but the first. */
export interface SegmentResult {
  readonly id: number;
  readonly proven: number;
  readonly provenEnd: number;
  /** The roots of `subtreeHeights(base + 1, proven - 1)`, 32 bytes each: the tree of the proven lines after the first. */
  readonly roots: ArrayBuffer;
  readonly state: SegmentState;
  /** A worker thread's segment bytes, handed back for reuse. */
  readonly bytes?: ArrayBuffer;
}

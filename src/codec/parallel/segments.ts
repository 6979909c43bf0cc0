/**
 * Parallel verification by segments: the bundle is cut into segments of
 * whole lines, shared between the main thread and the workers (child
 * processes or threads). Every segment is first PROVEN apart from the lines
 * before it (./segment-proof.ts): the verifier's fast path alone, having
 * assumed the state the segment's first line claims to follow
 * (`SegmentVerifier.assume`) — by a worker as soon as it is handed the segment,
 * or by the main thread for its own share as soon as the segment is cut. No
 * segment's proof waits for another's, and nothing needs the lines counted
 * ahead: the one thing that needs a segment's place in the bundle, the shape
 * of its part of the tree, waits for the join.
 *
 * The main thread JOINS the segments in order: it checks the segment's first
 * line by the full rules, hands the worker the segment's first index (the
 * worker then answers with its tree part: the roots of the aligned perfect
 * subtrees of the lines after the first), adopts the rest
 * (`SegmentVerifier.adopt`: the one assumption left, the first frame's time, is
 * checked there), and checks by itself whatever was not proven. So every
 * verdict, index and message is the one-thread verifier's: a worker can only
 * save the main thread work.
 */
import type { ChainError, ChainSummary, FinishOptions } from '../../protocol/chain.js';
import { SegmentVerifier } from '../../protocol/chain-segments.js';
import { LineCarry, unterminatedProblem } from '../../protocol/stream.js';
import { sha256, sha256Into } from '../sha256.js';
import { subtreeHeights, type SegmentResult, type SegmentTicket } from './layout.js';
import type { VerifyPool } from './pool.js';
import { proveSegment, segmentRoots, type SegmentProof } from './segment-proof.js';

const NEWLINE = 0x0a;
/** Segments cut but not yet joined, at most, per party (the main thread and each worker): bounds memory, and keeps a worker from waiting for work. */
const QUEUED_PER_PARTY = 3;

/** Options of {@link verifyBySegments}. */
export interface SegmentOptions extends FinishOptions {
  readonly pool: VerifyPool;
  /** Bytes per segment, unless one line alone is longer. */
  readonly segmentBytes: number;
  readonly onProgress?: ((entries: number) => void) | undefined;
}

/** A segment cut and not yet joined: its bytes (views of the input, in order), and its proof here or its worker's ticket. */
interface Queued {
  readonly pieces: readonly Uint8Array[];
  readonly length: number;
  readonly proof?: SegmentProof;
  readonly ticket?: SegmentTicket;
  answer?: Promise<SegmentResult>;
  /** The index the worker was given for the segment's first line (its tree part is for that place only). */
  base?: number;
  /** The worker's answer, once it has come. */
  result?: SegmentResult;
  /** Its lines, once known: when every line was proven (the proof reached the segment's end). */
  lines?: number;
}

/** One turn of the event loop: a worker's answer is read only then. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Verifies `chunks` by segments (see the module comment). */
export async function verifyBySegments(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: SegmentOptions): Promise<ChainSummary | ChainError> {
  const queue: Queued[] = [];
  try {
    return await bySegments(queue, chunks, options);
  } finally {
    // Stopped early (a verdict, or a throw): the workers still hold the proofs of segments never joined; let them answer, unheard.
    for (const q of queue) {
      if (q.ticket === undefined || q.answer !== undefined) continue;
      q.answer = q.ticket.finish(0);
      q.answer.catch(() => undefined);
    }
    // A worker's late word that it has proven a segment places nothing now.
    queue.length = 0;
  }
}

async function bySegments(queue: Queued[], chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: SegmentOptions): Promise<ChainSummary | ChainError> {
  const { pool, segmentBytes } = options;
  const v = new SegmentVerifier(sha256, { digestInto: sha256Into });
  // An equal share (measured: shares of 0.35 to 0.6 with one worker did no better).
  const share = 1 / (pool.size + 1);
  const limit = QUEUED_PER_PARTY * (pool.size + 1);
  let made = 0;

  /** Checks here the lines of `pieces` from byte `from` of the segment on; the first error, if any. */
  const here = (pieces: readonly Uint8Array[], from: number): ChainError | undefined => {
    let skip = from;
    for (const bytes of pieces) {
      if (skip >= bytes.length) {
        skip -= bytes.length;
        continue;
      }
      let pos = skip;
      skip = 0;
      for (;;) {
        let nl = v.acceptAt(bytes, pos);
        if (nl < 0) {
          nl = bytes.indexOf(NEWLINE, pos);
          if (nl < 0) break;
          const bad = v.accept(bytes.subarray(pos, nl));
          if (bad) return bad;
        }
        pos = nl + 1;
      }
    }
    return undefined;
  };
  /**
   * Hands each worker's segment its place as soon as it is known: the index
   * after the lines joined so far and those of the segments queued before it,
   * as long as each of them was proven whole (its lines then counted by its
   * proof). A place is given once; where a count is missing, the rest wait
   * for the join.
   */
  const place = (): void => {
    let base = v.size;
    for (const q of queue) {
      if (q.ticket !== undefined && q.answer === undefined) {
        q.base = base;
        q.answer = q.ticket.finish(base);
        q.answer.then(
          (r) => void (q.result = r),
          () => undefined,
        );
      }
      if (q.lines === undefined) return;
      base += q.lines;
    }
  };
  /** Joins a segment whose proof (and tree part, for entry `base` on) is `r`. */
  const join = (q: Queued, base: number, r: { readonly proven: number; readonly provenEnd: number; readonly state: SegmentResult['state']; readonly roots: ArrayBuffer } | undefined): ChainError | undefined => {
    const head = q.pieces[0]!;
    const first = head.indexOf(NEWLINE);
    let bad = v.accept(head.subarray(0, first));
    if (!bad) {
      // The proven lines after the first, if the join holds; else all of them here.
      const count = r === undefined ? -1 : r.proven - 1;
      const from = r !== undefined && count >= 0 && v.size === base + 1 && v.adopt(r.state, count, new Uint8Array(r.roots), subtreeHeights(base + 1, count)) ? r.provenEnd : first + 1;
      bad = here(q.pieces, from);
    }
    options.onProgress?.(v.size);
    return bad;
  };
  /**
   * Joins the oldest segments as far as their answers have come (all of them
   * with `all`), asking each worker's for its tree part as soon as its place
   * is known; waits for an answer only with `all` or when the queue is full.
   */
  const advance = async (all: boolean): Promise<ChainError | undefined> => {
    let turned = false;
    for (;;) {
      const q = queue[0];
      if (q === undefined) return undefined;
      const base = v.size;
      if (q.proof !== undefined) {
        const bad = join(q, base, { ...q.proof, roots: segmentRoots(q.proof, base) });
        if (bad) return bad;
        queue.shift();
        continue;
      }
      if (q.answer === undefined) place();
      if (q.base !== base) {
        // Placed early, but the lines before did not come to what their proofs counted (a line was rejected: the verdict is on its way): no tree part from it.
        const bad = join(q, base, undefined);
        if (bad) return bad;
        queue.shift();
        continue;
      }
      if (q.result === undefined) {
        if (!all && queue.length < limit) {
          // Let the answers already sent in; if this one has not come, go on cutting and proving.
          if (turned) return undefined;
          await turn();
          turned = true;
          continue;
        }
        q.result = await q.answer!;
      }
      const bad = join(q, base, q.result);
      if (bad) return bad;
      queue.shift();
    }
  };

  let pieces: Uint8Array[] = [];
  let used = 0;
  /** Cuts the segment filled so far: proven here (the main thread's share) or handed to a worker; then joins what it can. */
  const flush = async (): Promise<ChainError | undefined> => {
    if (used === 0) return undefined;
    const k = made++;
    const length = used;
    if (Math.floor((k + 1) * share) > Math.floor(k * share)) {
      const proof = proveSegment(pieces);
      queue.push({ pieces, length, proof, ...(proof.provenEnd === length ? { lines: proof.proven } : {}) });
    } else {
      const q: Queued = { pieces, length, ticket: pool.submit({ pieces, length }) };
      q.ticket!.onProven = (proven, provenEnd) => {
        if (provenEnd === q.length) q.lines = proven;
        place();
      };
      queue.push(q);
    }
    pieces = [];
    used = 0;
    place();
    return advance(false);
  };
  /** Adds `piece` (whole lines, a view kept until its segment is joined) to the segment being filled, cutting it first when it does not fit. */
  const add = async (piece: Uint8Array): Promise<ChainError | undefined> => {
    if (used > 0 && used + piece.length > segmentBytes) {
      const bad = await flush();
      if (bad) return bad;
    }
    pieces.push(piece);
    used += piece.length;
    return undefined;
  };

  const carry = new LineCarry();
  let unterminated: Uint8Array | undefined;
  for await (const input of chunks) {
    const chunk = input.constructor === Uint8Array ? input : new Uint8Array(input.buffer, input.byteOffset, input.length);
    let pos = 0;
    if (carry.holding) {
      const done = carry.end(chunk, true);
      if (!('line' in done)) {
        if ((unterminated = done.overflow) !== undefined) break;
        continue;
      }
      const bad = await add(done.line);
      if (bad) return bad;
      pos = done.next;
    }
    // Whole lines of this chunk, in pieces that fit the segment being filled.
    const last = chunk.lastIndexOf(NEWLINE);
    while (pos <= last) {
      let end = last + 1;
      const room = segmentBytes - used;
      if (end - pos > room) {
        // The last line that fits, or one line (the segment is then sent first).
        const cut = room > 0 ? chunk.lastIndexOf(NEWLINE, pos + room - 1) : -1;
        end = cut >= pos ? cut + 1 : chunk.indexOf(NEWLINE, pos) + 1;
      }
      const bad = await add(chunk.subarray(pos, end));
      if (bad) return bad;
      pos = end;
    }
    if ((unterminated = carry.keep(chunk, pos)) !== undefined) break;
  }
  unterminated ??= carry.rest();
  let bad = await flush();
  if (!bad) bad = await advance(true);
  if (bad) return bad;
  if (unterminated) {
    const p = unterminatedProblem(unterminated);
    return v.reject(p.code, p.message);
  }
  return v.finish({
    ...(options.requireSealed === undefined ? {} : { requireSealed: options.requireSealed }),
    ...(options.pin === undefined ? {} : { pin: options.pin }),
  });
}

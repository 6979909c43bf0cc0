/**
 * Parallel verification by segments: the bundle is cut into segments of
 * whole lines, taken in turn by the main thread and by each worker. The main
 * thread verifies its segments itself with the one-thread verifier
 * (`ChainVerifier`, the fast path with the reference behind it). A worker
 * proves its segment with the same verifier's fast path alone, having
 * assumed the state the segment's first line claims to follow
 * (`ChainVerifier.assume`), and returns where that left the chain and the
 * entry hashes, without the tree (whose shape needs the bundle index, not
 * known until the segments before are counted). The main thread then checks
 * the segment's first line by the full rules, joins the rest
 * (`ChainVerifier.adopt`: the one assumption left, the first frame's time,
 * is checked there), merges the leaves into the tree, and checks by itself
 * whatever the worker did not prove. So every verdict, index and message is
 * the one-thread verifier's: a worker can only save the main thread work.
 *
 * On two cores this costs about the CPU of one thread in all, against about
 * 1.5 times that for the per-line records of `analyzeBatch` (see
 * docs/PERFORMANCE.md, issue 33, third round).
 */
import { ChainVerifier, type ChainError, type ChainSummary, type FinishOptions } from '../../protocol/chain.js';
import { MAX_CARRY, concatBytes, unterminatedProblem } from '../../protocol/stream.js';
import { sha256, sha256Into } from '../sha256.js';
import { subtreeRoots } from './analyze.js';
import { subtreeHeights, type SegmentResult } from './layout.js';
import type { VerifyPool } from './pool.js';

const NEWLINE = 0x0a;
/** Segments queued beyond one per worker (measured best on 2 cores: 2; 0 left a worker idle while this thread verified its own). */
const AHEAD = 2;

/**
 * The worker's part (a thread's or a child process's): proves the lines of
 * `bytes` (each ending in a newline) from the first on, stopping at the first
 * line the fast path does not prove (a seal among them). `base` is the bundle
 * index of the first line.
 */
export function proveSegment(bytes: Uint8Array, base: number): Omit<SegmentResult, 'id' | 'bytes'> {
  let leaves = new Uint8Array(32 * 1024);
  let n = 0;
  const v = new ChainVerifier(sha256, {
    digestInto: sha256Into,
    onLeaf: (h) => {
      if (32 * n + 32 > leaves.length) {
        const grown = new Uint8Array(leaves.length * 2);
        grown.set(leaves);
        leaves = grown;
      }
      leaves.set(h, 32 * n++);
    },
  });
  let proven = 0;
  let pos = 0;
  const first = bytes.indexOf(NEWLINE);
  if (first >= 0) {
    const line = bytes.subarray(0, first);
    if (v.assume(line) && v.prove(line)) {
      v.restartCounts();
      n = 0;
      proven = 1;
      pos = first + 1;
      for (;;) {
        const nl = bytes.indexOf(NEWLINE, pos);
        if (nl < 0 || !v.prove(bytes.subarray(pos, nl))) break;
        proven++;
        pos = nl + 1;
      }
    }
  }
  const roots = subtreeRoots(leaves, 32, 0, base + 1, Math.max(0, proven - 1));
  return { proven, provenEnd: pos, roots, state: v.segmentState() };
}

/** Options of {@link verifyBySegments}. */
export interface SegmentOptions extends FinishOptions {
  readonly pool: VerifyPool;
  /** Bytes per segment, unless one line alone is longer. */
  readonly segmentBytes: number;
  readonly onProgress?: ((entries: number) => void) | undefined;
}

/** A segment in line order (whole lines, in pieces that are views of the input): the main thread's own, or a worker's answer to come. */
type Queued = { readonly pieces: readonly Uint8Array[]; readonly result?: undefined } | { readonly pieces: readonly Uint8Array[]; readonly base: number; readonly result: Promise<SegmentResult> };

/** Verifies `chunks` by segments (see the module comment). */
export async function verifyBySegments(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: SegmentOptions): Promise<ChainSummary | ChainError> {
  const { pool, segmentBytes } = options;
  const v = new ChainVerifier(sha256, { digestInto: sha256Into });
  const turn = pool.size + 1; // segment k goes to the main thread when k % turn === 0
  const queue: Queued[] = [];
  let made = 0;
  /** Lines in the segments made so far: the bundle index of the next segment's first line. */
  let before = 0;

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
        const nl = bytes.indexOf(NEWLINE, pos);
        if (nl < 0) break;
        const bad = v.accept(bytes.subarray(pos, nl));
        if (bad) return bad;
        pos = nl + 1;
      }
    }
    return undefined;
  };
  /** Verifies or joins the oldest segment. */
  const settle = async (): Promise<ChainError | undefined> => {
    const q = queue.shift()!;
    if (q.result === undefined) {
      const bad = here(q.pieces, 0);
      options.onProgress?.(v.size);
      return bad;
    }
    const r = await q.result;
    const head = q.pieces[0]!;
    const first = head.indexOf(NEWLINE);
    let bad = v.accept(head.subarray(0, first));
    if (!bad) {
      // The worker's lines after the first, if the join holds; else all of them here.
      const count = r.proven - 1;
      const from = count >= 0 && v.size === q.base + 1 && v.adopt(r.state, count, new Uint8Array(r.roots), subtreeHeights(q.base + 1, count)) ? r.provenEnd : first + 1;
      bad = here(q.pieces, from);
    }
    options.onProgress?.(v.size);
    return bad;
  };

  let pieces: Uint8Array[] = [];
  let used = 0;
  let lines = 0;
  /**
   * Queues the segment filled so far; settles the oldest once more than
   * `pool.size + AHEAD` are queued, so that a worker has its next segment
   * queued while it proves one (it is not idle while this thread verifies or
   * joins).
   */
  const flush = async (): Promise<ChainError | undefined> => {
    if (used === 0) return undefined;
    const k = made++;
    const base = before;
    before += lines;
    if (k % turn === 0) queue.push({ pieces });
    else {
      const result = pool.prove({ pieces, length: used, base });
      result.catch(() => undefined); // observed when settled
      queue.push({ pieces, base, result });
    }
    pieces = [];
    used = 0;
    lines = 0;
    while (queue.length > pool.size + AHEAD) {
      const bad = await settle();
      if (bad) return bad;
    }
    return undefined;
  };
  /** Adds `piece` (whole lines, a view kept until its segment is settled) to the segment being filled, flushing first when it does not fit. */
  const add = async (piece: Uint8Array): Promise<ChainError | undefined> => {
    if (used > 0 && used + piece.length > segmentBytes) {
      const bad = await flush();
      if (bad) return bad;
    }
    pieces.push(piece);
    used += piece.length;
    for (let nl = piece.indexOf(NEWLINE); nl >= 0; nl = piece.indexOf(NEWLINE, nl + 1)) lines++;
    return undefined;
  };

  let carry: Uint8Array[] = [];
  let carryLen = 0;
  let unterminated: Uint8Array | undefined;
  for await (const input of chunks) {
    const chunk = input.constructor === Uint8Array ? input : new Uint8Array(input.buffer, input.byteOffset, input.length);
    let pos = 0;
    if (carryLen > 0) {
      const nl = chunk.indexOf(NEWLINE);
      if (nl < 0) {
        carry.push(chunk.slice());
        carryLen += chunk.length;
        if (carryLen > MAX_CARRY) {
          unterminated = concatBytes(carry, carryLen);
          break;
        }
        continue;
      }
      carry.push(chunk.subarray(0, nl + 1));
      const bad = await add(concatBytes(carry, carryLen + nl + 1));
      if (bad) return bad;
      carry = [];
      carryLen = 0;
      pos = nl + 1;
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
    if (pos < chunk.length) {
      carry.push(chunk.slice(pos));
      carryLen += chunk.length - pos;
      if (carryLen > MAX_CARRY) {
        unterminated = concatBytes(carry, carryLen);
        break;
      }
    }
  }
  if (unterminated === undefined && carryLen > 0) unterminated = concatBytes(carry, carryLen);
  let bad = await flush();
  while (!bad && queue.length > 0) bad = await settle();
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

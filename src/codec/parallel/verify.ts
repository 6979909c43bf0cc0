/**
 * `verifyBundleParallel`: the same verdict as `verifyBundle`, with the work
 * spread over worker threads. By default (`split: 'segments'`, ./segments.ts)
 * the main thread and the workers take whole segments of lines in turn. With
 * `split: 'records'` the per-line work (UTF-8, JSON, canonical bytes,
 * structure, entry hash, frame root, authored hash) runs on the workers, and
 * the main thread splits lines, batches them, and applies the workers'
 * compact records strictly in line order with the sequential checks and the
 * Merkle frontier. Either way the first error (index, code and message) is
 * the one `verifyBundle` reports.
 *
 * Memory stays bounded: at most `maxInFlight` batches (each at most
 * `batchBytes` of lines, or one longer line), or one segment per worker and
 * one filling, are in flight at any time.
 */
import { TallyError } from '../../protocol/errors.js';
import type { ChainError, ChainPin, ChainSummary } from '../../protocol/chain.js';
import { MAX_CARRY, concatBytes, unterminatedProblem } from '../../protocol/stream.js';
import type { BatchResult } from './layout.js';
import { createVerifyPool, type VerifyPool } from './pool.js';
import { Sequencer } from './sequencer.js';
import { verifyBySegments } from './segments.js';
import { traceVerify } from '../../telemetry/index.js';

/** Options of {@link verifyBundleParallel}. */
export interface ParallelVerifyOptions {
  /** Reject a bundle without a finalize seal (default true). */
  readonly requireSealed?: boolean;
  /** Values pinned out of band (session id, size, receipt root). */
  readonly pin?: ChainPin;
  /** Called with the number of entries verified so far, after each batch. */
  readonly onProgress?: (entries: number) => void;
  /** Worker pool to use (default: one shared pool sized to the machine, idle workers never keep the process alive). */
  readonly pool?: VerifyPool;
  /** Most lines per batch (default 512). */
  readonly batchLines?: number;
  /** Most bytes of lines per batch, unless one line alone is longer (default 1 MiB). */
  readonly batchBytes?: number;
  /** Most batches in flight (default 4 per worker, at least 2). */
  readonly maxInFlight?: number;
  /**
   * How the work is shared (default `'segments'`): the main thread and the
   * workers take whole segments of lines in turn (./segments.ts), or
   * `'records'`: workers analyse every line into a record and the main thread
   * applies the records in order (./analyze.ts, ./sequencer.ts).
   */
  readonly split?: 'segments' | 'records';
  /** Bytes per segment with `split: 'segments'`, unless one line alone is longer (default 512 KiB: measured best of 64 KiB to 2 MiB on 2 cores). */
  readonly segmentBytes?: number;
}

let shared: VerifyPool | undefined;

/** The process-wide pool used when no `pool` option is given (created on first use). */
export function sharedVerifyPool(): VerifyPool {
  shared ??= createVerifyPool();
  return shared;
}

function positive(name: string, v: number | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (!Number.isSafeInteger(v) || v < 1) throw new TallyError('TALLY_VERIFY_OPTIONS_INVALID', `${name} must be a positive integer.`, { details: `got ${String(v)}` });
  return v;
}

/**
 * Verifies a bundle given as a stream (or iterable) of byte chunks, using
 * worker threads; same result as `verifyBundle` (which stays the reference).
 *
 * @example
 * const r = await verifyBundleParallel(createReadStream(path));
 * if (!r.ok) console.error(r.index, r.code, r.message);
 */
export function verifyBundleParallel(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: ParallelVerifyOptions = {}): Promise<ChainSummary | ChainError> {
  return traceVerify(() => verifyParallel(chunks, options));
}

async function verifyParallel(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: ParallelVerifyOptions): Promise<ChainSummary | ChainError> {
  const pool = options.pool ?? sharedVerifyPool();
  if (options.split === undefined || options.split === 'segments') {
    return verifyBySegments(chunks, {
      pool,
      segmentBytes: positive('segmentBytes', options.segmentBytes, 1 << 19),
      onProgress: options.onProgress,
      ...(options.requireSealed === undefined ? {} : { requireSealed: options.requireSealed }),
      ...(options.pin === undefined ? {} : { pin: options.pin }),
    });
  }
  if (options.split !== 'records') throw new TallyError('TALLY_VERIFY_OPTIONS_INVALID', "split must be 'segments' or 'records'.", { details: `got ${String(options.split)}` });
  if (pool.mode !== 'threads') throw new TallyError('TALLY_VERIFY_OPTIONS_INVALID', "split: 'records' needs a pool of threads (createVerifyPool({ mode: 'threads' })).");
  const batchLines = positive('batchLines', options.batchLines, 512);
  const batchBytes = positive('batchBytes', options.batchBytes, 1 << 20);
  const maxInFlight = Math.max(2, positive('maxInFlight', options.maxInFlight, 4 * pool.size));
  const seq = new Sequencer();
  const inFlight: Array<{ result: Promise<BatchResult>; lines: number }> = [];

  // The batch being filled: lines with their newlines, as the bundle has them
  // (copied a run of lines at a time, not line by line), and where each ends.
  // Its buffer is transferred whole to the worker, which hands it back with
  // the records: at most `maxInFlight + 1` buffers exist, refilled in turn
  // (no copy of the batch and no fresh buffer per batch).
  const spare: ArrayBuffer[] = [];
  const nextBuffer = (): Uint8Array => new Uint8Array(spare.pop() ?? new ArrayBuffer(batchBytes));
  let buf = nextBuffer();
  let used = 0;
  let ends = new Uint32Array(batchLines);
  let count = 0;
  let base = 0;

  const dispatch = (): void => {
    if (count === 0) return;
    const bytes = buf.buffer as ArrayBuffer;
    // The workers also hash the batch's interior tree nodes (its subtree roots from `base`).
    const result = pool.run({ bytes, ends: ends.slice(0, count), separated: true, base });
    result.catch(() => undefined); // observed when applied; never an unhandled rejection
    inFlight.push({ result, lines: count });
    base += count;
    used = 0;
    count = 0;
    buf = nextBuffer();
  };
  // Applies the oldest batch; false once an error is known.
  const applyOldest = async (): Promise<boolean> => {
    const next = inFlight.shift()!;
    const r = await next.result;
    // Only buffers of the usual size are kept (one grown for a long line is let go).
    if (r.bytes !== undefined && r.bytes.byteLength === batchBytes) spare.push(r.bytes);
    const err = seq.apply(r, next.lines);
    if (err) return false;
    options.onProgress?.(seq.size);
    return true;
  };
  /** Room for `need` more bytes and one more line: dispatches the batch first when full (waiting while too many are in flight). */
  const room = async (need: number): Promise<boolean> => {
    if (used + need <= buf.length && count < batchLines) return true;
    dispatch();
    if (need > buf.length) {
      spare.push(buf.buffer as ArrayBuffer);
      buf = new Uint8Array(need);
    }
    while (inFlight.length >= maxInFlight) if (!(await applyOldest())) return false;
    return true;
  };

  // The partial line carried between chunks (the same rules as LineSplitter).
  let carry: Uint8Array[] = [];
  let carryLen = 0;
  let unterminated: Uint8Array | undefined;
  chunkLoop: for await (const input of chunks) {
    // A plain view of a Buffer chunk: the typed array's own indexOf and subarray.
    const chunk = input.constructor === Uint8Array ? input : new Uint8Array(input.buffer, input.byteOffset, input.length);
    let pos = 0;
    if (carryLen > 0) {
      const nl = chunk.indexOf(NEWLINE);
      if (nl >= 0) {
        carry.push(chunk.subarray(0, nl));
        const len = carryLen + nl;
        if (!(await room(len + 1))) return seq.error!;
        for (const part of carry) {
          buf.set(part, used);
          used += part.length;
        }
        ends[count++] = used;
        buf[used++] = NEWLINE;
        carry = [];
        carryLen = 0;
        pos = nl + 1;
      }
    }
    if (carryLen === 0) {
      // Whole lines of this chunk: [runStart, pos) is copied into the batch at `used` in one go.
      let runStart = pos;
      for (;;) {
        const nl = chunk.indexOf(NEWLINE, pos);
        if (nl < 0) break;
        const len = nl + 1 - pos;
        if (used + (pos - runStart) + len > buf.length || count >= batchLines) {
          buf.set(chunk.subarray(runStart, pos), used);
          used += pos - runStart;
          runStart = pos;
          if (!(await room(len))) return seq.error!;
        }
        ends[count++] = used + (nl - runStart);
        pos = nl + 1;
      }
      buf.set(chunk.subarray(runStart, pos), used);
      used += pos - runStart;
    }
    if (pos < chunk.length) {
      carry.push(chunk.slice(pos));
      carryLen += chunk.length - pos;
      // Bound memory: a "line" longer than any legal entry cannot be valid.
      if (carryLen > MAX_CARRY) {
        unterminated = concatBytes(carry, carryLen);
        break chunkLoop;
      }
    }
  }
  if (unterminated === undefined && carryLen > 0) unterminated = concatBytes(carry, carryLen);
  dispatch();
  while (inFlight.length > 0) if (!(await applyOldest())) return seq.error!;
  if (unterminated) {
    const p = unterminatedProblem(unterminated);
    return seq.reject(p.code, p.message);
  }
  return seq.finish({
    ...(options.requireSealed === undefined ? {} : { requireSealed: options.requireSealed }),
    ...(options.pin === undefined ? {} : { pin: options.pin }),
  });
}

const NEWLINE = 0x0a;


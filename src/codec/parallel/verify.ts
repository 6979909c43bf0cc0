/**
 * `verifyBundleParallel`: the same verdict as `verifyBundle`, with the
 * per-line work (UTF-8, JSON, canonical bytes, structure, entry hash, frame
 * root, authored hash) spread over worker threads. The main thread splits
 * lines, batches them, and applies the workers' compact records strictly in
 * line order with the sequential checks and the Merkle frontier, so the first
 * error (index, code and message) is the one `verifyBundle` reports.
 *
 * Memory stays bounded: at most `maxInFlight` batches (each at most
 * `batchBytes` of lines, or one longer line) are in flight at any time.
 */
import { TallyError } from '../../protocol/errors.js';
import type { ChainError, ChainPin, ChainSummary } from '../../protocol/chain.js';
import { LineSplitter, unterminatedProblem } from '../../protocol/stream.js';
import type { BatchResult } from './layout.js';
import { createVerifyPool, type VerifyPool } from './pool.js';
import { Sequencer } from './sequencer.js';
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
  const batchLines = positive('batchLines', options.batchLines, 512);
  const batchBytes = positive('batchBytes', options.batchBytes, 1 << 20);
  const maxInFlight = Math.max(2, positive('maxInFlight', options.maxInFlight, 4 * pool.size));
  const seq = new Sequencer();
  const inFlight: Array<{ result: Promise<BatchResult>; lines: number }> = [];

  let buf = new Uint8Array(batchBytes);
  let used = 0;
  let ends: number[] = [];

  const dispatch = (): void => {
    if (ends.length === 0) return;
    const bytes = buf.buffer.slice(buf.byteOffset, buf.byteOffset + used);
    const result = pool.run({ bytes, ends: Uint32Array.from(ends) });
    result.catch(() => undefined); // observed when applied; never an unhandled rejection
    inFlight.push({ result, lines: ends.length });
    used = 0;
    ends = [];
  };
  // Applies the oldest batch; false once an error is known.
  const applyOldest = async (): Promise<boolean> => {
    const next = inFlight.shift()!;
    const err = seq.apply(await next.result, next.lines);
    if (err) return false;
    options.onProgress?.(seq.size);
    return true;
  };

  const splitter = new LineSplitter();
  let unterminated: Uint8Array | undefined;
  chunkLoop: for await (const chunk of chunks) {
    const { lines, overflow } = splitter.push(chunk);
    for (const line of lines) {
      if (used + line.length > buf.length || ends.length >= batchLines) {
        dispatch();
        if (line.length > buf.length) buf = new Uint8Array(line.length);
        while (inFlight.length >= maxInFlight) if (!(await applyOldest())) return seq.error!;
      }
      buf.set(line, used);
      used += line.length;
      ends.push(used);
    }
    if (overflow) {
      unterminated = overflow;
      break chunkLoop;
    }
  }
  unterminated ??= splitter.end();
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

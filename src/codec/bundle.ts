/**
 * Bundles: a session exported as JSONL, one entry's exact canonical bytes per
 * line, each line ended by 0x0A. This file streams them in and out; the
 * verification logic itself is the pure {@link ChainVerifier}.
 */
import { createReadStream } from 'node:fs';
import { ChainVerifier, LIMITS, type ChainError, type ChainErrorCode, type ChainPin, type ChainSummary, type VerifiedEntry } from '../protocol/index.js';
import { traceVerify } from '../telemetry/index.js';
import { sha256 } from './sha256.js';

const NEWLINE = 0x0a;

/** Longest partial line carried between chunks before reading stops (it is then `too-large`). */
const MAX_CARRY = 2 * 1_048_576;

/**
 * The error for a piece that did not end in a newline where reading stopped:
 * `too-large` when it is already longer than any entry may be (whether or not
 * a newline follows further on), otherwise `missing-newline`.
 */
export function unterminatedProblem(piece: Uint8Array): { readonly code: ChainErrorCode; readonly message: string } {
  if (piece.length > LIMITS.entryBytes) return { code: 'too-large', message: `entry exceeds ${LIMITS.entryBytes} bytes` };
  return { code: 'missing-newline', message: 'the last line has no terminating newline (truncated?)' };
}

/**
 * Synchronous line splitting for chunked input: `push` returns the complete
 * lines (without their newline) a chunk finishes, `end` the unterminated rest.
 * A partial line longer than any legal entry is cut short and reported as
 * `overflow` (unterminated), which bounds memory.
 */
export class LineSplitter {
  private carry: Uint8Array[] = [];
  private carryLen = 0;

  /** Lines completed by `chunk`, in order; `overflow` ends the stream (nothing after it counts). */
  push(chunk: Uint8Array): { readonly lines: Uint8Array[]; readonly overflow?: Uint8Array } {
    const lines: Uint8Array[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl < 0) break;
      const piece = chunk.subarray(start, nl);
      if (this.carryLen > 0) {
        this.carry.push(piece);
        lines.push(concat(this.carry, this.carryLen + piece.length));
        this.carry = [];
        this.carryLen = 0;
      } else {
        lines.push(piece);
      }
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.carry.push(rest.slice());
      this.carryLen += rest.length;
      // Bound memory: a "line" longer than any legal entry cannot be valid.
      if (this.carryLen > MAX_CARRY) return { lines, overflow: concat(this.carry, this.carryLen) };
    }
    return { lines };
  }

  /** The unterminated last piece, if any. */
  end(): Uint8Array | undefined {
    return this.carryLen > 0 ? concat(this.carry, this.carryLen) : undefined;
  }
}

/** Splits a byte stream into lines (without their newline). The last piece is reported separately. */
export async function* splitLines(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncGenerator<{ line: Uint8Array; terminated: boolean }> {
  const splitter = new LineSplitter();
  for await (const chunk of chunks) {
    const { lines, overflow } = splitter.push(chunk);
    for (const line of lines) yield { line, terminated: true };
    if (overflow) {
      yield { line: overflow, terminated: false };
      return;
    }
  }
  const rest = splitter.end();
  if (rest) yield { line: rest, terminated: false };
}

function concat(parts: Uint8Array[], len: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(len);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Options of {@link verifyBundle}. */
export interface VerifyBundleOptions {
  /** Reject a bundle without a finalize seal (default true). */
  readonly requireSealed?: boolean;
  /** Values pinned out of band (session id, size, receipt root). */
  readonly pin?: ChainPin;
  /** Called for every verified entry (for progress or inspection). */
  readonly onEntry?: (entry: VerifiedEntry) => void;
}

/**
 * Verifies a bundle given as a stream (or iterable) of byte chunks. Memory is
 * bounded by the longest line plus an O(log n) Merkle frontier.
 *
 * @example
 * const r = await verifyBundle([bundleBytes]);
 * if (r.ok) console.log(r.receiptRoot); else console.error(r.index, r.code);
 */
export function verifyBundle(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: VerifyBundleOptions = {}): Promise<ChainSummary | ChainError> {
  return traceVerify(() => verifyLines(chunks, options));
}

async function verifyLines(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: VerifyBundleOptions): Promise<ChainSummary | ChainError> {
  const v = new ChainVerifier(sha256);
  const splitter = new LineSplitter();
  const unterminated = (piece: Uint8Array): ChainError => {
    const p = unterminatedProblem(piece);
    return v.reject(p.code, p.message);
  };
  // Lines are verified synchronously chunk by chunk (no promise per line).
  for await (const chunk of chunks) {
    const { lines, overflow } = splitter.push(chunk);
    for (const line of lines) {
      const r = v.push(line);
      if (!r.ok) return r;
      options.onEntry?.(r);
    }
    if (overflow) return unterminated(overflow);
  }
  const rest = splitter.end();
  if (rest) return unterminated(rest);
  return v.finish({
    ...(options.requireSealed === undefined ? {} : { requireSealed: options.requireSealed }),
    ...(options.pin === undefined ? {} : { pin: options.pin }),
  });
}

/** Options of {@link verifyBundleFile}. */
export interface VerifyBundleFileOptions extends VerifyBundleOptions {
  /**
   * Spread the per-line work over worker threads (`verifyBundleParallel`,
   * same result). `true` uses the shared pool; an object passes its options
   * (for example a `pool`). Ignored when `onEntry` is given, which needs every
   * parsed entry on this thread: use `onProgress` of the parallel options.
   */
  readonly parallel?: boolean | import('./parallel/verify.js').ParallelVerifyOptions;
}

/** Verifies a bundle file by streaming it from disk. */
export async function verifyBundleFile(path: string, options: VerifyBundleFileOptions = {}): Promise<ChainSummary | ChainError> {
  const stream = createReadStream(path, { highWaterMark: 1 << 20 });
  const { parallel, ...sequential } = options;
  if (parallel && options.onEntry === undefined) {
    const { verifyBundleParallel } = await import('./parallel/verify.js');
    const extra = typeof parallel === 'object' ? parallel : {};
    return verifyBundleParallel(stream, {
      ...extra,
      ...(options.requireSealed === undefined ? {} : { requireSealed: options.requireSealed }),
      ...(options.pin === undefined ? {} : { pin: options.pin }),
    });
  }
  return verifyBundle(stream, sequential);
}

/** Joins entry bytes into bundle bytes (each followed by a newline). */
export function encodeBundle(entries: Iterable<Uint8Array>): Uint8Array {
  const list = [...entries];
  let len = 0;
  for (const e of list) len += e.length + 1;
  const out = new Uint8Array(len);
  let o = 0;
  for (const e of list) {
    out.set(e, o);
    o += e.length;
    out[o++] = NEWLINE;
  }
  return out;
}

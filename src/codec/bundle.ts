/**
 * Bundles: a session exported as JSONL, one entry's exact canonical bytes per
 * line, each line ended by 0x0A. This file streams them in and out; the
 * verification loop itself is the pure `verifyChunks` (src/protocol/stream.ts),
 * which the browser's audit page runs too.
 */
import { createReadStream } from 'node:fs';
import { type ChainError, type ChainPin, type ChainSummary, type VerifiedEntry } from '../protocol/index.js';
import { verifyChunks } from '../protocol/stream.js';
import { traceVerify } from '../telemetry/index.js';
import { sha256, sha256Into } from './sha256.js';

const NEWLINE = 0x0a;

export { LineSplitter, splitLines, unterminatedProblem } from '../protocol/stream.js';

/** Options of {@link verifyBundle}. */
export interface VerifyBundleOptions {
  /** Reject a bundle without a finalize seal (default true). */
  readonly requireSealed?: boolean;
  /** Values pinned out of band (session id, size, receipt root). */
  readonly pin?: ChainPin;
  /** Called for every verified entry (for inspection: each entry is then built, which costs; for progress use `onProgress`). */
  readonly onEntry?: (entry: VerifiedEntry) => void;
  /** Called after each chunk with the number of entries verified so far (the verdict-only path: nothing is built per line). */
  readonly onProgress?: (entries: number) => void;
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
  const { onEntry, onProgress } = options;
  return traceVerify(() => verifyChunks(sha256, chunks, {
    digestInto: sha256Into,
    ...(onProgress === undefined ? {} : { onChunk: (v: { readonly size: number }): void => onProgress(v.size) }),
    ...(options.requireSealed === undefined ? {} : { requireSealed: options.requireSealed }),
    ...(options.pin === undefined ? {} : { pin: options.pin }),
    ...(onEntry === undefined ? {} : { onEntry: (e: VerifiedEntry): void => void onEntry(e) }),
  }));
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
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
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

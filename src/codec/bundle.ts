/**
 * Bundles: a session exported as JSONL, one entry's exact canonical bytes per
 * line, each line ended by 0x0A. This file streams them in and out; the
 * verification logic itself is the pure {@link ChainVerifier}.
 */
import { createReadStream } from 'node:fs';
import { ChainVerifier, type ChainError, type ChainPin, type ChainSummary, type VerifiedEntry } from '../protocol/index.js';
import { sha256 } from './sha256.js';

const NEWLINE = 0x0a;

/** Splits a byte stream into lines (without their newline). The last piece is reported separately. */
export async function* splitLines(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncGenerator<{ line: Uint8Array; terminated: boolean }> {
  let carry: Uint8Array[] = [];
  let carryLen = 0;
  for await (const chunk of chunks) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl < 0) break;
      const piece = chunk.subarray(start, nl);
      if (carryLen > 0) {
        carry.push(piece);
        yield { line: concat(carry, carryLen + piece.length), terminated: true };
        carry = [];
        carryLen = 0;
      } else {
        yield { line: piece, terminated: true };
      }
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      carry.push(rest.slice());
      carryLen += rest.length;
      // Bound memory: a "line" longer than any legal entry cannot be valid.
      if (carryLen > 2 * 1_048_576) {
        yield { line: concat(carry, carryLen), terminated: false };
        return;
      }
    }
  }
  if (carryLen > 0) yield { line: concat(carry, carryLen), terminated: false };
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
export async function verifyBundle(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: VerifyBundleOptions = {},
): Promise<ChainSummary | ChainError> {
  const v = new ChainVerifier(sha256);
  for await (const { line, terminated } of splitLines(chunks)) {
    if (!terminated) return v.reject('missing-newline', 'the last line has no terminating newline (truncated?)');
    const r = v.push(line);
    if (!r.ok) return r;
    options.onEntry?.(r);
  }
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

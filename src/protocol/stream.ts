/**
 * Bundles as streams of bytes, verified with the pure {@link ChainVerifier}:
 * line splitting with bounded memory and the one streaming verification loop
 * that `tally verify` (SHA-256 from node:crypto) and the browser's audit page
 * (SHA-256 in a web worker) both run. The digest is passed in; nothing here
 * reads a file.
 */
import { ChainVerifier, type ChainError, type ChainPin, type ChainSummary, type VerifiedEntry } from './chain.js';
import type { Digest } from './bytes.js';
import { LIMITS } from './limits.js';
import type { ChainErrorCode } from './chain.js';

const NEWLINE = 0x0a;

/**
 * The error for a piece that did not end in a newline where reading stopped:
 * `too-large` when it is already longer than any entry may be (whether or not
 * a newline follows further on), otherwise `missing-newline`.
 */
export function unterminatedProblem(piece: Uint8Array): { readonly code: ChainErrorCode; readonly message: string } {
  if (piece.length > LIMITS.entryBytes) return { code: 'too-large', message: `entry exceeds ${LIMITS.entryBytes} bytes` };
  return { code: 'missing-newline', message: 'the last line has no terminating newline (truncated?)' };
}

/** Longest partial line carried between chunks before it is reported as unterminated. */
export const MAX_CARRY = 2 * 1_048_576;

/**
 * The partial line carried between chunks, by one rule for every reader of
 * bundle bytes: kept as copies (the chunk may be reused), ended by the next
 * newline, and reported as overflow once longer than {@link MAX_CARRY}
 * (nothing after it counts).
 */
export class LineCarry {
  private parts: Uint8Array[] = [];
  private length = 0;

  /** True while a partial line is carried. */
  get holding(): boolean {
    return this.length > 0;
  }

  /**
   * Ends the carried line with `chunk` up to its first newline: the line
   * (with that newline when `withNewline`) and where the chunk's own lines
   * start. When the chunk has no newline it is kept whole instead (`next`
   * -1), with `overflow` once the carry is over the limit.
   */
  end(chunk: Uint8Array, withNewline: boolean): { readonly line: Uint8Array; readonly next: number } | { readonly next: -1; readonly overflow?: Uint8Array } {
    const nl = chunk.indexOf(NEWLINE);
    if (nl < 0) {
      const overflow = this.keep(chunk, 0);
      return overflow === undefined ? { next: -1 } : { next: -1, overflow };
    }
    const cut = withNewline ? nl + 1 : nl;
    this.parts.push(chunk.subarray(0, cut));
    const line = concatBytes(this.parts, this.length + cut);
    this.parts = [];
    this.length = 0;
    return { line, next: nl + 1 };
  }

  /** Keeps a copy of `chunk[from, …)` (nothing when empty): the whole carry once it is over the limit. */
  keep(chunk: Uint8Array, from: number): Uint8Array | undefined {
    if (from >= chunk.length) return undefined;
    this.parts.push(chunk.slice(from));
    this.length += chunk.length - from;
    return this.length > MAX_CARRY ? concatBytes(this.parts, this.length) : undefined;
  }

  /** The unterminated rest, if any. */
  rest(): Uint8Array | undefined {
    return this.length > 0 ? concatBytes(this.parts, this.length) : undefined;
  }
}

/**
 * Synchronous line splitting for chunked input: `push` returns the complete
 * lines (without their newline) a chunk finishes, `end` the unterminated rest.
 * A partial line longer than any legal entry is cut short and reported as
 * `overflow` (unterminated), which bounds memory.
 */
export class LineSplitter {
  private readonly carry = new LineCarry();

  /** Lines completed by `chunk`, in order; `overflow` ends the stream (nothing after it counts). */
  push(input: Uint8Array): { readonly lines: Uint8Array[]; readonly overflow?: Uint8Array } {
    // A plain view of a Buffer chunk (a file stream's): its views and
    // searches are the typed array's own, not Buffer's slower wrappers.
    const chunk = input.constructor === Uint8Array ? input : new Uint8Array(input.buffer, input.byteOffset, input.length);
    const lines: Uint8Array[] = [];
    let start = 0;
    if (this.carry.holding) {
      const done = this.carry.end(chunk, false);
      if (!('line' in done)) return done.overflow === undefined ? { lines } : { lines, overflow: done.overflow };
      lines.push(done.line);
      start = done.next;
    }
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl < 0) break;
      lines.push(chunk.subarray(start, nl));
      start = nl + 1;
    }
    const overflow = this.carry.keep(chunk, start);
    return overflow === undefined ? { lines } : { lines, overflow };
  }

  /** The unterminated last piece, if any. */
  end(): Uint8Array | undefined {
    return this.carry.rest();
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

/** The `len` bytes of `parts` in one array (the one part itself when there is one). */
export function concatBytes(parts: readonly Uint8Array[], len: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(len);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Options of {@link verifyChunks}. */
export interface VerifyChunksOptions {
  /** Reject a bundle without a finalize seal (default true). */
  readonly requireSealed?: boolean;
  /** Values pinned out of band (session id, size, receipt root). */
  readonly pin?: ChainPin;
  /**
   * Called for every verified entry with its exact line bytes (a view into the
   * chunk: copy to keep) and the verifier (for its frontier). A returned
   * promise is awaited before the next line.
   */
  readonly onEntry?: (entry: VerifiedEntry, line: Uint8Array, verifier: ChainVerifier) => void | Promise<void>;
  /**
   * Called for every accepted line when `onEntry` is absent: nothing is built
   * for the line (the verdict-only path); `verifier.size` is its index + 1 and
   * `verifier.headView()` its entry hash. `line` is a view into the chunk.
   */
  readonly onAccepted?: (line: Uint8Array, verifier: ChainVerifier) => void;
  /** Run the byte-level line checker before the reference (default true; see `ChainVerifierOptions`). */
  readonly byteScan?: boolean;
  /** The digest written into a given array (see `ChainVerifierOptions.digestInto`). */
  readonly digestInto?: (data: Uint8Array, out: Uint8Array) => void;
  /** Called after each chunk has been verified, with the verifier (for progress: `verifier.size` entries so far; may yield to the caller's event loop). */
  readonly onChunk?: (verifier: ChainVerifier) => void | Promise<void>;
}

/**
 * THE streaming verification loop: splits chunks into lines, feeds each to a
 * {@link ChainVerifier} built on `digest`, reports an unterminated last line
 * as `missing-newline` (or `too-large` past the entry limit), and finishes with the seal and pin checks. Memory is
 * bounded by the longest line plus an O(log n) Merkle frontier. Lines are
 * verified synchronously chunk by chunk (no promise per line).
 */
export async function verifyChunks(
  digest: Digest,
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: VerifyChunksOptions = {},
): Promise<ChainSummary | ChainError> {
  const v = new ChainVerifier(digest, {
    ...(options.byteScan === undefined ? {} : { byteScan: options.byteScan }),
    ...(options.digestInto === undefined ? {} : { digestInto: options.digestInto }),
  });
  const onEntry = options.onEntry;
  const unterminated = (piece: Uint8Array): ChainError => {
    const p = unterminatedProblem(piece);
    return v.reject(p.code, p.message);
  };
  let rest: Uint8Array | undefined;
  if (onEntry === undefined) {
    // Only the verdict is wanted: nothing is built per line.
    const r = await verdictOnly(v, chunks, options.onAccepted, options.onChunk);
    if (r !== undefined && !(r instanceof Uint8Array)) return r;
    rest = r;
  } else {
    const splitter = new LineSplitter();
    for await (const chunk of chunks) {
      const { lines, overflow } = splitter.push(chunk);
      for (const line of lines) {
        const r = v.push(line);
        if (!r.ok) return r;
        const p = onEntry(r, line, v);
        if (p !== undefined) await p;
      }
      if (overflow) return unterminated(overflow);
      const p = options.onChunk?.(v);
      if (p !== undefined) await p;
    }
    rest = splitter.end();
  }
  if (rest) return unterminated(rest);
  return v.finish({
    ...(options.requireSealed === undefined ? {} : { requireSealed: options.requireSealed }),
    ...(options.pin === undefined ? {} : { pin: options.pin }),
  });
}

/**
 * The verdict-only loop over chunks: the lines {@link LineSplitter} would
 * give, in order, each to `v` — a line inside a chunk first by the fast path
 * on the chunk itself (`acceptAt`, which finds the line's end as it proves
 * it: no search, no view), and otherwise found by its newline and given to
 * `accept` (the reference). Returns the first error, or what is left
 * unterminated (a piece over {@link MAX_CARRY} as soon as it is: the
 * splitter's `overflow`), or undefined.
 */
async function verdictOnly(
  v: ChainVerifier,
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  onAccepted: VerifyChunksOptions['onAccepted'],
  onChunk: VerifyChunksOptions['onChunk'],
): Promise<ChainError | Uint8Array | undefined> {
  const carry = new LineCarry();
  for await (const input of chunks) {
    const chunk = input.constructor === Uint8Array ? input : new Uint8Array(input.buffer, input.byteOffset, input.length);
    let pos = 0;
    if (carry.holding) {
      const done = carry.end(chunk, false);
      if ('line' in done) {
        const bad = v.accept(done.line);
        if (bad) return bad;
        onAccepted?.(done.line, v);
      } else if (done.overflow !== undefined) return done.overflow;
      pos = done.next;
    }
    if (pos >= 0) {
      for (;;) {
        let end = v.acceptAt(chunk, pos);
        if (end < 0) {
          end = chunk.indexOf(NEWLINE, pos);
          if (end < 0) break;
          const line = chunk.subarray(pos, end);
          const bad = v.accept(line);
          if (bad) return bad;
          onAccepted?.(line, v);
        } else if (onAccepted !== undefined) onAccepted(chunk.subarray(pos, end), v);
        pos = end + 1;
      }
      const overflow = carry.keep(chunk, pos);
      if (overflow !== undefined) return overflow;
    }
    const p = onChunk?.(v);
    if (p !== undefined) await p;
  }
  return carry.rest();
}

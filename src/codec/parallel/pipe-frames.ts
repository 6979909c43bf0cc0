/**
 * The byte frames a verification child process reads and writes on its pipes
 * (./child.ts, ./process-pool.ts): which segment to prove, and what was
 * proven of it. The segment's bytes themselves go through a shared file (the
 * child's fd 3, unlinked: see ./process-pool.ts), not the pipe. Little-endian;
 * every frame starts with its own length, so a reader assembles frames from
 * pipe chunks of any size ({@link FrameReader}).
 *
 * Requests ({@link REQUEST_BYTES} each): u32 frame length (after this
 * field) · u32 id · u32 type · u32 zero, then for type {@link PROVE} f64 offset
 * in the shared file · f64 segment length, for type {@link FINISH} f64 base
 * (the bundle index of the segment's first line) · f64 zero.
 *
 * Answers: once proven, {@link PROVEN_BYTES}: u32 frame length · u32 id · u32
 * proven · u32 provenEnd; once finished, u32 frame length · u32 id · u32 proven · u32 provenEnd · u32 roots
 * length · the state ({@link STATE_BYTES}: head, pending root, pending flag
 * and 7 zero bytes, then f64 pendingOrdinal, expectOrdinal, lastTime, frames,
 * turns, firstFrameTime) · the subtree roots.
 */
import type { SegmentState } from '../../protocol/chain-types.js';

/** Bytes of a request (its length field included). */
export const REQUEST_BYTES = 32;
/** Bytes of an answer's header (its length field included). */
export const ANSWER_HEADER = 20;
/** Bytes of a segment state in an answer. */
export const STATE_BYTES = 32 + 32 + 8 + 6 * 8;
/** The largest frame either side accepts (far above any answer: roots are O(log n)). */
export const MAX_FRAME = 1 << 24;

/** Request types. */
export const PROVE = 1;
export const FINISH = 2;

/** A request: prove the `length` bytes at `offset` of the shared file (PROVE), or answer segment `id` as starting at entry `a` (FINISH). */
export function requestFrame(id: number, type: typeof PROVE | typeof FINISH, a: number, b: number): Uint8Array {
  const out = new Uint8Array(REQUEST_BYTES);
  const view = new DataView(out.buffer);
  view.setUint32(0, REQUEST_BYTES - 4, true);
  view.setUint32(4, id, true);
  view.setUint32(8, type, true);
  view.setFloat64(16, a, true);
  view.setFloat64(24, b, true);
  return out;
}

/** A decoded request; undefined when the frame is not one. */
export function readRequest(frame: Uint8Array): { readonly id: number; readonly type: typeof PROVE | typeof FINISH; readonly a: number; readonly b: number } | undefined {
  if (frame.length !== REQUEST_BYTES) return undefined;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.length);
  const type = view.getUint32(8, true);
  const a = view.getFloat64(16, true);
  const b = view.getFloat64(24, true);
  if ((type !== PROVE && type !== FINISH) || !Number.isSafeInteger(a) || a < 0 || !Number.isSafeInteger(b) || b < 0) return undefined;
  return { id: view.getUint32(4, true), type, a, b };
}

/** Bytes of the answer that a segment is proven. */
export const PROVEN_BYTES = 16;

/** The answer that segment `id` is proven: `proven` lines, ending at byte `provenEnd`. */
export function provenFrame(id: number, proven: number, provenEnd: number): Uint8Array {
  const out = new Uint8Array(PROVEN_BYTES);
  const view = new DataView(out.buffer);
  view.setUint32(0, PROVEN_BYTES - 4, true);
  view.setUint32(4, id, true);
  view.setUint32(8, proven, true);
  view.setUint32(12, provenEnd, true);
  return out;
}

/** A decoded proven-answer, or undefined when the frame is not one. */
export function readProven(frame: Uint8Array): { readonly id: number; readonly proven: number; readonly provenEnd: number } | undefined {
  if (frame.length !== PROVEN_BYTES) return undefined;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.length);
  return { id: view.getUint32(4, true), proven: view.getUint32(8, true), provenEnd: view.getUint32(12, true) };
}

/** One answer frame. */
export function answerFrame(id: number, proven: number, provenEnd: number, state: SegmentState, roots: Uint8Array): Uint8Array {
  const out = new Uint8Array(ANSWER_HEADER + STATE_BYTES + roots.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, out.length - 4, true);
  view.setUint32(4, id, true);
  view.setUint32(8, proven, true);
  view.setUint32(12, provenEnd, true);
  view.setUint32(16, roots.length, true);
  let o = ANSWER_HEADER;
  out.set(state.head, o);
  out.set(state.pendingRoot, o + 32);
  out[o + 64] = state.pending ? 1 : 0;
  o += 72;
  for (const n of [state.pendingOrdinal, state.expectOrdinal, state.lastTime, state.frames, state.turns, state.firstFrameTime]) {
    view.setFloat64(o, n, true);
    o += 8;
  }
  out.set(roots, o);
  return out;
}

/** A decoded answer; undefined when the frame is not one (wrong lengths). */
export function readAnswer(frame: Uint8Array): { readonly id: number; readonly proven: number; readonly provenEnd: number; readonly state: SegmentState; readonly roots: ArrayBuffer } | undefined {
  if (frame.length < ANSWER_HEADER + STATE_BYTES) return undefined;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.length);
  const rootsLength = view.getUint32(16, true);
  if (frame.length !== ANSWER_HEADER + STATE_BYTES + rootsLength || rootsLength % 32 !== 0) return undefined;
  const o = ANSWER_HEADER;
  const f = (k: number): number => view.getFloat64(o + 72 + 8 * k, true);
  const state: SegmentState = {
    head: frame.slice(o, o + 32),
    pendingRoot: frame.slice(o + 32, o + 64),
    pending: frame[o + 64] === 1,
    pendingOrdinal: f(0),
    expectOrdinal: f(1),
    lastTime: f(2),
    frames: f(3),
    turns: f(4),
    firstFrameTime: f(5),
  };
  const start = o + STATE_BYTES;
  return { id: view.getUint32(4, true), proven: view.getUint32(8, true), provenEnd: view.getUint32(12, true), state, roots: frame.slice(start).buffer };
}

/**
 * Assembles length-prefixed frames from pipe chunks: `push` returns the
 * frames a chunk completes (each its own array, length field included), or
 * an error string for a length over {@link MAX_FRAME} (the stream is then
 * unusable). Each frame is copied once, into an array of its own size.
 */
export class FrameReader {
  private frame: Uint8Array | undefined;
  private filled = 0;
  private readonly head = new Uint8Array(4);
  private headFilled = 0;

  push(chunk: Uint8Array): Uint8Array[] | string {
    const out: Uint8Array[] = [];
    let pos = 0;
    while (pos < chunk.length) {
      if (this.frame === undefined) {
        while (this.headFilled < 4 && pos < chunk.length) this.head[this.headFilled++] = chunk[pos++]!;
        if (this.headFilled < 4) break;
        const length = this.head[0]! | (this.head[1]! << 8) | (this.head[2]! << 16) | (this.head[3]! * 2 ** 24);
        if (length > MAX_FRAME) return `a frame of ${length} bytes is over the limit`;
        this.frame = new Uint8Array(4 + length);
        this.frame.set(this.head, 0);
        this.filled = 4;
        this.headFilled = 0;
      }
      const take = Math.min(this.frame.length - this.filled, chunk.length - pos);
      this.frame.set(chunk.subarray(pos, pos + take), this.filled);
      this.filled += take;
      pos += take;
      if (this.filled === this.frame.length) {
        out.push(this.frame);
        this.frame = undefined;
      }
    }
    return out;
  }
}

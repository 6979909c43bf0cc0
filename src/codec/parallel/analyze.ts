/**
 * The worker's half of parallel verification: for each line of a batch, the
 * exact context-free checks of the sequential verifier, the entry hash, the
 * recomputed frame root and the authored-body check, written as one compact
 * record per line (see ./layout.ts). Nothing here depends on other lines, so
 * batches can be analysed in any order on any thread.
 *
 * A line the byte-level checker proves canonical (`scanLine`) is recorded
 * from spans of its bytes; every other line, and any line whose digests or
 * authored body the record cannot take as they are, goes through the
 * reference (`inspectLine`, `frameRoot`, `authoredProblem`), which writes the
 * same record the same way it always has.
 */
import { authoredHashOfBase64Into, frameRoot, frameRootOfLineInto, entryHashInto } from '../../protocol/bytes.js';
import { authoredProblem, inspectLine } from '../../protocol/chain.js';
import { hexDecodeAt, hexEqualsAt } from '../../protocol/hex.js';
import { newLineScan, scanLine, type LineScan } from '../../protocol/scan.js';
import { NODE_PREFIX } from '../../protocol/merkle/hasher.js';
import { sha256, sha256At, sha256Into } from '../sha256.js';
import { AUTHORED_CODES, KIND_CODES, OFF, RECORD_BYTES, STATUS_FAILED, STATUS_OK, subtreeHeights, type BatchResult, type LineFailure } from './layout.js';

// Nibble values of '0'-'9' and 'a'-'f'; every other code is 255 (not a digit).
const NIBBLE = new Uint8Array(256).fill(255);
for (let c = 0; c < 10; c++) NIBBLE[48 + c] = c;
for (let c = 0; c < 6; c++) NIBBLE[97 + c] = 10 + c;

/** Writes 64 lowercase hex characters as 32 bytes at `at` (digests the entry parser already checked). */
function hexInto(out: Uint8Array, at: number, hex: string): void {
  for (let i = 0; i < 32; i++) out[at + i] = (NIBBLE[hex.charCodeAt(2 * i)]! << 4) | NIBBLE[hex.charCodeAt(2 * i + 1)]!;
}

/** Options of {@link analyzeBatch}. */
export interface AnalyzeOptions {
  /** Record lines the byte-level checker proves from their bytes (default true); `false`: the reference only. */
  readonly byteScan?: boolean;
  /** Each line is followed by a newline in `bytes` (see `BatchRequest.separated`). */
  readonly separated?: boolean;
  /** The bundle index of the first line: also compute the batch's subtree roots (see `BatchRequest.base`). */
  readonly base?: number;
}

/**
 * Analyses `count` lines stored back to back in `bytes` (`ends[i]` is the end
 * of line i) and returns their records and failures.
 */
export function analyzeBatch(id: number, bytes: Uint8Array, ends: Uint32Array, options: AnalyzeOptions = {}): BatchResult {
  const count = ends.length;
  const records = new ArrayBuffer(count * RECORD_BYTES);
  const view = new DataView(records);
  const out = new Uint8Array(records);
  const failures: LineFailure[] = [];
  const scan = options.byteScan === false ? undefined : newLineScan();
  const gap = options.separated === true ? 1 : 0;
  let start = 0;
  for (let i = 0; i < count; i++) {
    const end = ends[i]!;
    const line = bytes.subarray(start, end);
    start = end + gap;
    const at = i * RECORD_BYTES;
    if (scan !== undefined && scanLine(line, scan) && scanned(line, scan, view, out, at)) continue;
    out.fill(0, at, at + RECORD_BYTES);
    reference(line, view, out, at, i, failures);
  }
  if (options.base === undefined) return { id, records, failures };
  return { id, records, failures, roots: subtreeRoots(out, RECORD_BYTES, OFF.hash, options.base, count) };
}

/** The preimage of an interior node, `0x01 ‖ left ‖ right`, reused. */
const node = new Uint8Array(65);
node[0] = NODE_PREFIX;

/**
 * The roots of the aligned perfect subtrees tiling `count` leaves (32 bytes
 * each, at `offset + i·stride` in `src`: the entry hashes in a batch's
 * records, or leaves back to back), back to back, for leaves `[base, base +
 * count)`: each level is hashed in place over a copy of its leaves.
 */
export function subtreeRoots(src: Uint8Array, stride: number, offset: number, base: number, count: number): ArrayBuffer {
  const heights = subtreeHeights(base, count);
  const roots = new Uint8Array(32 * heights.length);
  // Leaves back to back are copied at once; records leaf by leaf.
  const level = stride === 32 && offset === 0 ? src.slice(0, 32 * count) : new Uint8Array(32 * count);
  if (stride !== 32 || offset !== 0) for (let i = 0; i < count; i++) level.set(src.subarray(i * stride + offset, i * stride + offset + 32), 32 * i);
  let first = 0;
  heights.forEach((h, k) => {
    // Leaves [first, first + 2^h) of the batch, folded level by level into level[32·first].
    for (let width = 2 ** h; width > 1; width /= 2) {
      for (let j = 0; j < width / 2; j++) {
        const l = 32 * (first + 2 * j);
        for (let b = 0; b < 64; b++) node[1 + b] = level[l + b]!;
        sha256At(node, level, 32 * (first + j));
      }
    }
    roots.set(level.subarray(32 * first, 32 * first + 32), 32 * k);
    first += 2 ** h;
  });
  return roots.buffer;
}

/** Digests written in place, then copied into the record. */
const authored = new Uint8Array(32);
const hash = new Uint8Array(32);

/**
 * The record of a line `scanLine` proved, from its bytes; false (the record
 * then half written: the caller clears it) when the digests are not lowercase
 * hex or the authored body needs the reference to name its problem.
 */
function scanned(line: Uint8Array, s: LineScan, view: DataView, out: Uint8Array, at: number): boolean {
  if (!hexDecodeAt(line, s.session, out, at + OFF.session) || !hexDecodeAt(line, s.parent, out, at + OFF.parent) || !hexDecodeAt(line, s.root, out, at + OFF.claimedRoot)) return false;
  if (s.kind === 2 && s.body === 1) {
    if (!authoredHashOfBase64Into(sha256Into, authored, line, s.bytesStart, s.bytesEnd) || !hexEqualsAt(line, s.hashAt, authored)) return false;
    view.setUint8(at + OFF.isAuthored, 1);
    view.setUint8(at + OFF.authored, AUTHORED_CODES.none);
  }
  view.setUint8(at + OFF.status, STATUS_OK);
  view.setUint8(at + OFF.kind, s.kind);
  entryHashInto(sha256Into, line, hash);
  out.set(hash, at + OFF.hash);
  if (s.kind !== 3) view.setFloat64(at + OFF.ordinal, s.ordinal);
  if (s.kind !== 2) view.setFloat64(at + OFF.timeOrSize, s.timeOrSize);
  if (s.kind === 1) {
    frameRootOfLineInto(sha256Into, hash, line, s.memberStart, s.memberEnd, s.ordStart, s.ordEnd, s.timeStart, s.timeEnd);
    out.set(hash, at + OFF.computedRoot);
  }
  return true;
}

/** The record of any line, by the reference checks. */
function reference(line: Uint8Array, view: DataView, out: Uint8Array, at: number, i: number, failures: LineFailure[]): void {
  const seen = inspectLine(sha256, line);
  if (!seen.ok) {
    view.setUint8(at + OFF.status, STATUS_FAILED);
    failures.push({ line: i, code: seen.code, message: seen.message });
    return;
  }
  const e = seen.entry;
  view.setUint8(at + OFF.status, STATUS_OK);
  view.setUint8(at + OFF.kind, KIND_CODES[e.kind]);
  out.set(seen.hash, at + OFF.hash);
  if (e.kind === 'genesis') return;
  hexInto(out, at + OFF.session, e.session);
  hexInto(out, at + OFF.parent, e.parent);
  if (e.kind === 'frame') {
    view.setFloat64(at + OFF.ordinal, e.ordinal);
    view.setFloat64(at + OFF.timeOrSize, e.time);
    hexInto(out, at + OFF.claimedRoot, e.frameRoot);
    out.set(frameRoot(sha256, e.data === undefined ? { ordinal: e.ordinal, time: e.time } : { ordinal: e.ordinal, time: e.time, data: e.data }), at + OFF.computedRoot);
  } else if (e.kind === 'turn') {
    view.setFloat64(at + OFF.ordinal, e.ordinal);
    hexInto(out, at + OFF.claimedRoot, e.frameRoot);
    if (e.body.kind === 'authored') {
      view.setUint8(at + OFF.isAuthored, 1);
      view.setUint8(at + OFF.authored, AUTHORED_CODES[authoredProblem(sha256, e.body) ?? 'none']);
    }
  } else {
    view.setFloat64(at + OFF.timeOrSize, e.size);
    hexInto(out, at + OFF.claimedRoot, e.root);
  }
}

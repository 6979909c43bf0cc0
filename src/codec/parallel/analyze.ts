/**
 * The worker's half of parallel verification: for each line of a batch, the
 * exact context-free checks of the sequential verifier (`inspectLine`), the
 * entry hash, the recomputed frame root and the authored-body check, written
 * as one compact record per line (see ./layout.ts). Nothing here depends on
 * other lines, so batches can be analysed in any order on any thread.
 */
import { frameRoot } from '../../protocol/bytes.js';
import { authoredProblem, inspectLine } from '../../protocol/chain.js';
import { sha256 } from '../sha256.js';
import { AUTHORED_CODES, KIND_CODES, OFF, RECORD_BYTES, STATUS_FAILED, STATUS_OK, type BatchResult, type LineFailure } from './layout.js';

// Nibble values of '0'-'9' and 'a'-'f' (digests in entries are already
// checked to be 64 lowercase hex by the entry parser).
const NIBBLE = new Uint8Array(128);
for (let c = 0; c < 10; c++) NIBBLE[48 + c] = c;
for (let c = 0; c < 6; c++) NIBBLE[97 + c] = 10 + c;

/** Writes 64 lowercase hex characters as 32 bytes at `at`. */
function hexInto(out: Uint8Array, at: number, hex: string): void {
  for (let i = 0; i < 32; i++) out[at + i] = (NIBBLE[hex.charCodeAt(2 * i)]! << 4) | NIBBLE[hex.charCodeAt(2 * i + 1)]!;
}

/**
 * Analyses `count` lines stored back to back in `bytes` (`ends[i]` is the end
 * of line i) and returns their records and failures.
 */
export function analyzeBatch(id: number, bytes: Uint8Array, ends: Uint32Array): BatchResult {
  const count = ends.length;
  const records = new ArrayBuffer(count * RECORD_BYTES);
  const view = new DataView(records);
  const out = new Uint8Array(records);
  const failures: LineFailure[] = [];
  let start = 0;
  for (let i = 0; i < count; i++) {
    const end = ends[i]!;
    const line = bytes.subarray(start, end);
    start = end;
    const at = i * RECORD_BYTES;
    const seen = inspectLine(sha256, line);
    if (!seen.ok) {
      view.setUint8(at + OFF.status, STATUS_FAILED);
      failures.push({ line: i, code: seen.code, message: seen.message });
      continue;
    }
    const e = seen.entry;
    view.setUint8(at + OFF.status, STATUS_OK);
    view.setUint8(at + OFF.kind, KIND_CODES[e.kind]);
    out.set(seen.hash, at + OFF.hash);
    if (e.kind === 'genesis') continue;
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
  return { id, records, failures };
}

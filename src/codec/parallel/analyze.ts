/**
 * The worker's half of parallel verification: for each line of a batch, the
 * exact context-free checks of the sequential verifier (`inspectLine`), the
 * entry hash, the recomputed frame root and the authored-body check, written
 * as one compact record per line (see ./layout.ts). Nothing here depends on
 * other lines, so batches can be analysed in any order on any thread.
 */
import { Buffer } from 'node:buffer';
import { authoredProblem, frameRootHex, inspectLine } from '../../protocol/chain.js';
import { sha256 } from '../sha256.js';
import { AUTHORED_CODES, KIND_CODES, OFF, RECORD_BYTES, STATUS_FAILED, STATUS_OK, type BatchResult, type LineFailure } from './layout.js';

/**
 * Analyses `count` lines stored back to back in `bytes` (`ends[i]` is the end
 * of line i) and returns their records and failures.
 */
export function analyzeBatch(id: number, bytes: Uint8Array, ends: Uint32Array): BatchResult {
  const count = ends.length;
  const records = new ArrayBuffer(count * RECORD_BYTES);
  const view = new DataView(records);
  const out = Buffer.from(records);
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
    out.write(e.session, at + OFF.session, 32, 'hex');
    out.write(e.parent, at + OFF.parent, 32, 'hex');
    if (e.kind === 'frame') {
      view.setFloat64(at + OFF.ordinal, e.ordinal);
      view.setFloat64(at + OFF.timeOrSize, e.time);
      out.write(e.frameRoot, at + OFF.claimedRoot, 32, 'hex');
      out.write(frameRootHex(sha256, e), at + OFF.computedRoot, 32, 'hex');
    } else if (e.kind === 'turn') {
      view.setFloat64(at + OFF.ordinal, e.ordinal);
      out.write(e.frameRoot, at + OFF.claimedRoot, 32, 'hex');
      if (e.body.kind === 'authored') {
        view.setUint8(at + OFF.isAuthored, 1);
        view.setUint8(at + OFF.authored, AUTHORED_CODES[authoredProblem(sha256, e.body) ?? 'none']);
      }
    } else {
      view.setFloat64(at + OFF.timeOrSize, e.size);
      out.write(e.root, at + OFF.claimedRoot, 32, 'hex');
    }
  }
  return { id, records, failures };
}

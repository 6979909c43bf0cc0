/**
 * A worker's part of the segments split (./segments.ts), the same wherever it
 * runs (a child process, a worker thread, or the main thread for its own
 * segments): prove a segment's lines apart from the lines before it, then,
 * once the segment's place in the bundle is known, the roots of its part of
 * the tree.
 */
import { SegmentVerifier } from '../../protocol/chain-segments.js';
import type { SegmentState } from '../../protocol/chain-types.js';
import { sha256, sha256Into } from '../sha256.js';
import { subtreeRoots } from './analyze.js';

const NEWLINE = 0x0a;

/** What {@link proveSegment} proved: the first `proven` lines, ending at byte `provenEnd` of the segment. */
export interface SegmentProof {
  readonly proven: number;
  readonly provenEnd: number;
  readonly state: SegmentState;
  /** The entry hashes of the proven lines after the first, 32 bytes each. */
  readonly leaves: Uint8Array;
}

/**
 * Proves the lines of `pieces` (whole lines, each with its newline, in order)
 * from the first on with the fast path alone, having assumed the state the
 * first line claims to follow (`SegmentVerifier.assume`); stops at the first
 * line it does not prove (a seal among them). Needs no index: the tree's
 * shape waits for {@link segmentRoots}.
 */
export function proveSegment(pieces: readonly Uint8Array[]): SegmentProof {
  let leaves = new Uint8Array(32 * 1024);
  let n = 0;
  const v = new SegmentVerifier(sha256, {
    digestInto: sha256Into,
    onLeaf: (h) => {
      if (32 * n + 32 > leaves.length) {
        const grown = new Uint8Array(leaves.length * 2);
        grown.set(leaves);
        leaves = grown;
      }
      leaves.set(h, 32 * n++);
    },
  });
  let proven = 0;
  let offset = 0;
  let provenEnd = 0;
  const head = pieces[0];
  const first = head === undefined ? -1 : head.indexOf(NEWLINE);
  if (first >= 0) {
    const line = head!.subarray(0, first);
    if (v.assume(line) && v.prove(line)) {
      v.restartCounts();
      n = 0;
      proven = 1;
      let pos = first + 1;
      provenEnd = pos;
      for (const bytes of pieces) {
        for (;;) {
          const nl = v.proveAt(bytes, pos);
          if (nl < 0) break;
          proven++;
          pos = nl + 1;
          provenEnd = offset + pos;
        }
        if (pos < bytes.length) break; // a line not proven
        offset += bytes.length;
        pos = 0;
      }
    }
  }
  return { proven, provenEnd, state: v.segmentState(), leaves: leaves.subarray(0, 32 * n) };
}

/** The roots of the proof's tree part (`subtreeHeights(base + 1, proven - 1)`) for a segment whose first line is entry `base`. */
export function segmentRoots(proof: SegmentProof, base: number): ArrayBuffer {
  return subtreeRoots(proof.leaves, 32, 0, base + 1, Math.max(0, proof.proven - 1));
}

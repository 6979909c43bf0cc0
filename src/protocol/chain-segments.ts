/**
 * The verifier's part in parallel verification by segments
 * (src/codec/parallel): a {@link ChainVerifier} that proves a segment of lines
 * apart from the lines before it, having assumed the state its first line
 * claims to follow, and the join of such a proof into the verifier that
 * verified the lines before. Every rule stays ChainVerifier's: a proof only
 * runs its fast path, and whatever the join does not take, the verifier
 * checks itself.
 */
import { ChainVerifier } from './chain.js';
import type { SegmentState } from './chain-types.js';
import { hexDecodeAt } from './hex.js';
import { scanLine } from './scan.js';
import { wordsOfCodes } from './words.js';


/** A {@link ChainVerifier} with the segment operations (see the module comment). */
export class SegmentVerifier extends ChainVerifier {
  /**
   * Takes on the state that `line` (a frame or
   * turn the scan proves) claims to follow, so the lines after it can be
   * proven without those before it: its session, its parent as the head, the
   * frame it answers (a turn) or the ordinal it opens (a frame), and no
   * earlier frame time. False when that is not readable (then nothing is
   * proven here). The join (`adopt`) checks what was assumed.
   */
  assume(line: Uint8Array): boolean {
    const s = this.scan;
    if (s === undefined || this.index !== 0 || !scanLine(line, s) || s.kind === 3) return false;
    for (let i = 0; i < 64; i++) this.sessionHex[i] = line[s.session + i]!;
    wordsOfCodes(this.sessionHex, 0, this.sessionWords);
    this.rootWords = false;
    if (!hexDecodeAt(line, s.parent, this.headBytes)) return false;
    if (s.kind === 2) {
      if (!hexDecodeAt(line, s.root, this.pendingRoot)) return false;
      this.pending = true;
      this.pendingOrdinal = s.ordinal;
    } else this.expectOrdinal = s.ordinal;
    this.lastTime = -Infinity;
    this.index = 1;
    return true;
  }

  /** The fast path alone: true when `line` is proven and accepted; false (nothing changed, no reference run) otherwise. Never a seal. */
  prove(line: Uint8Array): boolean {
    const s = this.scan;
    return s !== undefined && this.failed === undefined && !this.sealed && this.index > 0 && scanLine(line, s) && s.kind !== 3 && this.acceptScanned(line, s);
  }

  /** Zeroes the counts that {@link segmentState} reports (after an assumed first line). */
  restartCounts(): void {
    this.frames = 0;
    this.turns = 0;
    this.firstFrameTime = -1;
  }

  /** The state a proven segment ends in. */
  segmentState(): SegmentState {
    return {
      head: this.headBytes.slice(),
      pending: this.pending,
      pendingOrdinal: this.pendingOrdinal,
      pendingRoot: this.pendingRoot.slice(),
      expectOrdinal: this.expectOrdinal,
      lastTime: this.lastTime,
      frames: this.frames,
      turns: this.turns,
      firstFrameTime: this.firstFrameTime,
    };
  }

  /**
   * Joins `count` lines proven elsewhere right after the last line
   * this verifier accepted, which must be the first line of their segment
   * (the one the other verifier assumed; accepted here by the full rules):
   * after it both verifiers held the same state except the time of the last
   * frame, so the segment's first frame is checked against it here. False (nothing changed) when the
   * join does not hold: the caller then checks those lines itself. The
   * lines' leaves join the tree as the roots of the aligned perfect subtrees
   * of `heights` (32 bytes each in `roots`, as `Frontier.appendSubtree` takes them).
   */
  adopt(state: SegmentState, count: number, roots: Uint8Array, heights: readonly number[]): boolean {
    if (this.failed || this.sealed || this.index === 0 || (state.firstFrameTime >= 0 && state.firstFrameTime < this.lastTime)) return false;
    let width = 0;
    for (const h of heights) width += 2 ** h;
    if (width !== count || roots.length !== 32 * heights.length) return false;
    heights.forEach((h, k) => this.frontier.appendSubtree(roots.subarray(32 * k, 32 * k + 32), h));
    if (count === 0) return true;
    this.headBytes.set(state.head);
    this.pending = state.pending;
    this.pendingOrdinal = state.pendingOrdinal;
    this.pendingRoot.set(state.pendingRoot);
    this.rootWords = false;
    this.expectOrdinal = state.expectOrdinal;
    if (state.firstFrameTime >= 0) this.lastTime = state.lastTime;
    this.frames += state.frames;
    this.turns += state.turns;
    this.index += count;
    return true;
  }

  /** {@link prove} for the line that starts at `bytes[start]` (as {@link acceptAt}): the index of its newline, or -1 (nothing changed). Never a seal. */
  proveAt(bytes: Uint8Array, start: number): number {
    return this.fastAt(bytes, start, false);
  }

}

/**
 * The offline chain verifier as a pure, streaming state machine: feed it the
 * lines of a bundle one at a time; it recomputes every hash, link, ordinal,
 * frame root, the Merkle root and the seal, and reports the FIRST bad entry by
 * index with a typed reason. State is O(log n) (a Merkle frontier), so memory
 * stays bounded however long the bundle. What one line is on its own
 * (size, UTF-8, JSON, canonical bytes, structure, hashes) is checked by
 * line.ts; this file holds the order-dependent checks and the tree.
 */
import type { Digest, DigestInto } from './bytes.js';
import type { Entry } from './entries.js';
import type { ChainError, ChainErrorCode, ChainSummary, FinishOptions, SegmentState, VerifiedEntry } from './chain-types.js';
import { authoredHashOfBase64Into, entryHashInto, frameRootOfLineInto } from './bytes.js';
import { fromHex, hexDecodeAt, hexEqualsAt, toHex } from './hex.js';
import { AUTHORED_MESSAGES, authoredProblem, frameRootHex, inspectLine } from './line.js';
import { entryOfScan } from './scan-entry.js';
import { newLineScan, scanLine, type LineScan } from './scan.js';
import { isoTime } from './time.js';
import { Frontier } from './merkle/frontier.js';
import { rfc6962Hasher } from './merkle/hasher.js';
import { OPEN_ORDINAL } from './vocabulary.js';

// The one-line checks live in line.ts; their importers keep finding them here.
export { AUTHORED_MESSAGES, authoredProblem, canonicalEntryText, canonicalFrameText, frameRootHex, inspectLine } from './line.js';
export type { LineInspection } from './line.js';
export { CHAIN_ERROR_CODES } from './chain-types.js';
export type { ChainError, ChainErrorCode, ChainPin, ChainSummary, FinishOptions, SegmentState, VerifiedEntry } from './chain-types.js';


/** True when `line[at, at + codes.length)` is `codes`. */
function codesEqualAt(line: Uint8Array, at: number, codes: Uint8Array): boolean {
  for (let i = 0; i < codes.length; i++) if (line[at + i] !== codes[i]) return false;
  return true;
}

/** Options of the {@link ChainVerifier} constructor. */
export interface ChainVerifierOptions {
  /**
   * Prove the commonest lines canonical byte by byte (scan.ts) and check them
   * over spans of the line, before the reference (default true). `false` runs
   * only the reference path: the same verdicts, for tests that compare the two.
   */
  readonly byteScan?: boolean;
  /**
   * The same digest written into `out[0, 32)` (see `rfc6962Hasher`): interior
   * nodes of the tree are then hashed into arrays the frontier reuses.
   */
  readonly digestInto?: (data: Uint8Array, out: Uint8Array) => void;
  /**
   * Each accepted entry's hash goes here instead of into the tree (a segment
   * proven apart from the tree: see {@link ChainVerifier.assume}). The array
   * is the verifier's head: copy it.
   */
  readonly onLeaf?: (hash: Uint8Array) => void;
}


/** Streaming verifier; see the module comment. Construct with the SHA-256 digest. */
export class ChainVerifier {
  private readonly digest: Digest;
  private readonly digestInto: DigestInto;
  private readonly frontier: Frontier;
  private readonly scan: LineScan | undefined;
  private index = 0;
  private sessionId = '';
  /** The session id's 64 hex digits as ASCII codes (compared where each line writes it). */
  private sessionHex = new Uint8Array(64);
  /** The last accepted entry's hash (written in place: the verifier owns it). */
  private readonly headBytes = new Uint8Array(32);
  private expectOrdinal = OPEN_ORDINAL;
  /** The unanswered frame's ordinal and recomputed root, while `pending` (the root is written in place). */
  private pending = false;
  private pendingOrdinal = 0;
  private readonly pendingRoot = new Uint8Array(32);
  /** An authored hash, recomputed in place. */
  private readonly authored = new Uint8Array(32);
  private lastTime = 0;
  private sealed = false;
  private frames = 0;
  private turns = 0;
  private failed: ChainError | undefined;
  private readonly onLeaf: ((hash: Uint8Array) => void) | undefined;
  /** The time of the first frame accepted since construction or {@link restartCounts}, or -1. */
  private firstFrameTime = -1;

  constructor(digest: Digest, options: ChainVerifierOptions = {}) {
    this.digest = digest;
    const into = options.digestInto;
    this.digestInto = into ?? ((data, out) => out.set(digest(data)));
    this.frontier = new Frontier(rfc6962Hasher(digest, into));
    this.scan = options.byteScan === false ? undefined : newLineScan();
    this.onLeaf = options.onLeaf;
  }

  /**
   * @internal Parallel segments: takes on the state that `line` (a frame or
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

  /** @internal The fast path alone: true when `line` is proven and accepted; false (nothing changed, no reference run) otherwise. Never a seal. */
  prove(line: Uint8Array): boolean {
    const s = this.scan;
    return s !== undefined && this.failed === undefined && !this.sealed && this.index > 0 && scanLine(line, s) && s.kind !== 3 && this.acceptScanned(line, s);
  }

  /** @internal Zeroes the counts that {@link segmentState} reports (after an assumed first line). */
  restartCounts(): void {
    this.frames = 0;
    this.turns = 0;
    this.firstFrameTime = -1;
  }

  /** @internal The state a proven segment ends in. */
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
   * @internal Joins `count` lines proven elsewhere right after the last line
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
    this.expectOrdinal = state.expectOrdinal;
    if (state.firstFrameTime >= 0) this.lastTime = state.lastTime;
    this.frames += state.frames;
    this.turns += state.turns;
    this.index += count;
    return true;
  }

  /** Feeds the bytes of one line (without its newline). Returns the error once one is found. */
  push(line: Uint8Array): ChainError | VerifiedEntry {
    if (this.failed) return this.failed;
    const s = this.scan;
    if (s !== undefined && !this.sealed && this.index > 0 && scanLine(line, s)) {
      if (this.acceptScanned(line, s)) return { ok: true, index: this.index - 1, hash: toHex(this.headBytes), entry: entryOfScan(line, s) };
    }
    const r = this.check(line);
    if (!r.ok) this.failed = r;
    return r;
  }

  /**
   * {@link push} for a caller that needs only the verdict: `undefined` when the
   * line is accepted (nothing is built for it), else the first error.
   */
  accept(line: Uint8Array): ChainError | undefined {
    if (this.failed) return this.failed;
    const s = this.scan;
    if (s !== undefined && !this.sealed && this.index > 0 && scanLine(line, s) && this.acceptScanned(line, s)) return undefined;
    const r = this.check(line);
    if (r.ok) return undefined;
    this.failed = r;
    return r;
  }

  private fail(code: ChainErrorCode, message: string): ChainError {
    return { ok: false, index: this.index, code, message };
  }

  /**
   * The chain checks of a line proven canonical by scanLine, over its bytes:
   * the same checks as {@link check}, which stays the reference. Returns true
   * when every check passes (the entry is then applied, its hash the head),
   * and false WITHOUT changing any state otherwise: the caller then runs the
   * reference on the same line, which finds and names the first failure.
   */
  private acceptScanned(line: Uint8Array, s: LineScan): boolean {
    if (!codesEqualAt(line, s.session, this.sessionHex) || !hexEqualsAt(line, s.parent, this.headBytes)) return false;
    if (s.kind === 1) {
      if (this.pending || s.ordinal !== this.expectOrdinal || s.timeOrSize < this.lastTime) return false;
      // Written before it is checked: `pendingRoot` means nothing while no frame is pending.
      const root = this.pendingRoot;
      frameRootOfLineInto(this.digestInto, root, line, s.memberStart, s.memberEnd, s.ordStart, s.ordEnd, s.timeStart, s.timeEnd);
      if (!hexEqualsAt(line, s.root, root)) return false;
      this.apply(line);
      this.pending = true;
      this.pendingOrdinal = s.ordinal;
      this.lastTime = s.timeOrSize;
      if (this.firstFrameTime < 0) this.firstFrameTime = s.timeOrSize;
      this.frames++;
      return true;
    }
    if (s.kind === 2) {
      if (!this.pending || s.ordinal !== this.pendingOrdinal || !hexEqualsAt(line, s.root, this.pendingRoot)) return false;
      if (s.body === 1) {
        const a = this.authored;
        if (!authoredHashOfBase64Into(this.digestInto, a, line, s.bytesStart, s.bytesEnd) || !hexEqualsAt(line, s.hashAt, a)) return false;
      }
      this.apply(line);
      this.expectOrdinal = this.pendingOrdinal + 1;
      this.pending = false;
      this.turns++;
      return true;
    }
    if (this.pending || s.timeOrSize !== this.index || !hexEqualsAt(line, s.root, this.frontier.root())) return false;
    this.apply(line);
    this.sealed = true;
    return true;
  }

  /** Hashes an accepted line into the head, links it and appends it to the tree. */
  private apply(line: Uint8Array): void {
    entryHashInto(this.digestInto, line, this.headBytes);
    if (this.onLeaf === undefined) this.frontier.append(this.headBytes);
    else this.onLeaf(this.headBytes);
    this.index++;
  }

  /** The reference checks of one line. */
  private check(line: Uint8Array): ChainError | VerifiedEntry {
    if (this.sealed) return this.fail('after-seal', 'an entry follows the finalize seal');
    const seen = inspectLine(this.digest, line);
    if (!seen.ok) return this.fail(seen.code, seen.message);
    const e = seen.entry;
    const hashBytes = seen.hash;
    const hash = toHex(hashBytes);

    if (this.index === 0) {
      if (e.kind !== 'genesis') return this.fail('not-genesis', 'the first entry must be the genesis');
      this.sessionId = hash;
      for (let i = 0; i < 64; i++) this.sessionHex[i] = hash.charCodeAt(i);
    } else {
      if (e.kind === 'genesis') return this.fail('unexpected-entry', 'genesis may only be the first entry');
      if (e.session !== this.sessionId) return this.fail('wrong-session', `entry names session ${e.session}, expected ${this.sessionId}`);
      const head = toHex(this.headBytes);
      if (e.parent !== head) return this.fail('broken-link', `entry ${this.index}'s link does not match entry ${this.index - 1}: its parent ${e.parent} is not the hash of entry ${this.index - 1}, ${head} (one of the two was changed: look at both)`);
      const bad = this.checkTransition(e);
      if (bad) return bad;
    }
    this.frontier.append(hashBytes);
    this.headBytes.set(hashBytes);
    const verified: VerifiedEntry = { ok: true, index: this.index, hash, entry: e };
    this.index++;
    return verified;
  }

  private checkTransition(e: Exclude<Entry, { kind: 'genesis' }>): ChainError | undefined {
    const pending = this.pending;
    switch (e.kind) {
      case 'frame': {
        if (pending) return this.fail('unexpected-entry', `frame ${e.ordinal} arrives while frame ${this.pendingOrdinal} is unanswered`);
        if (e.ordinal !== this.expectOrdinal) return this.fail('bad-ordinal', `frame ordinal ${e.ordinal}, expected ${this.expectOrdinal}`);
        if (e.time < this.lastTime) return this.fail('time-regressed', `frame time ${isoTime(e.time)} is before the previous frame's ${isoTime(this.lastTime)}`);
        const root = frameRootHex(this.digest, e);
        if (root !== e.frameRoot) return this.fail('bad-frame-root', `frameRoot ${e.frameRoot} does not match the frame content (${root})`);
        this.pending = true;
        this.pendingOrdinal = e.ordinal;
        this.pendingRoot.set(fromHex(root));
        this.lastTime = e.time;
        this.frames++;
        return undefined;
      }
      case 'turn': {
        if (!pending) return this.fail('unexpected-entry', 'a turn with no frame to answer');
        if (e.ordinal !== this.pendingOrdinal) return this.fail('bad-ordinal', `turn ordinal ${e.ordinal} does not answer frame ${this.pendingOrdinal}`);
        if (e.frameRoot !== toHex(this.pendingRoot)) return this.fail('bad-frame-root', 'turn names another frame root than the frame it answers');
        if (e.body.kind === 'authored') {
          const bad = authoredProblem(this.digest, e.body);
          if (bad) return this.fail(bad, AUTHORED_MESSAGES[bad]);
        }
        this.expectOrdinal = this.pendingOrdinal + 1;
        this.pending = false;
        this.turns++;
        return undefined;
      }
      case 'finalize': {
        if (pending) return this.fail('unexpected-entry', `finalize while frame ${this.pendingOrdinal} is unanswered`);
        if (e.size !== this.index) return this.fail('bad-seal-size', `seal size ${e.size}, but ${this.index} entries precede it`);
        const root = toHex(this.frontier.root());
        if (root !== e.root) return this.fail('bad-seal-root', `seal root ${e.root} does not match the entries' root ${root}`);
        this.sealed = true;
        return undefined;
      }
    }
  }

  /** Ends the stream and returns the summary, or the first error. */
  finish(options: FinishOptions = {}): ChainSummary | ChainError {
    if (this.failed) return this.failed;
    if (this.index === 0) return this.fail('empty', 'the bundle has no entries');
    if ((options.requireSealed ?? true) && !this.sealed) return this.fail('not-sealed', 'the bundle ends before a finalize seal');
    const pin = options.pin;
    const root = toHex(this.frontier.root());
    if (pin) {
      const last = this.index - 1;
      if (pin.sessionId !== undefined && pin.sessionId !== this.sessionId) return { ok: false, index: 0, code: 'pin-mismatch', message: `session id ${this.sessionId} is not the pinned ${pin.sessionId}` };
      if (pin.size !== undefined && pin.size !== this.index) return { ok: false, index: last, code: 'pin-mismatch', message: `bundle has ${this.index} entries, the pin says ${pin.size}` };
      if (pin.receiptRoot !== undefined && pin.receiptRoot !== root) return { ok: false, index: last, code: 'pin-mismatch', message: `receipt root ${root} is not the pinned ${pin.receiptRoot}` };
    }
    return {
      ok: true,
      sessionId: this.sessionId,
      size: this.index,
      head: toHex(this.headBytes),
      receiptRoot: root,
      sealed: this.sealed,
      frames: this.frames,
      turns: this.turns,
    };
  }

  /** How many entries were accepted so far (the next entry's index). */
  get size(): number {
    return this.index;
  }

  /** True once the finalize seal was accepted. */
  get isSealed(): boolean {
    return this.sealed;
  }

  /** The last accepted entry's hash: the verifier's own array, rewritten by the next line (copy to keep). */
  headView(): Uint8Array {
    return this.headBytes;
  }

  /** The Merkle frontier over every entry accepted so far (a copy). */
  frontierHashes(): Uint8Array[] {
    return this.frontier.hashes();
  }

  /** Records a framing error found by the caller (for example a missing final newline) at the current index. */
  reject(code: ChainErrorCode, message: string): ChainError {
    if (this.failed) return this.failed;
    this.failed = this.fail(code, message);
    return this.failed;
  }
}

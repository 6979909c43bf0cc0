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
import type { ChainError, ChainErrorCode, ChainSummary, FinishOptions, VerifiedEntry } from './chain-types.js';
import { authoredHashOfBase64Into, entryHashInto, frameRootOfLineInto } from './bytes.js';
import { fromHex, hexEqualsAt, toHex } from './hex.js';
import { AUTHORED_MESSAGES, authoredProblem, frameRootHex, inspectLine } from './line.js';
import { entryOfScan } from './scan-entry.js';
import { newLineScan, scanEntryAt, scanLine, type LineScan } from './scan.js';
import { codesEqualAt, wordsAt, wordsEqualAt, wordsOfCodes } from './words.js';
import { isoTime } from './time.js';
import { Frontier } from './merkle/frontier.js';
import { rfc6962Hasher } from './merkle/hasher.js';
import { OPEN_ORDINAL } from './vocabulary.js';

// The one-line checks live in line.ts; their importers keep finding them here.
export { AUTHORED_MESSAGES, authoredProblem, canonicalEntryText, canonicalFrameText, frameRootHex, inspectLine } from './line.js';
export type { LineInspection } from './line.js';
export { CHAIN_ERROR_CODES } from './chain-types.js';
export type { ChainError, ChainErrorCode, ChainPin, ChainSummary, FinishOptions, SegmentState, VerifiedEntry } from './chain-types.js';


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
   * proven apart from the tree: see {@link SegmentVerifier.assume}). The array
   * is the verifier's head: copy it.
   */
  readonly onLeaf?: (hash: Uint8Array) => void;
}


const NEWLINE = 0x0a;

/** Streaming verifier; see the module comment. Construct with the SHA-256 digest. */
export class ChainVerifier {
  protected readonly digest: Digest;
  protected readonly digestInto: DigestInto;
  protected readonly frontier: Frontier;
  protected readonly scan: LineScan | undefined;
  protected index = 0;
  protected sessionId = '';
  /** The session id's 64 hex digits as ASCII codes (compared where each line writes it). */
  protected sessionHex = new Uint8Array(64);
  /** The same codes as words (words.ts), and the pending frame's root as its line wrote it, when `rootWords` says so. */
  protected readonly sessionWords = new Uint32Array(16);
  protected readonly pendingRootWords = new Uint32Array(16);
  /** True only while `pendingRootWords` holds the text of `pendingRoot` (set by the fast frame path, cleared wherever else the root is set). */
  protected rootWords = false;
  /** A view over the bytes `acceptAt` last read (a chunk: one per chunk, not per line). */
  protected view: DataView | undefined;
  protected viewOf: Uint8Array | undefined;
  /** The last accepted entry's hash (written in place: the verifier owns it). */
  protected readonly headBytes = new Uint8Array(32);
  protected expectOrdinal = OPEN_ORDINAL;
  /** The unanswered frame's ordinal and recomputed root, while `pending` (the root is written in place). */
  protected pending = false;
  protected pendingOrdinal = 0;
  protected readonly pendingRoot = new Uint8Array(32);
  /** An authored hash, recomputed in place. */
  protected readonly authored = new Uint8Array(32);
  protected lastTime = 0;
  protected sealed = false;
  protected frames = 0;
  protected turns = 0;
  protected failed: ChainError | undefined;
  protected readonly onLeaf: ((hash: Uint8Array) => void) | undefined;
  /** The time of the first frame accepted since construction or {@link restartCounts}, or -1. */
  protected firstFrameTime = -1;

  constructor(digest: Digest, options: ChainVerifierOptions = {}) {
    this.digest = digest;
    const into = options.digestInto;
    this.digestInto = into ?? ((data, out) => out.set(digest(data)));
    this.frontier = new Frontier(rfc6962Hasher(digest, into));
    this.scan = options.byteScan === false ? undefined : newLineScan();
    this.onLeaf = options.onLeaf;
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

  /**
   * The fast path for the line that starts at `bytes[start]`, its end not yet
   * found (a chunk of a bundle): the index of the newline that ends it when
   * the line is proven and accepted (the state then advanced, as by
   * {@link accept}), else -1 with NOTHING changed and nothing decided: the
   * caller then finds the line's end and calls {@link accept} on it, which
   * runs the reference. So no line is ever searched for twice when it is
   * proven, and every verdict stays the reference's.
   */
  acceptAt(bytes: Uint8Array, start: number): number {
    return this.fastAt(bytes, start, true);
  }

  /** The fast path at `bytes[start]` (see {@link acceptAt}); a seal only when `seals`. */
  protected fastAt(bytes: Uint8Array, start: number, seals: boolean): number {
    const s = this.scan;
    if (s === undefined || this.failed !== undefined || this.sealed || this.index === 0) return -1;
    const end = scanEntryAt(bytes, start, s);
    return end >= 0 && (seals || s.kind !== 3) && bytes[end] === NEWLINE && this.acceptScanned(bytes, s, start, end, this.viewOver(bytes)) ? end : -1;
  }

  protected viewOver(bytes: Uint8Array): DataView {
    if (bytes !== this.viewOf) {
      this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      this.viewOf = bytes;
    }
    return this.view!;
  }

  protected fail(code: ChainErrorCode, message: string): ChainError {
    return { ok: false, index: this.index, code, message };
  }

  /**
   * The chain checks of a line proven canonical by scanLine, over its bytes:
   * the same checks as {@link check}, which stays the reference. Returns true
   * when every check passes (the entry is then applied, its hash the head),
   * and false WITHOUT changing any state otherwise: the caller then runs the
   * reference on the same line, which finds and names the first failure.
   */
  protected acceptScanned(line: Uint8Array, s: LineScan, start = 0, end = line.length, view?: DataView): boolean {
    if (!(view === undefined ? codesEqualAt(line, s.session, this.sessionHex) : wordsEqualAt(view, s.session, this.sessionWords)) || !hexEqualsAt(line, s.parent, this.headBytes)) return false;
    if (s.kind === 1) {
      if (this.pending || s.ordinal !== this.expectOrdinal || s.timeOrSize < this.lastTime) return false;
      // Written before it is checked: `pendingRoot` means nothing while no frame is pending.
      const root = this.pendingRoot;
      frameRootOfLineInto(this.digestInto, root, line, s.memberStart, s.memberEnd, s.ordStart, s.ordEnd, s.timeStart, s.timeEnd);
      if (!hexEqualsAt(line, s.root, root)) return false;
      this.rootWords = view !== undefined;
      if (view !== undefined) wordsAt(view, s.root, this.pendingRootWords);
      this.apply(line, start, end);
      this.pending = true;
      this.pendingOrdinal = s.ordinal;
      this.lastTime = s.timeOrSize;
      if (this.firstFrameTime < 0) this.firstFrameTime = s.timeOrSize;
      this.frames++;
      return true;
    }
    if (s.kind === 2) {
      if (!this.pending || s.ordinal !== this.pendingOrdinal) return false;
      if (!(this.rootWords && view !== undefined ? wordsEqualAt(view, s.root, this.pendingRootWords) : hexEqualsAt(line, s.root, this.pendingRoot))) return false;
      if (s.body === 1) {
        const a = this.authored;
        if (!authoredHashOfBase64Into(this.digestInto, a, line, s.bytesStart, s.bytesEnd) || !hexEqualsAt(line, s.hashAt, a)) return false;
      }
      this.apply(line, start, end);
      this.expectOrdinal = this.pendingOrdinal + 1;
      this.pending = false;
      this.turns++;
      return true;
    }
    if (this.pending || s.timeOrSize !== this.index || !hexEqualsAt(line, s.root, this.frontier.root())) return false;
    this.apply(line, start, end);
    this.sealed = true;
    return true;
  }

  /** Hashes an accepted line into the head, links it and appends it to the tree. */
  private apply(bytes: Uint8Array, start = 0, end = bytes.length): void {
    entryHashInto(this.digestInto, start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end), this.headBytes);
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
      wordsOfCodes(this.sessionHex, 0, this.sessionWords);
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
        this.rootWords = false;
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

/**
 * The main thread's half of parallel verification: the order-dependent checks
 * of `ChainVerifier` (genesis first, session, links, ordinals, time, frame
 * roots of turns, authored bodies in their place, seal size and root, the
 * Merkle frontier), applied to the workers' line records strictly in line
 * order. Every check, its order and its message mirror `ChainVerifier`
 * (src/protocol/chain.ts, the reference); tests/perf property-tests the two
 * for equal results on valid and mutated bundles.
 */
import { AUTHORED_MESSAGES, type ChainError, type ChainErrorCode, type ChainSummary, type FinishOptions } from '../../protocol/chain.js';
import { TallyError } from '../../protocol/errors.js';
import { toHex } from '../../protocol/hex.js';
import { isoTime } from '../../protocol/time.js';
import { Frontier } from '../../protocol/merkle/frontier.js';
import { rfc6962Hasher } from '../../protocol/merkle/hasher.js';
import { OPEN_ORDINAL } from '../../protocol/vocabulary.js';
import { sha256, sha256Into } from '../sha256.js';
import { AUTHORED_CODES, KIND_CODES, OFF, RECORD_BYTES, STATUS_FAILED, subtreeHeights, type BatchResult } from './layout.js';

const HASH = 32;

function equal32(a: Uint8Array, ao: number, b: Uint8Array, bo: number): boolean {
  for (let i = 0; i < HASH; i++) if (a[ao + i] !== b[bo + i]) return false;
  return true;
}

/** Applies line records in order; the state machine of `ChainVerifier` over bytes. */
export class Sequencer {
  private readonly frontier = new Frontier(rfc6962Hasher(sha256, sha256Into));
  private index = 0;
  private sessionId = new Uint8Array(HASH);
  private head = new Uint8Array(HASH);
  private expectOrdinal = OPEN_ORDINAL;
  private pending: { ordinal: number; frameRoot: Uint8Array } | undefined;
  private lastTime = 0;
  private sealed = false;
  private frames = 0;
  private turns = 0;
  private failed: ChainError | undefined;

  /** Entries accepted so far. */
  get size(): number {
    return this.index;
  }

  /** The first error, once one is found. */
  get error(): ChainError | undefined {
    return this.failed;
  }

  private fail(code: ChainErrorCode, message: string): ChainError {
    this.failed = { ok: false, index: this.index, code, message };
    return this.failed;
  }

  /**
   * Applies every line of a batch; returns the first error, if any. A batch
   * with `roots` (computed for a base equal to the entries applied so far)
   * joins the tree by those subtree roots once every line has passed; a seal
   * inside it, which needs the root of the entries before it, makes the batch
   * join leaf by leaf from there.
   */
  apply(batch: BatchResult, lines: number): ChainError | undefined {
    if (this.failed) return this.failed;
    const rec = new Uint8Array(batch.records);
    const view = new DataView(batch.records);
    const first = this.index;
    let byRoots = batch.roots !== undefined;
    let f = 0;
    for (let i = 0; i < lines; i++) {
      const at = i * RECORD_BYTES;
      if (this.sealed) return this.fail('after-seal', 'an entry follows the finalize seal');
      if (rec[at + OFF.status] === STATUS_FAILED) {
        while (batch.failures[f]!.line !== i) f++;
        const failure = batch.failures[f]!;
        return this.fail(failure.code, failure.message);
      }
      const kind = rec[at + OFF.kind];
      const hashAt = at + OFF.hash;
      if (this.index === 0) {
        if (kind !== KIND_CODES.genesis) return this.fail('not-genesis', 'the first entry must be the genesis');
        this.sessionId = rec.slice(hashAt, hashAt + HASH);
      } else {
        if (kind === KIND_CODES.genesis) return this.fail('unexpected-entry', 'genesis may only be the first entry');
        if (kind === KIND_CODES.finalize && byRoots) {
          // The seal's root check needs the tree of every entry before it: catch up leaf by leaf.
          for (let j = 0; j < i; j++) this.frontier.append(rec.subarray(j * RECORD_BYTES + OFF.hash, j * RECORD_BYTES + OFF.hash + HASH));
          byRoots = false;
        }
        if (!equal32(rec, at + OFF.session, this.sessionId, 0)) {
          return this.fail('wrong-session', `entry names session ${hexAt(rec, at + OFF.session)}, expected ${toHex(this.sessionId)}`);
        }
        if (!equal32(rec, at + OFF.parent, this.head, 0)) {
          return this.fail('broken-link', `entry ${this.index}'s link does not match entry ${this.index - 1}: its parent ${hexAt(rec, at + OFF.parent)} is not the hash of entry ${this.index - 1}, ${toHex(this.head)} (one of the two was changed: look at both)`);
        }
        const bad = this.transition(kind!, rec, view, at);
        if (bad) return bad;
      }
      const hash = rec.subarray(hashAt, hashAt + HASH);
      if (!byRoots) this.frontier.append(hash);
      this.head = hash;
      this.index++;
    }
    if (byRoots) {
      const roots = new Uint8Array(batch.roots!);
      const heights = subtreeHeights(first, lines);
      if (roots.length !== HASH * heights.length) throw new TallyError('TALLY_VERIFY_WORKER_FAILED', 'A verification worker returned the wrong subtree roots.', { details: `${heights.length} expected, got ${roots.length / HASH}` });
      heights.forEach((h, k) => this.frontier.appendSubtree(roots.subarray(HASH * k, HASH * k + HASH), h));
    }
    return undefined;
  }

  private transition(kind: number, rec: Uint8Array, view: DataView, at: number): ChainError | undefined {
    if (kind === KIND_CODES.frame) {
      const ordinal = view.getFloat64(at + OFF.ordinal);
      const time = view.getFloat64(at + OFF.timeOrSize);
      if (this.pending) return this.fail('unexpected-entry', `frame ${ordinal} arrives while frame ${this.pending.ordinal} is unanswered`);
      if (ordinal !== this.expectOrdinal) return this.fail('bad-ordinal', `frame ordinal ${ordinal}, expected ${this.expectOrdinal}`);
      if (time < this.lastTime) return this.fail('time-regressed', `frame time ${isoTime(time)} is before the previous frame's ${isoTime(this.lastTime)}`);
      if (!equal32(rec, at + OFF.computedRoot, rec, at + OFF.claimedRoot)) {
        return this.fail('bad-frame-root', `frameRoot ${hexAt(rec, at + OFF.claimedRoot)} does not match the frame content (${hexAt(rec, at + OFF.computedRoot)})`);
      }
      this.pending = { ordinal, frameRoot: rec.subarray(at + OFF.computedRoot, at + OFF.computedRoot + HASH) };
      this.lastTime = time;
      this.frames++;
      return undefined;
    }
    if (kind === KIND_CODES.turn) {
      const ordinal = view.getFloat64(at + OFF.ordinal);
      if (!this.pending) return this.fail('unexpected-entry', 'a turn with no frame to answer');
      if (ordinal !== this.pending.ordinal) return this.fail('bad-ordinal', `turn ordinal ${ordinal} does not answer frame ${this.pending.ordinal}`);
      if (!equal32(rec, at + OFF.claimedRoot, this.pending.frameRoot, 0)) return this.fail('bad-frame-root', 'turn names another frame root than the frame it answers');
      if (rec[at + OFF.isAuthored] === 1) {
        const a = rec[at + OFF.authored];
        if (a === AUTHORED_CODES['bad-authored-bytes']) return this.fail('bad-authored-bytes', AUTHORED_MESSAGES['bad-authored-bytes']);
        if (a === AUTHORED_CODES['bad-authored-hash']) return this.fail('bad-authored-hash', AUTHORED_MESSAGES['bad-authored-hash']);
      }
      this.expectOrdinal = this.pending.ordinal + 1;
      this.pending = undefined;
      this.turns++;
      return undefined;
    }
    // finalize
    const size = view.getFloat64(at + OFF.timeOrSize);
    if (this.pending) return this.fail('unexpected-entry', `finalize while frame ${this.pending.ordinal} is unanswered`);
    if (size !== this.index) return this.fail('bad-seal-size', `seal size ${size}, but ${this.index} entries precede it`);
    const root = toHex(this.frontier.root());
    const claimed = hexAt(rec, at + OFF.claimedRoot);
    if (root !== claimed) return this.fail('bad-seal-root', `seal root ${claimed} does not match the entries' root ${root}`);
    this.sealed = true;
    return undefined;
  }

  /** Records a framing error at the current index (the first error wins). */
  reject(code: ChainErrorCode, message: string): ChainError {
    return this.failed ?? this.fail(code, message);
  }

  /** Ends the stream: the summary or the first error (as `ChainVerifier.finish`). */
  finish(options: FinishOptions = {}): ChainSummary | ChainError {
    if (this.failed) return this.failed;
    if (this.index === 0) return this.fail('empty', 'the bundle has no entries');
    if ((options.requireSealed ?? true) && !this.sealed) return this.fail('not-sealed', 'the bundle ends before a finalize seal');
    const pin = options.pin;
    const root = toHex(this.frontier.root());
    const sessionId = toHex(this.sessionId);
    if (pin) {
      const last = this.index - 1;
      if (pin.sessionId !== undefined && pin.sessionId !== sessionId) return { ok: false, index: 0, code: 'pin-mismatch', message: `session id ${sessionId} is not the pinned ${pin.sessionId}` };
      if (pin.size !== undefined && pin.size !== this.index) return { ok: false, index: last, code: 'pin-mismatch', message: `bundle has ${this.index} entries, the pin says ${pin.size}` };
      if (pin.receiptRoot !== undefined && pin.receiptRoot !== root) return { ok: false, index: last, code: 'pin-mismatch', message: `receipt root ${root} is not the pinned ${pin.receiptRoot}` };
    }
    return { ok: true, sessionId, size: this.index, head: toHex(this.head), receiptRoot: root, sealed: this.sealed, frames: this.frames, turns: this.turns };
  }
}

function hexAt(rec: Uint8Array, at: number): string {
  return toHex(rec.subarray(at, at + HASH));
}

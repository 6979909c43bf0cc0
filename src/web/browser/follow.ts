/**
 * Following a live day incrementally: the page fetches only new entries
 * (`GET /sessions/<id>/bundle?from=N`) and hands their bytes to the worker,
 * which pushes them into ONE running `verifyChunks` — the protocol's
 * streaming loop keeps its state (frontier, link, frame) between polls, so
 * no entry is fetched or verified twice. Each fresh signed checkpoint is
 * opened and matched against the verified prefix by the one match rule
 * (`matchCheckpoint`); with a log key or identity pinned, that checkpoint's
 * log binding is checked too (log-binding.ts). When the seal arrives the
 * stream ends and the chain's final checks run.
 */
import { toHex, verifyChunks, type ChainError, type ChainSummary } from '../../protocol/index.js';
import { formatKeyId } from '../../receipt/note/layout.js';
import { matchCheckpoint } from '../../receipt/proof/bundle-checkpoint.js';
import { sha256 } from './crypto.js';
import { collect, newDay, treeOf, type Day } from './day.js';
import { checkLogBindingInPage, type LogInputs } from './log-binding.js';
import type { LogBindingView, Verdict } from './messages.js';
import { openPin, type PinFailure } from './pin.js';
import { unverifiedRows, whyUnverified } from './tail.js';

/** A push-fed byte stream: `verifyChunks` reads it as long as the day is live. */
export class Feed implements AsyncIterable<Uint8Array> {
  private readonly queue: Uint8Array[] = [];
  private wake: (() => void) | undefined;
  private closed = false;

  /** Adds bytes (whole lines). */
  push(bytes: Uint8Array): void {
    this.queue.push(bytes);
    this.wake?.();
  }

  /** Ends the stream after what was pushed. */
  close(): void {
    this.closed = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    for (;;) {
      while (this.queue.length > 0) yield this.queue.shift()!;
      if (this.closed) return;
      await new Promise<void>((r) => (this.wake = r));
      this.wake = undefined;
    }
  }
}

/** A live day: the day, its feed, and the one running verification. */
export class Follower {
  readonly day: Day = newDay(false);
  private readonly feed = new Feed();
  private pushed = 0;
  private pushedBytes = 0;
  private processed = 0;
  private waiters: (() => void)[] = [];
  private pin: { cp: NonNullable<Day['checkpoint']> } | PinFailure | undefined;
  /** The binding of the pinned checkpoint, when a log key or identity is pinned and it held. */
  private log: LogBindingView | undefined;
  /** The chain's end result, once the stream ended (seal seen) or failed. */
  result: ChainSummary | ChainError | undefined;
  readonly done: Promise<void>;

  constructor() {
    this.done = (async () => {
      const result = await verifyChunks(sha256, this.feed, {
        requireSealed: false,
        onEntry: (e, line) => collect(this.day, e, line),
        onChunk: () => {
          this.processed++;
          if (this.day.sealed) this.feed.close();
          this.wakeWaiters();
        },
      });
      // A failed chain: every line fetched from the first bad entry on is listed, marked not verified (as a file's would be).
      if (!result.ok) await this.listUnverified(new Blob(this.day.parts), this.day.nextOffset, whyUnverified(result));
      this.result = result;
      this.processed = this.pushed;
      this.wakeWaiters();
    })();
  }

  private wakeWaiters(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private async listUnverified(blob: Blob, start: number, why: (i: number) => string): Promise<void> {
    for (const r of await unverifiedRows(blob, start, this.day.offsets.length + this.day.tail.length, why, this.day.tail)) this.day.rows.push(r);
  }

  /** Appends fetched bytes and waits until they are verified (or the chain failed: then they are listed, not verified). */
  async append(bytes: Uint8Array): Promise<void> {
    const r = this.result;
    if (r !== undefined && !r.ok) {
      // Bytes fetched in the same poll after the failure: listed, not verified, after the lines before them.
      this.day.parts.push(new Blob([bytes as BlobPart]));
      await this.listUnverified(new Blob(this.day.parts), this.pushedBytes, whyUnverified(r));
      this.pushedBytes += bytes.length;
      return;
    }
    if (r !== undefined) return;
    this.day.parts.push(new Blob([bytes as BlobPart]));
    this.pushedBytes += bytes.length;
    this.pushed++;
    this.feed.push(bytes);
    while (this.processed < this.pushed && this.result === undefined) await new Promise<void>((r) => this.waiters.push(r));
    // The seal ends the stream: wait for the chain's final checks, so the verdict after this append is the day's.
    if (this.day.sealed) await this.done;
  }

  /**
   * Opens a fresh signed checkpoint and matches it against the entries
   * verified so far; with a log key or identity pinned (`log`), then checks
   * the binding the engine served of that checkpoint by the rule a loaded
   * day's is checked with (log-binding.ts): a missing or bad one fails the
   * pin, the day staying browsable, unpinned.
   */
  async repin(cpText: string, vkeyText: string, log?: LogInputs): Promise<void> {
    this.log = undefined;
    const opened = await openPin(cpText, vkeyText, undefined);
    if ('state' in opened) {
      this.pin = opened;
      this.day.checkpoint = undefined;
      return;
    }
    const cp = opened.cp;
    const n = this.day.offsets.length;
    if (this.day.sessionId !== undefined && cp.sessionId !== this.day.sessionId) {
      this.pin = { state: 'failed-pin', stage: 'chain', code: 'pin-mismatch', message: `session id ${this.day.sessionId} is not the pinned ${cp.sessionId}` };
      this.day.checkpoint = undefined;
      return;
    }
    const mismatch = matchCheckpoint(cp, n, cp.size >= 1 && cp.size <= n ? toHex(treeOf(this.day).root(cp.size)) : undefined);
    if (mismatch) {
      this.pin = { state: 'failed-pin', stage: mismatch.stage, code: mismatch.code, message: mismatch.message };
      this.day.checkpoint = undefined;
      return;
    }
    const bound = log !== undefined && (log.logKey !== undefined || log.logIdentity !== undefined) ? await checkLogBindingInPage(log, cp, this.day.sealed && cp.size === n, undefined) : undefined;
    if (bound !== undefined && 'state' in bound) {
      // The chain and the session checkpoint verified, the binding the grader required did not.
      this.pin = { ...bound, day: { root: cp.root, size: cp.size, sessionId: cp.sessionId, sealed: this.day.sealed && cp.size === n } };
      this.day.checkpoint = undefined;
      return;
    }
    this.pin = { cp };
    this.log = bound;
    this.day.checkpoint = cp;
  }

  /** The banner's verdict now: the chain so far, pinned by the last checkpoint that matched. */
  verdict(): Verdict {
    const r = this.result;
    if (r !== undefined && !r.ok) return { state: 'failed-entry', index: r.index, code: r.code, message: r.message };
    const n = this.day.offsets.length;
    const sessionId = this.day.sessionId ?? '';
    const root = n > 0 ? toHex(treeOf(this.day).root(n)) : '';
    const sealed = this.day.sealed && r !== undefined;
    const p = this.pin;
    if (p !== undefined && 'state' in p) return p;
    if (p !== undefined) {
      const cp = p.cp;
      return { state: 'pinned', root: cp.root, size: cp.size, total: n, sessionId, signedBy: cp.signedBy.map((s) => `${s.name}+${formatKeyId(s.keyId)}`), coversAll: cp.size === n, sealed, ...(this.log === undefined ? {} : { log: this.log }) };
    }
    return { state: 'unpinned', root, size: n, sessionId, sealed, why: 'following a live engine that signs no checkpoints' };
  }
}

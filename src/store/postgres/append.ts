/**
 * Group commit for the PostgreSQL store: appends of different sessions that
 * wait at the same moment share one transaction (one commit, one WAL flush),
 * each append still its own compare-and-append statement (`./append-sql.ts`).
 *
 * An append goes out at once while fewer than `maxInFlight` transactions are
 * running (so a lone session pays no wait); otherwise it queues, and the next
 * free slot takes every queued append, at most one per session and at most
 * `maxBatch`, sorted by session id (so two processes' batches take their
 * entry keys in one order). Within the transaction each append sees the
 * ones before it (a nonce claimed earlier in the batch is taken). Each append in a batch is validated on its own and
 * gets its own answer, and none is acknowledged before the transaction has
 * committed. If the transaction fails, nothing in it was written: every
 * append of the batch is retried alone, so one bad append cannot fail the
 * others. A lone append goes out without the queue's bookkeeping
 * ({@link GroupCommit.append}), on the store's held connection when that is
 * free (`./lane.ts`).
 */
import type { AppendOutcome, AppendRequest } from '../types.js';
import { activeSpan, recordBatch } from '../../telemetry/index.js';
import type { AppendCode } from './append-sql.js';

/** How {@link GroupCommit} reaches the database. */
export interface GroupCommitPort {
  /** Runs the whole batch in one transaction: one code per request, in order; throws if the transaction failed (nothing written). */
  runBatch(batch: readonly AppendRequest[]): Promise<AppendCode[]>;
  /** The outcome of a committed request's code (reads the owner of a taken nonce). */
  settle(request: AppendRequest, code: AppendCode): Promise<AppendOutcome>;
  /** Appends one request alone, with the full error handling of a lone append. */
  runOne(request: AppendRequest): Promise<AppendOutcome>;
}

/** Limits of {@link GroupCommit}. */
export interface GroupCommitOptions {
  /** Most appends in one transaction (default 16). 1 turns group commit off. */
  readonly maxBatch?: number;
  /** Most transactions running at once (default 4). */
  readonly maxInFlight?: number;
}

interface Pending {
  readonly request: AppendRequest;
  readonly resolve: (o: AppendOutcome) => void;
  readonly reject: (e: unknown) => void;
  readonly span: ReturnType<typeof activeSpan>;
}

/** Counters of what {@link GroupCommit} did (for the bench and tests). */
export interface GroupCommitStats {
  /** Transactions that carried more than one append. */
  readonly batches: number;
  /** Appends sent in those transactions. */
  readonly batchedAppends: number;
  /** Batches whose transaction failed, so each append was retried alone. */
  readonly batchFailures: number;
  /** Appends sent alone (including the retries of failed batches). */
  readonly single: number;
}

/** The append queue of one store (see the module comment). */
export class GroupCommit {
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private queue: Pending[] = [];
  private inFlight = 0;
  private idle: (() => void)[] = [];
  private counts = { batches: 0, batchedAppends: 0, batchFailures: 0, single: 0 };

  constructor(
    private readonly port: GroupCommitPort,
    options: GroupCommitOptions = {},
  ) {
    this.maxBatch = positive('maxBatch', options.maxBatch ?? 16);
    this.maxInFlight = positive('maxInFlight', options.maxInFlight ?? 4);
  }

  /** What the queue has done so far. */
  get stats(): GroupCommitStats {
    return { ...this.counts };
  }

  /** Queues one append; resolves with its own outcome after its transaction committed. */
  append(request: AppendRequest): Promise<AppendOutcome> {
    if (this.queue.length === 0 && this.inFlight < this.maxInFlight) return this.straight(request);
    return new Promise<AppendOutcome>((resolve, reject) => {
      this.queue.push({ request, resolve, reject, span: activeSpan() });
      this.pump();
    });
  }

  /** Resolves once nothing is queued or running. */
  drained(): Promise<void> {
    if (this.queue.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /**
   * Nothing waits and a slot is free: the append goes out alone at once, as
   * {@link pump} would send it, without the queue's promise and batch
   * bookkeeping (a lone session's every append comes this way).
   */
  private async straight(request: AppendRequest): Promise<AppendOutcome> {
    this.inFlight++;
    observe(1, [activeSpan()]);
    try {
      return await this.runAlone(request);
    } finally {
      this.settled();
    }
  }

  /** A transaction ended: take the next batch, and wake `drained` waiters once all is done. */
  private settled(): void {
    this.inFlight--;
    this.pump();
    if (this.queue.length === 0 && this.inFlight === 0) for (const f of this.idle.splice(0)) f();
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch: Pending[] = [];
      const rest: Pending[] = [];
      const sessions = new Set<string>();
      for (const p of this.queue) {
        // One append per session per transaction: a second one on the same session waits for the next.
        if (batch.length < this.maxBatch && !sessions.has(p.request.sessionId)) {
          sessions.add(p.request.sessionId);
          batch.push(p);
        } else {
          rest.push(p);
        }
      }
      this.queue = rest;
      this.inFlight++;
      void this.flush(batch).finally(() => this.settled());
    }
  }

  /** Sends one batch and settles every append of it; never rejects. */
  private async flush(batch: Pending[]): Promise<void> {
    observe(batch.length, batch.map((p) => p.span));
    if (batch.length === 1) return this.alone(batch[0]!);
    batch.sort((a, b) => (a.request.sessionId < b.request.sessionId ? -1 : a.request.sessionId > b.request.sessionId ? 1 : 0));
    let codes: AppendCode[];
    try {
      codes = await this.port.runBatch(batch.map((p) => p.request));
    } catch {
      // The transaction failed, so nothing of it was written and nothing is acknowledged: each alone.
      this.counts.batchFailures++;
      await Promise.all(batch.map((p) => this.alone(p)));
      return;
    }
    this.counts.batches++;
    this.counts.batchedAppends += batch.length;
    // Committed: each append's answer is its own (a failure to read one owner rejects only that append).
    await Promise.all(batch.map((p, i) => this.port.settle(p.request, codes[i]!).then(p.resolve, p.reject)));
  }

  private async alone(p: Pending): Promise<void> {
    try {
      p.resolve(await this.runAlone(p.request));
    } catch (e) {
      p.reject(e);
    }
  }

  /** Sends one append by itself (counted as such). */
  private runAlone(request: AppendRequest): Promise<AppendOutcome> {
    this.counts.single++;
    return this.port.runOne(request);
  }
}

/** Records a transaction of `size` appends in telemetry, which never fails an append. */
function observe(size: number, spans: readonly (ReturnType<typeof activeSpan>)[]): void {
  try {
    recordBatch(size, spans);
  } catch {
    // Telemetry never fails an append.
  }
}

function positive(name: string, n: number): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer, got ${n}`);
  return n;
}

/**
 * Group commit for the PostgreSQL store: appends of different sessions that
 * wait at the same moment share one statement (one transaction, one round
 * trip, one WAL flush) of the `tally_append` function (migration 5).
 *
 * An append goes out at once while fewer than `maxInFlight` statements are
 * running (so a lone session pays no wait); otherwise it queues, and the next
 * free slot takes every queued append, at most one per session and at most
 * `maxBatch`, sorted by session id (so two processes' batches lock session
 * rows in one order). Each append in a batch is validated on its own and
 * gets its own answer, and none is acknowledged before the statement has
 * committed. If the statement fails, nothing in it was written: every
 * append of the batch is retried alone, so one bad append cannot fail the
 * others.
 */
import type { AppendOutcome, AppendRequest, NonceClaim } from '../types.js';
import { activeSpan, recordBatch } from '../../telemetry/index.js';

/** The answer `tally_append` gives for one request. */
export type AppendCode = 'ok' | 'head-moved' | 'nonce-taken' | 'sealed' | 'unknown-session';

const CODES: ReadonlySet<string> = new Set<AppendCode>(['ok', 'head-moved', 'nonce-taken', 'sealed', 'unknown-session']);

/** Whether the database answered a code this release knows. */
export function isAppendCode(x: unknown): x is AppendCode {
  return typeof x === 'string' && CODES.has(x);
}

/** How {@link GroupCommit} reaches the database. */
export interface GroupCommitPort {
  /** Runs one statement for the whole batch: one code per request, in order; throws if the statement failed (nothing written). */
  runBatch(batch: readonly AppendRequest[]): Promise<AppendCode[]>;
  /** The outcome of a committed request's code (reads the owner of a taken nonce). */
  settle(request: AppendRequest, code: AppendCode): Promise<AppendOutcome>;
  /** Appends one request alone, with the full error handling of a lone append. */
  runOne(request: AppendRequest): Promise<AppendOutcome>;
}

/** Limits of {@link GroupCommit}. */
export interface GroupCommitOptions {
  /** Most appends in one statement (default 16). 1 turns group commit off. */
  readonly maxBatch?: number;
  /** Most statements running at once (default 4). */
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
  /** Statements that carried more than one append. */
  readonly batches: number;
  /** Appends sent in those statements. */
  readonly batchedAppends: number;
  /** Batches whose statement failed, so each append was retried alone. */
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

  /** Queues one append; resolves with its own outcome after its statement committed. */
  append(request: AppendRequest): Promise<AppendOutcome> {
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

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch: Pending[] = [];
      const rest: Pending[] = [];
      const sessions = new Set<string>();
      for (const p of this.queue) {
        // One append per session per statement: a second one on the same session waits for the next.
        if (batch.length < this.maxBatch && !sessions.has(p.request.sessionId)) {
          sessions.add(p.request.sessionId);
          batch.push(p);
        } else {
          rest.push(p);
        }
      }
      this.queue = rest;
      this.inFlight++;
      void this.flush(batch).finally(() => {
        this.inFlight--;
        this.pump();
        if (this.queue.length === 0 && this.inFlight === 0) for (const f of this.idle.splice(0)) f();
      });
    }
  }

  /** Sends one batch and settles every append of it; never rejects. */
  private async flush(batch: Pending[]): Promise<void> {
    try {
      recordBatch(batch.length, batch.map((p) => p.span));
    } catch {
      // Telemetry never fails an append.
    }
    if (batch.length === 1) return this.alone(batch[0]!);
    batch.sort((a, b) => (a.request.sessionId < b.request.sessionId ? -1 : a.request.sessionId > b.request.sessionId ? 1 : 0));
    let codes: AppendCode[];
    try {
      codes = await this.port.runBatch(batch.map((p) => p.request));
    } catch {
      // The statement failed, so nothing of it was written and nothing is acknowledged: each alone.
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
    this.counts.single++;
    try {
      p.resolve(await this.port.runOne(p.request));
    } catch (e) {
      p.reject(e);
    }
  }
}

function positive(name: string, n: number): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer, got ${n}`);
  return n;
}

/** The 14 parameters of `tally_append` for `batch` (each request's nonces sorted and deduplicated). */
export function appendParams(batch: readonly AppendRequest[]): unknown[] {
  const ids: string[] = [];
  const sizes: number[] = [];
  const heads: string[] = [];
  const phases: string[] = [];
  const hashes: string[] = [];
  const kinds: string[] = [];
  const ordinals: (number | null)[] = [];
  const bytes: Buffer[] = [];
  const frontier: string[] = [];
  const frontierLen: number[] = [];
  const agents: string[] = [];
  const nonces: string[] = [];
  const intents: string[] = [];
  const nonceLen: number[] = [];
  for (const r of batch) {
    ids.push(r.sessionId);
    sizes.push(r.expected.size);
    heads.push(r.expected.head);
    phases.push(r.next.phase);
    hashes.push(r.entry.hash);
    kinds.push(r.entry.kind);
    ordinals.push(r.entry.ordinal ?? null);
    bytes.push(Buffer.from(r.entry.bytes.buffer, r.entry.bytes.byteOffset, r.entry.bytes.byteLength));
    frontier.push(...r.next.frontier);
    frontierLen.push(r.next.frontier.length);
    const claims = sortedDistinct(r.nonces);
    for (const c of claims) {
      agents.push(c.agentId);
      nonces.push(c.nonce);
      intents.push(c.intentHash);
    }
    nonceLen.push(claims.length);
  }
  return [ids, sizes, heads, phases, hashes, kinds, ordinals, bytes, frontier, frontierLen, agents, nonces, intents, nonceLen];
}

/** One order for every transaction, so two appends reserving overlapping nonce sets cannot deadlock. */
export function sortedDistinct(claims: readonly NonceClaim[]): NonceClaim[] {
  const byKey = new Map<string, NonceClaim>();
  for (const c of claims) {
    const k = `${c.agentId.length}:${c.agentId}:${c.nonce}`;
    if (!byKey.has(k)) byKey.set(k, c);
  }
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, c]) => c);
}

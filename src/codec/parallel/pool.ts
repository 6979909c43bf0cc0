/**
 * A small pool of verification worker threads. Workers are started lazily,
 * kept while the pool lives, and do not keep the process alive while idle
 * (they are `unref`ed whenever no batch is in flight).
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { TallyError } from '../../protocol/errors.js';
import type { BatchRequest, BatchResult, SegmentRequest, SegmentResult } from './layout.js';

/** Options of {@link createVerifyPool}. */
export interface VerifyPoolOptions {
  /** Worker threads (default: the machine's available parallelism, at most 8). */
  readonly workers?: number;
}

interface Slot {
  readonly worker: Worker;
  inFlight: number;
}

/** A pool of verification workers; see {@link createVerifyPool}. */
export interface VerifyPool {
  /** Number of worker threads. */
  readonly size: number;
  /** Analyses one batch on the least busy worker (the pool numbers requests itself). @internal */
  run(req: Omit<BatchRequest, 'id'>): Promise<BatchResult>;
  /** Proves one segment on the least busy worker (see ./segments.ts). @internal */
  prove(req: Omit<SegmentRequest, 'id'>): Promise<SegmentResult>;
  /** Stops every worker; the pool cannot be used afterwards. */
  close(): Promise<void>;
}

const WORKER_URL = new URL('./worker.js', import.meta.url);

/**
 * Creates a pool of verification workers for {@link verifyBundleParallel}.
 *
 * @example
 * const pool = createVerifyPool({ workers: 2 });
 * try { await verifyBundleParallel(chunks, { pool }); } finally { await pool.close(); }
 */
export function createVerifyPool(options: VerifyPoolOptions = {}): VerifyPool {
  const size = options.workers ?? Math.min(8, Math.max(1, availableParallelism()));
  if (!Number.isSafeInteger(size) || size < 1 || size > 64) {
    throw new TallyError('TALLY_VERIFY_POOL_INVALID', 'workers must be an integer from 1 to 64.', { details: `got ${String(size)}` });
  }
  const slots: Slot[] = [];
  const waiting = new Map<number, { resolve(r: BatchResult | SegmentResult): void; reject(e: unknown): void; slot: Slot }>();
  let busy = 0;
  let nextId = 0;
  let closed = false;
  let broken: unknown;

  const fail = (err: unknown): void => {
    broken ??= err;
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };

  const start = (): void => {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(WORKER_URL);
      worker.unref();
      const slot: Slot = { worker, inFlight: 0 };
      worker.on('message', (r: BatchResult | SegmentResult) => {
        const w = waiting.get(r.id);
        if (!w) return;
        waiting.delete(r.id);
        w.slot.inFlight--;
        if (--busy === 0) for (const s of slots) s.worker.unref();
        w.resolve(r);
      });
      worker.on('error', (e) => fail(new TallyError('TALLY_VERIFY_WORKER_FAILED', 'A verification worker failed.', { cause: e })));
      worker.on('exit', (code) => {
        if (!closed) fail(new TallyError('TALLY_VERIFY_WORKER_FAILED', 'A verification worker exited.', { details: `exit code ${code}` }));
      });
      slots.push(slot);
    }
  };

  /** Posts a request (its `bytes` transferred) to the least busy worker; resolves with the answer of the same id. */
  const send = <R>(body: Omit<BatchRequest, 'id'> | Omit<SegmentRequest, 'id'>): Promise<R> => {
    if (closed) return Promise.reject(new TallyError('TALLY_VERIFY_POOL_CLOSED', 'The verification pool is closed.'));
    if (broken !== undefined) return Promise.reject(broken);
    if (slots.length === 0) start();
    let slot = slots[0]!;
    for (const s of slots) if (s.inFlight < slot.inFlight) slot = s;
    if (busy++ === 0) for (const s of slots) s.worker.ref();
    slot.inFlight++;
    const req = { ...body, id: nextId++ };
    return new Promise<R>((resolve, reject) => {
      waiting.set(req.id, { resolve: resolve as (r: BatchResult | SegmentResult) => void, reject, slot });
      slot.worker.postMessage(req, [req.bytes]);
    });
  };

  return {
    size,
    run: (batch) => send<BatchResult>(batch),
    prove: (segment) => send<SegmentResult>(segment),
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      fail(new TallyError('TALLY_VERIFY_POOL_CLOSED', 'The verification pool is closed.'));
      await Promise.all(slots.map((s) => s.worker.terminate()));
    },
  };
}

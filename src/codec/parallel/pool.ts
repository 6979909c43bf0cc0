/**
 * A small pool of verification workers: child processes (the default, for
 * the segments split: ./process-pool.ts) or worker threads (either split).
 * Workers are started lazily, kept while the pool lives, and do not keep the
 * process alive while idle.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { TallyError } from '../../protocol/errors.js';
import type { BatchRequest, BatchResult, SegmentJob, SegmentMessage, SegmentResult, SegmentTicket } from './layout.js';
import { createProcessPool } from './process-pool.js';

/** Options of {@link createVerifyPool}. */
export interface VerifyPoolOptions {
  /**
   * Workers (default: with `mode: 'processes'`, one fewer than the machine's
   * available parallelism, since the main thread verifies segments too, at
   * least 1 and at most 8; with `'threads'`, the available parallelism, at most 8).
   */
  readonly workers?: number;
  /**
   * `'processes'` (default): child processes, segments only (the default
   * split), each hashing at full speed. `'threads'`: worker threads, either
   * split; node:crypto's SHA-256 costs about twice as much per call while two
   * threads of one process hash (docs/PERFORMANCE.md, issue 33).
   */
  readonly mode?: 'processes' | 'threads';
}

interface Slot {
  readonly worker: Worker;
  inFlight: number;
}

/** A pool of verification workers; see {@link createVerifyPool}. */
export interface VerifyPool {
  /** Number of workers. */
  readonly size: number;
  /** What the workers are. */
  readonly mode: 'processes' | 'threads';
  /** Analyses one batch on the least busy worker (the pool numbers requests itself). @internal */
  run(req: Omit<BatchRequest, 'id'>): Promise<BatchResult>;
  /** Hands one segment to the least busy worker, which proves it at once; its answer comes once `finish` gives its place (see ./segments.ts). @internal */
  submit(job: SegmentJob): SegmentTicket;
  /** Stops every worker; the pool cannot be used afterwards. */
  close(): Promise<void>;
  /** The workers' process ids (`'processes'`, once started), for their memory. @internal */
  pids(): number[];
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
  const mode = options.mode ?? 'processes';
  if (mode !== 'processes' && mode !== 'threads') {
    throw new TallyError('TALLY_VERIFY_POOL_INVALID', "mode must be 'processes' or 'threads'.", { details: `got ${String(mode)}` });
  }
  const cores = availableParallelism();
  const size = options.workers ?? Math.min(8, Math.max(1, mode === 'processes' ? cores - 1 : cores));
  if (!Number.isSafeInteger(size) || size < 1 || size > 64) {
    throw new TallyError('TALLY_VERIFY_POOL_INVALID', 'workers must be an integer from 1 to 64.', { details: `got ${String(size)}` });
  }
  if (mode === 'processes') {
    const p = createProcessPool(size);
    return {
      size,
      mode,
      run: () => Promise.reject(new TallyError('TALLY_VERIFY_OPTIONS_INVALID', "split: 'records' needs a pool of threads (createVerifyPool({ mode: 'threads' })).")),
      submit: (job) => p.submit(job),
      close: () => p.close(),
      pids: () => p.pids(),
    };
  }
  const slots: Slot[] = [];
  const waiting = new Map<number, { resolve(r: BatchResult | SegmentResult): void; reject(e: unknown): void; slot: Slot; ticket?: SegmentTicket }>();
  let busy = 0;
  let nextId = 0;
  let closed = false;
  let broken: unknown;
  const spare: ArrayBuffer[] = [];

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
      worker.on('message', (r: BatchResult | SegmentResult | { id: number; proven: number; provenEnd: number; early: true }) => {
        const w = waiting.get(r.id);
        if (!w) return;
        if ('early' in r) return w.ticket?.onProven?.(r.proven, r.provenEnd);
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

  /** Posts a request built for its id (its `bytes` transferred) to the least busy worker; the answer of the same id resolves it. */
  const send = <R>(build: (id: number) => BatchRequest | SegmentMessage, transfer: ArrayBuffer[]): { readonly answer: Promise<R>; readonly slot: Slot; readonly id: number } => {
    if (closed) throw new TallyError('TALLY_VERIFY_POOL_CLOSED', 'The verification pool is closed.');
    if (broken !== undefined) throw broken;
    if (slots.length === 0) start();
    let slot = slots[0]!;
    for (const s of slots) if (s.inFlight < slot.inFlight) slot = s;
    if (busy++ === 0) for (const s of slots) s.worker.ref();
    slot.inFlight++;
    const id = nextId++;
    const answer = new Promise<R>((resolve, reject) => {
      waiting.set(id, { resolve: resolve as (r: BatchResult | SegmentResult) => void, reject, slot });
      slot.worker.postMessage(build(id), transfer);
    });
    return { answer, slot, id };
  };

  return {
    size,
    mode,
    pids: () => [],
    run: (batch) => {
      try {
        return send<BatchResult>((id) => ({ ...batch, id }), [batch.bytes]).answer;
      } catch (e) {
        return Promise.reject(e);
      }
    },
    submit: (job) => {
      // One buffer of the segment's bytes, transferred to the worker and handed back with the answer, then reused.
      const i = spare.findIndex((b) => b.byteLength >= job.length);
      const buffer = i < 0 ? new ArrayBuffer(Math.max(job.length, 1 << 18)) : spare.splice(i, 1)[0]!;
      const bytes = new Uint8Array(buffer);
      let o = 0;
      for (const p of job.pieces) {
        bytes.set(p, o);
        o += p.length;
      }
      let sent: { readonly answer: Promise<SegmentResult>; readonly slot: Slot; readonly id: number };
      try {
        sent = send<SegmentResult>((id) => ({ segment: true, id, bytes: buffer, length: job.length }), [buffer]);
      } catch (e) {
        return { finish: () => Promise.reject(e) };
      }
      sent.answer.catch(() => undefined); // observed through finish
      const ticket: SegmentTicket = {
        finish: (base) => {
          if (waiting.has(sent.id)) sent.slot.worker.postMessage({ finish: true, id: sent.id, base } satisfies SegmentMessage);
          return sent.answer.then((r) => {
            if (r.bytes !== undefined && spare.length < 2 * size + 2) spare.push(r.bytes);
            return r;
          });
        },
      };
      const w = waiting.get(sent.id);
      if (w !== undefined) w.ticket = ticket;
      return ticket;
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      fail(new TallyError('TALLY_VERIFY_POOL_CLOSED', 'The verification pool is closed.'));
      await Promise.all(slots.map((s) => s.worker.terminate()));
    },
  };
}

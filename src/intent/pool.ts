/**
 * A pool of worker threads that validate signed Intents (the secp256k1 work
 * dominates: ~1 ms per signature), so turns of many sessions are ruled on in
 * parallel. Each worker runs the real `validateIntent` with its own signer key
 * cache; nonce lookups come back to this thread, which owns the store. The
 * results are exactly those of `validateIntent` on this thread (it is a pure
 * function of the Intent, the options and the nonce answers).
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { TallyError } from '../protocol/errors.js';
import type { NonceLookup } from './nonce-guard.js';
import type { FromWorker, ToWorker } from './pool-messages.js';
import type { IntentLimits, ValidateIntentResult } from './validate.js';

/** Options of {@link createIntentPool}. */
export interface IntentPoolOptions {
  /** Worker threads (default: the machine's available parallelism, at most 8). */
  readonly workers?: number;
}

/** What one pooled validation runs with (the seams of `validateIntent`, as data where they cross threads). */
export interface PooledValidation {
  /** The signer registry: agent id → address (own string members only are used). */
  readonly signers: Readonly<Record<string, string>> | ReadonlyMap<string, string>;
  /** `isNonceUsed` of `validateIntent`, answered on this thread. */
  isNonceUsed(agentId: string, nonce: string): NonceLookup | Promise<NonceLookup>;
  readonly now: number;
  readonly clockSkewMs?: number;
  readonly maxTtlHorizonMs?: number;
  readonly limits?: IntentLimits;
  /**
   * `isNonceUsed(agentId, nonce)` answered ahead of time for the key the Intent
   * will most likely ask about: when the validator asks exactly that key, the
   * worker uses it instead of asking this thread (any other key still asks).
   * Nonces are never released, and the store re-checks them at append, so an
   * early answer never admits a used nonce.
   */
  readonly nonceHint?: { readonly agentId: string; readonly nonce: string; readonly lookup: NonceLookup };
}

/** A pool of Intent validation workers; see {@link createIntentPool}. */
export interface IntentPool {
  /** Number of worker threads. */
  readonly size: number;
  /**
   * Validates the Intent carried by `authored` (see `carriedIntent`):
   * `undefined` when the bytes carry none, else exactly what `validateIntent`
   * returns for it with a `resolveSigner` that reads `signers`. Throws as
   * `validateIntent` does (option misuse, a failing nonce seam). `affinity`
   * (for example the agent id) sends requests with the same key to the same
   * worker while it is not much busier than the others, so each worker keeps
   * the keys of its own agents cached; it never changes a result.
   */
  validateAuthored(authored: Uint8Array, options: PooledValidation, affinity?: string): Promise<ValidateIntentResult | undefined>;
  /** Stops every worker; the pool cannot be used afterwards. */
  close(): Promise<void>;
}

const WORKER_URL = new URL('./pool-worker.js', import.meta.url);

interface Slot {
  readonly worker: Worker;
  inFlight: number;
}

interface Job {
  readonly slot: Slot;
  readonly options: PooledValidation;
  resolve(r: ValidateIntentResult | undefined): void;
  reject(e: unknown): void;
}

/** How many more requests the preferred worker may hold than the least busy one before work spills over. */
const SPILL = 4;

// FNV-1a over UTF-16 code units: a stable worker index for an affinity key.
function affinityIndex(key: string, n: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % n;
}

function signerPairs(signers: PooledValidation['signers']): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (signers instanceof Map) {
    for (const [k, v] of signers) if (typeof k === 'string' && typeof v === 'string') out.push([k, v]);
    return out;
  }
  const o = signers as Readonly<Record<string, unknown>>;
  for (const k of Object.keys(o)) {
    const v = o[k];
    if (typeof v === 'string') out.push([k, v]);
  }
  return out;
}

/**
 * Creates a pool of Intent validation workers for `createIntentRuler({ pool })`.
 * Idle workers do not keep the process alive.
 *
 * @example
 * const pool = createIntentPool({ workers: 2 });
 * const engine = createEngine({ ruler: createIntentRuler({ pool }) });
 * // … later
 * await pool.close();
 */
export function createIntentPool(options: IntentPoolOptions = {}): IntentPool {
  const size = options.workers ?? Math.min(8, Math.max(1, availableParallelism()));
  if (!Number.isSafeInteger(size) || size < 1 || size > 64) {
    throw new TallyError('TALLY_INTENT_POOL_INVALID', 'workers must be an integer from 1 to 64.', { details: `got ${String(size)}` });
  }
  const slots: Slot[] = [];
  const jobs = new Map<number, Job>();
  let nextId = 0;
  let rr = 0;
  let busy = 0;
  let closed = false;
  let broken: unknown;

  const finish = (id: number): Job | undefined => {
    const job = jobs.get(id);
    if (!job) return undefined;
    jobs.delete(id);
    job.slot.inFlight--;
    if (--busy === 0) for (const s of slots) s.worker.unref();
    return job;
  };
  const failAll = (err: unknown): void => {
    broken ??= err;
    for (const id of [...jobs.keys()]) finish(id)?.reject(err);
  };
  const onMessage = (slot: Slot, m: FromWorker): void => {
    if (m.t === 'nonce') {
      const job = jobs.get(m.id);
      if (!job) return;
      const reply = (msg: ToWorker): void => slot.worker.postMessage(msg);
      Promise.resolve()
        .then(() => job.options.isNonceUsed(m.agentId, m.nonce))
        .then(
          (lookup) => reply({ t: 'nonce-reply', id: m.id, lookup }),
          (e: unknown) => reply({ t: 'nonce-error', id: m.id, message: e instanceof Error ? e.message : String(e) }),
        );
      return;
    }
    const job = finish(m.id);
    if (!job) return;
    if (m.t === 'error') job.reject(new TallyError(m.code, m.message, m.details === undefined ? {} : { details: m.details }));
    else job.resolve(m.carried ? m.result : undefined);
  };
  const start = (): void => {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(WORKER_URL);
      worker.unref();
      const slot: Slot = { worker, inFlight: 0 };
      worker.on('message', (m: FromWorker) => onMessage(slot, m));
      worker.on('error', (e) => failAll(new TallyError('TALLY_INTENT_WORKER_FAILED', 'An Intent validation worker failed.', { cause: e })));
      worker.on('exit', (code) => {
        if (!closed) failAll(new TallyError('TALLY_INTENT_WORKER_FAILED', 'An Intent validation worker exited.', { details: `exit code ${code}` }));
      });
      slots.push(slot);
    }
  };

  return {
    size,
    validateAuthored(authored: Uint8Array, opts: PooledValidation, affinity?: string): Promise<ValidateIntentResult | undefined> {
      if (closed) return Promise.reject(new TallyError('TALLY_INTENT_POOL_CLOSED', 'The Intent validation pool is closed.'));
      if (broken !== undefined) return Promise.reject(broken);
      if (slots.length === 0) start();
      let slot = slots[rr++ % slots.length]!;
      for (const s of slots) if (s.inFlight < slot.inFlight) slot = s;
      if (affinity !== undefined) {
        const preferred = slots[affinityIndex(affinity, slots.length)]!;
        if (preferred.inFlight <= slot.inFlight + SPILL) slot = preferred;
      }
      if (busy++ === 0) for (const s of slots) s.worker.ref();
      slot.inFlight++;
      const id = nextId++;
      return new Promise<ValidateIntentResult | undefined>((resolve, reject) => {
        jobs.set(id, { slot, options: opts, resolve, reject });
        const msg: ToWorker = {
          t: 'validate',
          id,
          authored,
          signers: signerPairs(opts.signers),
          now: opts.now,
          ...(opts.clockSkewMs === undefined ? {} : { clockSkewMs: opts.clockSkewMs }),
          ...(opts.maxTtlHorizonMs === undefined ? {} : { maxTtlHorizonMs: opts.maxTtlHorizonMs }),
          ...(opts.limits === undefined ? {} : { limits: opts.limits }),
          ...(opts.nonceHint === undefined ? {} : { nonceHint: opts.nonceHint }),
        };
        slot.worker.postMessage(msg);
      });
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      failAll(new TallyError('TALLY_INTENT_POOL_CLOSED', 'The Intent validation pool is closed.'));
      await Promise.all(slots.map((s) => s.worker.terminate()));
    },
  };
}

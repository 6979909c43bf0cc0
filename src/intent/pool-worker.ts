/**
 * Entry point of an Intent validation worker: runs the real `validateIntent`
 * (with its own signer key cache) on the Intent carried by each request's
 * authored bytes. The nonce seam is answered by the main thread, which owns
 * the store, through a {@link NonceQuery} round trip.
 */
import { parentPort } from 'node:worker_threads';
import { TallyError } from '../protocol/errors.js';
import { carriedIntent } from './carried.js';
import type { NonceLookup } from './nonce-guard.js';
import type { FromWorker, ToWorker, ValidateRequest } from './pool-messages.js';
import { createSignerCache } from './signer-cache.js';
import { validateIntent } from './validate.js';

const port = parentPort;
// As the single-thread ruler: at most 64 keys (~0.4 MB of tables each) per worker.
const signerCache = createSignerCache({ maxEntries: 64 });
const nonceWaits = new Map<number, { resolve(l: NonceLookup): void; reject(e: unknown): void }>();

function send(m: FromWorker): void {
  port!.postMessage(m);
}

async function validate(req: ValidateRequest): Promise<void> {
  const carried = carriedIntent(req.authored);
  if (!carried) return send({ t: 'done', id: req.id, carried: false });
  const signers = new Map(req.signers);
  try {
    const result = await validateIntent(carried.intent, {
      resolveSigner: (agentId) => signers.get(agentId) ?? null,
      isNonceUsed: (agentId, nonce) =>
        req.nonceHint !== undefined && req.nonceHint.agentId === agentId && req.nonceHint.nonce === nonce
          ? req.nonceHint.lookup
          : new Promise<NonceLookup>((resolve, reject) => {
              nonceWaits.set(req.id, { resolve, reject });
              send({ t: 'nonce', id: req.id, agentId, nonce });
            }),
      now: req.now,
      ...(req.clockSkewMs === undefined ? {} : { clockSkewMs: req.clockSkewMs }),
      ...(req.maxTtlHorizonMs === undefined ? {} : { maxTtlHorizonMs: req.maxTtlHorizonMs }),
      ...(req.limits === undefined ? {} : { limits: req.limits }),
      signerCache,
    });
    send({ t: 'done', id: req.id, carried: true, result });
  } catch (e) {
    const t = e instanceof TallyError ? e : undefined;
    send({
      t: 'error',
      id: req.id,
      code: t?.code ?? 'TALLY_INTENT_WORKER_FAILED',
      message: t?.shortMessage ?? (e instanceof Error ? e.message : String(e)),
      ...(t?.details === undefined ? {} : { details: t.details }),
    });
  }
}

if (port) {
  port.on('message', (m: ToWorker) => {
    if (m.t === 'validate') {
      void validate(m);
      return;
    }
    const w = nonceWaits.get(m.id);
    if (!w) return;
    nonceWaits.delete(m.id);
    if (m.t === 'nonce-reply') w.resolve(m.lookup);
    else w.reject(new Error(m.message));
  });
}

/**
 * Micro-benchmark of Intent admission: viem's `recoverMessageAddress` (the
 * baseline cost of authenticating one signed message) against the full
 * `validateIntent` (schema + canonical payload + hash + signature + nonce + ttl
 * + bounds) with a warm signer cache, measured in the same run on the same
 * distinct signed Intents. Not part of the public entry; `npm run bench` calls it.
 */
import { recoverMessageAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { TallyError } from '../protocol/errors.js';
import { canonicalPayload } from './canonical.js';
import type { Intent } from './schema.js';
import { signIntent } from './sign.js';
import { createSignerCache } from './signer-cache.js';
import { validateIntent } from './validate.js';

/** Throughputs measured by {@link benchIntentValidation}. */
export interface IntentBenchResult {
  /** Number of distinct signed Intents per loop. */
  readonly n: number;
  /** viem `recoverMessageAddress` calls per second over the canonical payloads. */
  readonly baselineRecoverPerSec: number;
  /** `validateIntent` calls per second with a warm signer cache. */
  readonly validatePerSec: number;
  /** validatePerSec / baselineRecoverPerSec. */
  readonly ratio: number;
}

// Anvil/Hardhat test account #0 — a public, well-known key; never holds value.
const BENCH_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const FAR_TTL = '2100-01-01T00:00:00Z';

/**
 * Signs `n` distinct Intents, then times both loops. Throws `TALLY_BENCH_FAILED`
 * if any verification disagrees (a fast wrong answer is not a result).
 *
 * @example
 * const { baselineRecoverPerSec, validatePerSec, ratio } = await benchIntentValidation(300);
 */
export async function benchIntentValidation(n = 300): Promise<IntentBenchResult> {
  if (!Number.isSafeInteger(n) || n < 1) throw new TallyError('TALLY_BENCH_FAILED', 'n must be a positive integer.', { details: `got ${String(n)}` });
  const account = privateKeyToAccount(BENCH_KEY);
  const intents: Intent[] = [];
  for (let i = 0; i <= n; i++) {
    intents.push(
      await signIntent(
        { action: 'open', agent_id: 'bench-agent', nonce: i, ttl: FAR_TTL, size: `${1 + i}.25`, market: 'BTC-PERP', side: 'long', leverage: 3, max_slippage: 0.005 },
        account,
      ),
    );
  }
  const warm = intents.pop() as Intent;
  const payloads = intents.map((intent) => canonicalPayload(intent));

  let t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const signer = await recoverMessageAddress({ message: payloads[i] as string, signature: (intents[i] as Intent).signature as `0x${string}` });
    if (signer !== account.address) throw new TallyError('TALLY_BENCH_FAILED', 'Baseline recovery returned the wrong signer.');
  }
  const baselineMs = performance.now() - t0;

  const signerCache = createSignerCache();
  const opts = { resolveSigner: () => account.address, isNonceUsed: () => false, now: Date.UTC(2030, 0, 1), signerCache };
  if (!(await validateIntent(warm, opts)).ok) throw new TallyError('TALLY_BENCH_FAILED', 'Warm-up Intent was rejected.');
  t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const r = await validateIntent(intents[i], opts);
    if (!r.ok) throw new TallyError('TALLY_BENCH_FAILED', 'validateIntent rejected a valid Intent.', { details: `${r.code}: ${r.message}` });
  }
  const validateMs = performance.now() - t0;

  const baselineRecoverPerSec = (n / baselineMs) * 1000;
  const validatePerSec = (n / validateMs) * 1000;
  return { n, baselineRecoverPerSec, validatePerSec, ratio: validatePerSec / baselineRecoverPerSec };
}

/**
 * A bounded cache of signer public keys with precomputed multiplication tables,
 * keyed by lowercase address. With it, validating an Intent from a known agent
 * checks the signature against the cached key instead of recovering the key
 * (≈3–4× fewer curve operations), with exactly the same result.
 *
 * The cache fills itself: the first Intent of an address is verified by full
 * recovery and, when the recovered address matches, the recovered key is kept.
 * Keys can also be registered up front with `register(publicKey)`.
 */
import { TallyError } from '../protocol/errors.js';
import { addressOfPoint, pointFromPublicKey, precomputePoint } from './ecdsa.js';
import type { CurvePoint } from './ecdsa.js';

/** Options of {@link createSignerCache}. */
export interface SignerCacheOptions {
  /** Most keys kept (least recently used evicted first). Each key holds ~0.4 MB of tables. Default 64. */
  readonly maxEntries?: number;
}

/** A per-process cache of signer keys; pass it to `validateIntent` / `verifyIntentSignature`. */
export interface SignerCache {
  /**
   * Registers a SEC1 public key (hex, 33 or 65 bytes, optional `0x`) and
   * returns its lowercase address. Throws `TALLY_INTENT_PUBLIC_KEY_INVALID`.
   */
  register(publicKey: string): string;
  /** True when a key for `address` (any letter case) is cached. */
  has(address: string): boolean;
  /** Number of cached keys. */
  readonly size: number;
  /** Drops every cached key. */
  clear(): void;
}

const entries = new WeakMap<SignerCache, Map<string, CurvePoint>>();
const capacities = new WeakMap<SignerCache, number>();

/**
 * Creates an empty signer cache.
 *
 * @example
 * const signerCache = createSignerCache();
 * await validateIntent(input, { ...opts, signerCache }); // first call recovers, later calls are fast
 */
export function createSignerCache(options: SignerCacheOptions = {}): SignerCache {
  const maxEntries = options.maxEntries ?? 64;
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
    throw new TallyError('TALLY_INTENT_OPTIONS_INVALID', 'maxEntries must be a positive integer.', { details: `got ${String(maxEntries)}` });
  }
  const map = new Map<string, CurvePoint>();
  const cache: SignerCache = {
    register(publicKey: string): string {
      let point: CurvePoint;
      try {
        point = pointFromPublicKey(publicKey);
      } catch (cause) {
        throw new TallyError('TALLY_INTENT_PUBLIC_KEY_INVALID', 'Not a valid secp256k1 public key.', { cause });
      }
      const address = addressOfPoint(point);
      remember(cache, address, point);
      return address;
    },
    has: (address: string) => map.has(address.toLowerCase()),
    get size() {
      return map.size;
    },
    clear: () => map.clear(),
  };
  entries.set(cache, map);
  capacities.set(cache, maxEntries);
  return cache;
}

/** The cached point for a lowercase address (refreshing its recency), if any. @internal */
export function cachedPoint(cache: SignerCache, address: string): CurvePoint | undefined {
  const map = entries.get(cache);
  const point = map?.get(address);
  if (map !== undefined && point !== undefined) {
    map.delete(address);
    map.set(address, point);
  }
  return point;
}

/** Stores `point` (already known to hash to `address`) with precomputed tables. @internal */
export function remember(cache: SignerCache, address: string, point: CurvePoint): void {
  const map = entries.get(cache);
  const capacity = capacities.get(cache);
  if (map === undefined || capacity === undefined) return; // not created by createSignerCache: ignore
  if (map.has(address)) return;
  map.set(address, precomputePoint(point));
  while (map.size > capacity) {
    const oldest = map.keys().next();
    if (oldest.done === true) break;
    map.delete(oldest.value);
  }
}

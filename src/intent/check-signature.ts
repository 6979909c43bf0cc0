/**
 * The signature check shared by `verifyIntentSignature` and `validateIntent`:
 * does `signature` over `payload` (EIP-191) come from `expected`? Uses the
 * signer cache fast path when the key is cached, full recovery otherwise.
 */
import { eip191Digest } from './canonical.js';
import { addressOfPoint, recoverPoint, verifyWithPoint } from './ecdsa.js';
import { parseSignature } from './signature.js';
import { cachedPoint, remember } from './signer-cache.js';
import type { SignerCache } from './signer-cache.js';

/** Outcome of {@link checkSignature}. */
export type CheckSignatureResult = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * Checks `signature` (0x, 65 bytes) over the canonical `payload` against the
 * LOWERCASE address `expected`. Never throws.
 */
export function checkSignature(payload: string, signature: string, expected: string, cache?: SignerCache): CheckSignatureResult {
  const parsed = parseSignature(signature);
  if (!parsed.ok) return parsed;
  const digest = eip191Digest(payload);
  const point = cache === undefined ? undefined : cachedPoint(cache, expected);
  if (point !== undefined) {
    return verifyWithPoint(digest, parsed.sig, point) ? { ok: true } : { ok: false, reason: 'signature is not by the registered signer' };
  }
  const recovered = recoverPoint(digest, parsed.sig);
  // The same reason as the cached path: a ruling (and so an entry hash) must
  // never depend on what the signer cache happened to hold.
  if (recovered === null) return { ok: false, reason: 'signature is not by the registered signer' };
  if (addressOfPoint(recovered) !== expected) return { ok: false, reason: 'signature is not by the registered signer' };
  if (cache !== undefined) remember(cache, expected, recovered);
  return { ok: true };
}

/**
 * Signer recovery and verification of signed Intents. Both never throw: a
 * malformed Intent, signature or address is `null` / `false`, a deterministic
 * rejection rather than an exception.
 *
 * Only EOAs are supported (ERC-1271 contract signers are out of scope);
 * `verifyIntentSignature` is the single seam to extend for them.
 */
import { checksumAddress, lowerAddress } from './address.js';
import { canonicalPayloadOf, eip191Digest } from './canonical.js';
import { checkSignature } from './check-signature.js';
import { addressOfPoint, recoverPoint } from './ecdsa.js';
import { intentSchema } from './schema.js';
import { parseSignature } from './signature.js';
import type { SignerCache } from './signer-cache.js';

/**
 * Recovers the EIP-55 address that signed `intent` (EIP-191 over its canonical
 * payload), or null when the Intent does not parse or the signature is not a
 * canonical 65-byte low-s signature with `v ∈ {27, 28}`.
 *
 * @example
 * await recoverIntentSigner(signed); // '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'
 */
export async function recoverIntentSigner(intent: unknown): Promise<string | null> {
  try {
    const parsed = intentSchema.safeParse(intent);
    if (!parsed.success) return null;
    const sig = parseSignature(parsed.data.signature);
    if (!sig.ok) return null;
    const point = recoverPoint(eip191Digest(canonicalPayloadOf(parsed.data)), sig.sig);
    return point === null ? null : checksumAddress(addressOfPoint(point));
  } catch {
    return null;
  }
}

/** Options of {@link verifyIntentSignature}. */
export interface VerifyIntentSignatureOptions {
  /** Key cache for the fast path (see `createSignerCache`). */
  readonly signerCache?: SignerCache;
}

/**
 * True when `intent` parses and is signed by `expected` (compared
 * checksum-insensitively). Same result with or without a signer cache.
 *
 * @example
 * await verifyIntentSignature(signed, '0xF39FD6E51AAD88F6F4CE6AB8827279CFFFB92266'); // true
 */
export async function verifyIntentSignature(
  intent: unknown,
  expected: string,
  options: VerifyIntentSignatureOptions = {},
): Promise<boolean> {
  try {
    const want = lowerAddress(expected);
    if (want === null) return false;
    const parsed = intentSchema.safeParse(intent);
    if (!parsed.success) return false;
    return checkSignature(canonicalPayloadOf(parsed.data), parsed.data.signature, want, options.signerCache).ok;
  } catch {
    return false;
  }
}

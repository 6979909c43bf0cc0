/**
 * EIP-191 personal_sign over referee texts: signing with a local key (viem)
 * and strict recovery (65-byte `r ‖ s ‖ v`, `v ∈ {27, 28}`, low s), the same
 * rules as Intent signatures.
 */
import { privateKeyToAccount, type LocalAccount } from 'viem/accounts';
import { eip191Digest } from '../intent/canonical.js';
import { createSignerCache } from '../intent/signer-cache.js';
import { checkSignature } from '../intent/check-signature.js';
import { addressOfPoint, recoverPoint } from '../intent/ecdsa.js';
import { parseSignature } from '../intent/signature.js';
import { TallyError } from '../protocol/errors.js';

/** A signing key: 32-byte hex private key or a viem local account. */
export type RefereeSigner = `0x${string}` | LocalAccount;

/** The viem account of a signer; throws `TALLY_REFEREE_SIGNER_INVALID` for an unusable key. */
export function accountOf(signer: RefereeSigner): LocalAccount {
  try {
    const a = typeof signer === 'string' ? privateKeyToAccount(signer) : signer;
    if (typeof a.signMessage !== 'function') throw new Error('account cannot sign messages');
    return a;
  } catch (cause) {
    throw new TallyError('TALLY_REFEREE_SIGNER_INVALID', 'Not a usable secp256k1 signer.', { cause });
  }
}

/**
 * Signs `text` (EIP-191 personal_sign); returns the lowercase 65-byte hex signature.
 *
 * @example
 * const sig = await signText(key, transitionMessage({ op: 'terminate', instance, session }));
 */
export async function signText(signer: RefereeSigner, text: string): Promise<string> {
  const sig = await accountOf(signer).signMessage({ message: text });
  return sig.toLowerCase();
}

/**
 * The lowercase address that signed `text`, or null when the signature is not
 * a canonical low-s 65-byte signature or recovers no key. Never throws.
 *
 * @example
 * recoverText(text, sig) === account.address.toLowerCase(); // true
 */
export function recoverText(text: string, signature: unknown): string | null {
  return recoverDigest(eip191Digest(text), signature);
}

/**
 * The lowercase address whose key signed the 32-byte `digest` (an EIP-712
 * digest, say), or null — with the same signature rules as {@link recoverText}. Never throws.
 */
export function recoverDigest(digest: Uint8Array, signature: unknown): string | null {
  const parsed = parseSignature(signature);
  if (!parsed.ok) return null;
  const point = recoverPoint(digest, parsed.sig);
  return point === null ? null : addressOfPoint(point);
}

/** Keys of the parties the referee checks (executors, principals, operators, judges): precomputed after first use. */
const partyKeys = createSignerCache({ maxEntries: 32 });

/**
 * True when `signature` over `text` (EIP-191) is by `expected` (a lowercase
 * address). Same answer as `recoverText(text, signature) === expected`, but
 * uses a precomputed key after the first check of a party. Never throws.
 *
 * @example
 * verifyText(transitionMessage(m), sig, mandate.executor); // true
 */
export function verifyText(text: string, signature: unknown, expected: string): boolean {
  if (typeof signature !== 'string') return false;
  try {
    return checkSignature(text, signature, expected, partyKeys).ok;
  } catch {
    return false;
  }
}

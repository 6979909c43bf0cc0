/** Signing: EIP-191 personal_sign over the canonical payload, done by the harness (never the agent). */
import { privateKeyToAccount } from 'viem/accounts';
import type { LocalAccount } from 'viem/accounts';
import { TallyError } from '../protocol/errors.js';
import { canonicalPayloadOf } from './canonical.js';
import { describeFirstIssue } from './issues.js';
import { unsignedIntentSchema } from './schema.js';
import type { Intent, UnsignedIntentInput } from './schema.js';

/** A signer: a 32-byte hex private key or a viem local account. */
export type IntentSigner = `0x${string}` | LocalAccount;

/**
 * Normalizes an unsigned Intent and signs its canonical payload (EIP-191,
 * deterministic RFC 6979 nonces via viem). Returns the normalized signed Intent.
 * Throws `TALLY_INTENT_INVALID` for an input that does not parse and
 * `TALLY_INTENT_SIGNER_INVALID` for an unusable key.
 *
 * @example
 * const intent = await signIntent({ action: 'close', agent_id: 'a1', nonce: 1, ttl: '2030-01-01T00:00:00Z', size: 1.0, market: 'BTC-PERP', max_slippage: .005 }, privateKey);
 * intent.size; // '1'
 */
export async function signIntent(unsigned: UnsignedIntentInput, signer: IntentSigner): Promise<Intent> {
  const parsed = unsignedIntentSchema.safeParse(unsigned);
  if (!parsed.success) {
    throw new TallyError('TALLY_INTENT_INVALID', 'Unsigned Intent does not match the Intent schema.', { details: describeFirstIssue(parsed.error) });
  }
  let account: LocalAccount;
  try {
    account = typeof signer === 'string' ? privateKeyToAccount(signer) : signer;
  } catch (cause) {
    throw new TallyError('TALLY_INTENT_SIGNER_INVALID', 'Not a usable secp256k1 private key.', { cause });
  }
  if (typeof account.signMessage !== 'function') {
    throw new TallyError('TALLY_INTENT_SIGNER_INVALID', 'Signer account cannot sign messages.');
  }
  const signature = await account.signMessage({ message: canonicalPayloadOf(parsed.data) });
  return { ...parsed.data, signature: signature.toLowerCase() };
}

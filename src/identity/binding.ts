/**
 * A day's log binding (§15.5) checked under a pinned log identity (§15.8)
 * with node's SHA-256, by the one rule {@link verifyLogBindingUnderIdentityWith}
 * (binding-rule.ts; the shard keys carry the Ed25519 the identity was opened
 * with, node:crypto's for `openLogIdentity`).
 */
import { sha256 } from '../codec/sha256.js';
import { verifyLogBindingUnderIdentityWith, type VerifyUnderIdentityOptions, type VerifyUnderIdentityResult } from './binding-rule.js';

export type { VerifyUnderIdentityOptions, VerifyUnderIdentityResult, VerifyUnderIdentityWithOptions } from './binding-rule.js';

/**
 * Checks `text` (a tlog-proof) under the identity. Never throws on input.
 *
 * @example
 * const id = openLogIdentity(note); if (!id.ok) throw …;
 * const r = verifyLogBindingUnderIdentity(text, { identity: id, checkpoint, seal: true });
 */
export function verifyLogBindingUnderIdentity(text: string, options: VerifyUnderIdentityOptions): VerifyUnderIdentityResult {
  return verifyLogBindingUnderIdentityWith(text, { ...options, digest: sha256 });
}

/**
 * The one rule of a day's log binding (§15.5) checked under a pinned log
 * identity (§15.8), with the digest passed in (the shard keys carry the
 * Ed25519 the identity was opened with): the shard the binding's log
 * checkpoint names is found in the identity (the current one or a previous
 * one), the binding is verified with that shard's log key and witness policy
 * (§15.5 steps 1–8, `verifyWitnessedLogBindingWith`, the one copy of those
 * rules), and a previous shard's binding must lie within its final
 * checkpoint: not larger, and at its size the same root. `tally verify
 * --log-identity` runs it with node's cryptography (binding.ts), the
 * grader's page with WebCrypto's (src/web/browser/log-identity.ts).
 * Browser-safe.
 */
import type { Digest } from '../protocol/index.js';
import { parseCheckpoint } from '../receipt/checkpoint/checkpoint.js';
import { parseTlogProof } from '../receipt/checkpoint/tlogProof.js';
import { openPinnedNote } from '../receipt/note/open-pinned.js';
import type { BoundCheckpoint, VerifyLogBindingResult } from '../log/binding-rule.js';
import { verifyWitnessedLogBindingWith, type WitnessStageFailure } from '../witness/policy/log-binding.js';
import type { IdentityShard, OpenedLogIdentity } from './document-rule.js';

/** Options of {@link verifyLogBindingUnderIdentityWith}. */
export interface VerifyUnderIdentityOptions {
  /** An identity that opened (`openLogIdentity` / `openLogIdentityChain`, or their `…With` forms). */
  readonly identity: OpenedLogIdentity;
  /** The session checkpoint the day was accepted against. */
  readonly checkpoint: BoundCheckpoint;
  /** When given, the leaf's `seal` must equal it. */
  readonly seal?: boolean;
}

/** Options of {@link verifyLogBindingUnderIdentityWith}: {@link VerifyUnderIdentityOptions} and SHA-256. */
export interface VerifyUnderIdentityWithOptions extends VerifyUnderIdentityOptions {
  /** SHA-256 (node's, or the page's): the leaf hash and the tree's nodes. */
  readonly digest: Digest;
}

/** Outcome of {@link verifyLogBindingUnderIdentityWith}. */
export type VerifyUnderIdentityResult =
  | (Extract<VerifyLogBindingResult, { ok: true }> & { readonly cosignedBy: readonly string[]; readonly shard: IdentityShard })
  | Extract<VerifyLogBindingResult, { ok: false }>
  | WitnessStageFailure
  | { readonly ok: false; readonly stage: 'identity'; readonly code: 'TALLY_LOG_IDENTITY_WRONG_LOG'; readonly message: string };

/**
 * Checks `text` (a tlog-proof) under the identity (see the module comment).
 * Never throws on input.
 *
 * @example
 * const r = verifyLogBindingUnderIdentityWith(text, { identity, checkpoint, seal: true, digest: sha256 });
 */
export function verifyLogBindingUnderIdentityWith(text: string, options: VerifyUnderIdentityWithOptions): VerifyUnderIdentityResult {
  const { identity } = options;
  const parsed = parseTlogProof(text);
  // The origin the binding claims (unauthenticated until its shard's key verifies it); an unreadable binding is
  // refused by §15.5's own first steps, under the current shard.
  const note = parsed.ok ? parsed.tlogProof.signedCheckpoint : '';
  const claimed = parsed.ok ? parseCheckpoint(note.slice(0, note.indexOf('\n\n') + 1)) : undefined;
  const origin = claimed?.ok ? claimed.checkpoint.origin : identity.shards[0]!.origin;
  const shard = identity.shards.find((s) => s.origin === origin);
  if (shard === undefined) {
    return { ok: false, stage: 'identity', code: 'TALLY_LOG_IDENTITY_WRONG_LOG', message: `the binding's log checkpoint is of ${JSON.stringify(origin)}, a log the identity does not name (it names ${identity.shards.map((s) => s.origin).join(', ')})` };
  }
  const logVerifiers = [shard.logKey];
  const r = verifyWitnessedLogBindingWith(text, {
    open: (n) => openPinnedNote(n, logVerifiers),
    digest: options.digest,
    logVerifiers,
    checkpoint: options.checkpoint,
    policy: shard.policy,
    ...(options.seal === undefined ? {} : { seal: options.seal }),
  });
  if (!r.ok) return r;
  const final = shard.final;
  if (final !== undefined && (r.log.size > final.size || (r.log.size === final.size && r.log.root !== final.root))) {
    return {
      ok: false,
      stage: 'identity',
      code: 'TALLY_LOG_IDENTITY_WRONG_LOG',
      message: `the binding's checkpoint of ${shard.origin} (size ${r.log.size}, root ${r.log.root}) is not within the shard's final checkpoint (size ${final.size}, root ${final.root}) its successor recorded`,
    };
  }
  return { ...r, shard };
}

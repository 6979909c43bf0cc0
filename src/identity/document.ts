/**
 * The engine log's identity document (docs/PROTOCOL.md §15.8): a C2SP signed
 * note whose text is `src/protocol/log/identity.ts`'s, signed by the
 * operator's root key (which outlives shards) and by the shard's log key.
 * {@link signLogIdentity} makes one; {@link openLogIdentity} checks one, in
 * the order of §15.8, with typed `TALLY_LOG_IDENTITY_*` refusals; and
 * {@link openLogIdentityChain} follows a pinned identity to its successors
 * (a rotation: same root key, each naming the one before). The checks are
 * the one rule of document-rule.ts, here with node's cryptography; the
 * grader's page runs the same rule with WebCrypto's.
 */
import { logIdentityText, TallyError, type LogIdentity } from '../protocol/index.js';
import { sha256 } from '../codec/sha256.js';
import type { EngineKey } from '../receipt/keys/engineKey.js';
import { signNote } from '../receipt/note/sign.js';
import { parseVerifierKey } from '../receipt/note/verifierKey.js';
import { parseWitnessPolicy } from '../witness/policy/parse.js';
import { openLogIdentityChainWith, openLogIdentityWith, readLogIdentityWith, type IdentityCrypto, type OpenedLogIdentity, type OpenLogIdentityResult } from './document-rule.js';

export { LOG_IDENTITY_CODES } from './document-rule.js';
export type { IdentityCrypto, IdentityShard, LogIdentityCode, OpenedLogIdentity, OpenLogIdentityResult } from './document-rule.js';

/** Node's cryptography for the one identity rule (document-rule.ts): node:crypto Ed25519, node's SHA-256. */
export const NODE_IDENTITY_CRYPTO: IdentityCrypto = { verifierKey: parseVerifierKey, policy: parseWitnessPolicy, digest: sha256 };

/** Options of {@link openLogIdentity}. */
export interface OpenLogIdentityOptions {
  /** POSIX seconds to check the validity window at (default: the system clock). */
  readonly now?: number;
}

const systemNow = (): number => Math.floor(Date.now() / 1000);

/**
 * Checks an identity note by the one rule {@link openLogIdentityWith}
 * (§15.8, in order: `TALLY_LOG_IDENTITY_INVALID`, `_UNSIGNED`, `_EXPIRED`),
 * with node's Ed25519 and the system clock. Never throws on input.
 *
 * @example
 * const r = openLogIdentity(readFileSync('log.identity', 'utf8'));
 * if (r.ok) r.shards[0].logKey; // the current shard's key
 */
export function openLogIdentity(note: string, options: OpenLogIdentityOptions = {}): OpenLogIdentityResult {
  return openLogIdentityWith(note, NODE_IDENTITY_CRYPTO, { now: options.now ?? systemNow() });
}

/**
 * Steps 1 and 2 of {@link openLogIdentity}, without the validity window: for
 * an operator who succeeds a shard as its window ends (`tally log identity
 * --succeeds`), not for a grader.
 */
export function readLogIdentity(note: string): OpenLogIdentityResult {
  return readLogIdentityWith(note, NODE_IDENTITY_CRYPTO);
}

/**
 * Follows a chain of identity notes, oldest (the pinned one) first, by the
 * one rule {@link openLogIdentityChainWith} (§15.9), with node's Ed25519 and
 * the system clock.
 *
 * @example
 * const r = openLogIdentityChain([pinnedText, successorText]);
 */
export function openLogIdentityChain(notes: readonly string[], options: OpenLogIdentityOptions = {}): OpenLogIdentityResult {
  return openLogIdentityChainWith(notes, NODE_IDENTITY_CRYPTO, { now: options.now ?? systemNow() });
}

/** What {@link signLogIdentity} takes: the document without `log_key`/`root_key` (they come from the keys). */
export type LogIdentityInput = Omit<LogIdentity, 'log_key' | 'root_key'>;

/**
 * Signs a shard's identity with the operator's root key and the shard's log
 * key (named as `origin`). Throws `TALLY_LOG_IDENTITY_INVALID` for a document
 * the protocol does not allow (the member is named) or a log key named other
 * than the origin.
 *
 * @example
 * const note = signLogIdentity({ origin: logKey.name, tiles: ['https://tally.example/desk/log/'], witness_policy: 'quorum none\n', rate: { requests: 12, window_seconds: 60 }, not_before: 0, previous: [] }, { root, log: logKey });
 */
export function signLogIdentity(input: LogIdentityInput, keys: { readonly root: EngineKey; readonly log: EngineKey }): string {
  const d: LogIdentity = { ...input, log_key: keys.log.verifierKey, root_key: keys.root.verifierKey };
  let text: string;
  try {
    text = logIdentityText(d);
  } catch (e) {
    throw new TallyError('TALLY_LOG_IDENTITY_INVALID', e instanceof Error ? e.message : String(e));
  }
  const note = signNote(text, [keys.root, keys.log]);
  const r = readLogIdentity(note);
  if (!r.ok) throw new TallyError(r.code, r.message);
  return note;
}

/**
 * The `previous` entries of a successor of `opened`, whose log ended at the
 * final checkpoint (`size`, `root` hex): that shard first, then every one it
 * named.
 */
export function successorPrevious(opened: OpenedLogIdentity, final: { readonly size: number; readonly root: string }): LogIdentity['previous'] {
  const d = opened.identity;
  return [{ identity: opened.id, origin: d.origin, log_key: d.log_key, size: final.size, root: final.root, witness_policy: d.witness_policy }, ...d.previous];
}

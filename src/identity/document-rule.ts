/**
 * The one rule of a log identity (docs/PROTOCOL.md §15.8) and of a chain of
 * them (§15.9), with the cryptography passed in: `tally verify
 * --log-identity` opens the note with node's Ed25519 and SHA-256
 * (document.ts), the grader's page with WebCrypto's Ed25519 and its own
 * SHA-256 (src/web/browser/log-identity.ts) — both run exactly these checks,
 * in this order, with these `TALLY_LOG_IDENTITY_*` codes. Browser-safe: no
 * `node:` module in its import graph.
 */
import { logIdentityId, parseLogIdentityText, type Digest, type LogIdentity } from '../protocol/index.js';
import { openPinnedNote } from '../receipt/note/open-pinned.js';
import type { ParsedVerifierKey, ParseVerifierKeyResult } from '../receipt/note/types.js';
import type { ParsePolicyResult } from '../witness/policy/parse-text.js';
import type { WitnessPolicy } from '../witness/policy/types.js';

/** Every code an identity is refused with, in the order the checks run. */
export const LOG_IDENTITY_CODES = [
  /** Not an identity note: its text is not the tag line and canonical JSON of the document's shape, a key is not a verifier key, a log key is not named as its origin, or a policy does not parse. */
  'TALLY_LOG_IDENTITY_INVALID',
  /** The note lacks a valid signature by its `root_key` or by its `log_key`. */
  'TALLY_LOG_IDENTITY_UNSIGNED',
  /** A successor is signed by another root key, or does not name the identity before it as its latest previous shard. */
  'TALLY_LOG_IDENTITY_CHAIN',
  /** The time is before `not_before` or at or after `not_after`. */
  'TALLY_LOG_IDENTITY_EXPIRED',
  /** A binding's log checkpoint is of a log the identity does not name, or beyond a previous shard's final checkpoint. */
  'TALLY_LOG_IDENTITY_WRONG_LOG',
] as const;
/** A code of {@link LOG_IDENTITY_CODES}. */
export type LogIdentityCode = (typeof LOG_IDENTITY_CODES)[number];

/** One shard a verified identity names: its key and policy, and (for a previous shard) its final checkpoint. */
export interface IdentityShard {
  readonly origin: string;
  readonly logKey: ParsedVerifierKey;
  readonly policy: WitnessPolicy;
  /** The policy's text as the document states it. */
  readonly policyText: string;
  /** A previous shard's final checkpoint (absent for the current shard). */
  readonly final?: { readonly size: number; readonly root: string };
}

/** A verified identity. */
export interface OpenedLogIdentity {
  readonly ok: true;
  readonly identity: LogIdentity;
  /** Its id (what a successor names it by). */
  readonly id: string;
  /** The note text that was signed. */
  readonly text: string;
  readonly rootKey: ParsedVerifierKey;
  /** The current shard first, then every previous one, newest first. */
  readonly shards: readonly IdentityShard[];
}

/** Outcome of {@link openLogIdentityWith}. */
export type OpenLogIdentityResult = OpenedLogIdentity | { readonly ok: false; readonly code: LogIdentityCode; readonly message: string };

/**
 * The cryptography an identity is checked with. Node: `parseVerifierKey`,
 * `parseWitnessPolicy` and node's SHA-256; the page: `decodeVerifierKey` and
 * `parseWitnessPolicyWith` bound to WebCrypto's Ed25519, and its SHA-256.
 */
export interface IdentityCrypto {
  /** A verifier key string as an Ed25519 verifier, by the one key rule (`decodeVerifierKey`). */
  readonly verifierKey: (vkey: string) => ParseVerifierKeyResult;
  /** A witness policy text, by the one policy parser (`parseWitnessPolicyWith`). */
  readonly policy: (text: string) => ParsePolicyResult;
  /** SHA-256: the identity's id (`logIdentityId`). */
  readonly digest: Digest;
}

/** Options of {@link openLogIdentityWith}. */
export interface OpenLogIdentityWithOptions {
  /** POSIX seconds to check the validity window at: the caller's clock (the system's for the CLI, the browser's for the page). */
  readonly now: number;
}

function refuse(code: LogIdentityCode, message: string): OpenLogIdentityResult {
  return { ok: false, code, message };
}

function shardOf(origin: string, vkey: string, policyText: string, where: string, crypto: IdentityCrypto): IdentityShard | string {
  const k = crypto.verifierKey(vkey);
  if (!k.ok) return `${where}: log_key is not an Ed25519 verifier key: ${k.message}`;
  if (k.verifier.name !== origin) return `${where}: the log key is named ${JSON.stringify(k.verifier.name)}, not the origin ${JSON.stringify(origin)}`;
  const p = crypto.policy(policyText);
  if (!p.ok) return `${where}: witness_policy: ${p.message}`;
  return { origin, logKey: k.verifier, policy: p.policy, policyText };
}

/**
 * Checks an identity note, in order (§15.8): (1) its text is an identity in
 * its one encoding, its keys are verifier keys, each log key is named as its
 * origin and each policy parses (`TALLY_LOG_IDENTITY_INVALID`); (2) it
 * carries a valid signature by `root_key` and one by `log_key`
 * (`TALLY_LOG_IDENTITY_UNSIGNED`); (3) `now` is in `[not_before, not_after)`
 * (`TALLY_LOG_IDENTITY_EXPIRED`). Never throws on input.
 *
 * @example
 * const r = openLogIdentityWith(note, { verifierKey: parseVerifierKey, policy: parseWitnessPolicy, digest: sha256 }, { now: Math.floor(Date.now() / 1000) });
 */
export function openLogIdentityWith(note: string, crypto: IdentityCrypto, options: OpenLogIdentityWithOptions): OpenLogIdentityResult {
  const r = readLogIdentityWith(note, crypto);
  if (!r.ok) return r;
  return inWindow(r, options.now);
}

function inWindow(r: OpenedLogIdentity, now: number): OpenLogIdentityResult {
  const d = r.identity;
  if (now < d.not_before) return refuse('TALLY_LOG_IDENTITY_EXPIRED', `the identity of ${d.origin} is valid from ${d.not_before}, and it is ${now}`);
  if (d.not_after !== undefined && now >= d.not_after) return refuse('TALLY_LOG_IDENTITY_EXPIRED', `the identity of ${d.origin} was valid until ${d.not_after}, and it is ${now}: get its successor`);
  return r;
}

/**
 * Steps 1 and 2 of {@link openLogIdentityWith}, without the validity window:
 * for an operator who succeeds a shard as its window ends (`tally log
 * identity --succeeds`), not for a grader.
 */
export function readLogIdentityWith(note: string, crypto: IdentityCrypto): OpenLogIdentityResult {
  if (typeof note !== 'string') return refuse('TALLY_LOG_IDENTITY_INVALID', 'an identity is a signed note (text)');
  const cut = note.indexOf('\n\n');
  const text = cut < 0 ? note : note.slice(0, cut + 1);
  const p = parseLogIdentityText(text);
  if (!p.ok) return refuse('TALLY_LOG_IDENTITY_INVALID', `${p.code}: ${p.message}`);
  const d = p.identity;
  const root = crypto.verifierKey(d.root_key);
  if (!root.ok) return refuse('TALLY_LOG_IDENTITY_INVALID', `root_key is not an Ed25519 verifier key: ${root.message}`);
  const shards: IdentityShard[] = [];
  for (const [i, s] of [d, ...d.previous].entries()) {
    const shard = shardOf(s.origin, s.log_key, s.witness_policy, i === 0 ? 'the document' : `previous[${i - 1}]`, crypto);
    if (typeof shard === 'string') return refuse('TALLY_LOG_IDENTITY_INVALID', shard);
    shards.push(i === 0 ? shard : { ...shard, final: { size: d.previous[i - 1]!.size, root: d.previous[i - 1]!.root } });
  }
  const current = shards[0]!.logKey;
  if (current.name === root.verifier.name && current.keyId === root.verifier.keyId) return refuse('TALLY_LOG_IDENTITY_INVALID', 'root_key and log_key must be two keys');
  const opened = openPinnedNote(note, [root.verifier, current]);
  if (!opened.ok) return refuse(opened.code === 'no-pinned-signature' || opened.code === 'bad-signature' ? 'TALLY_LOG_IDENTITY_UNSIGNED' : 'TALLY_LOG_IDENTITY_INVALID', `the identity note does not open with its keys (${opened.code}): ${opened.message}`);
  if (opened.text !== text) return refuse('TALLY_LOG_IDENTITY_INVALID', 'the identity note has a blank line in its text');
  const by = (k: ParsedVerifierKey): boolean => opened.verified.some((s) => s.name === k.name && s.keyId === k.keyId);
  if (!by(root.verifier)) return refuse('TALLY_LOG_IDENTITY_UNSIGNED', `the identity is not signed by its root key ${root.verifier.name}`);
  if (!by(current)) return refuse('TALLY_LOG_IDENTITY_UNSIGNED', `the identity is not signed by its log key ${current.name}`);
  return { ok: true, identity: d, id: logIdentityId(crypto.digest, text), text, rootKey: root.verifier, shards };
}

/**
 * Follows a chain of identity notes, oldest (the pinned one) first: each
 * must open (steps 1–2), be signed by the same root key as the first, and
 * name the one before it as its newest previous shard (`previous[0]`: its
 * id, origin and log key) — else `TALLY_LOG_IDENTITY_CHAIN`. Only the newest
 * is held to its validity window; it is the answer (it names every shard).
 *
 * @example
 * const r = openLogIdentityChainWith([pinnedText, successorText], crypto, { now });
 */
export function openLogIdentityChainWith(notes: readonly string[], crypto: IdentityCrypto, options: OpenLogIdentityWithOptions): OpenLogIdentityResult {
  if (notes.length === 0) return refuse('TALLY_LOG_IDENTITY_INVALID', 'no identity given');
  let prev: OpenedLogIdentity | undefined;
  for (const [i, note] of notes.entries()) {
    const r = readLogIdentityWith(note, crypto);
    if (!r.ok) return notes.length === 1 ? r : { ...r, message: `identity ${i + 1} of ${notes.length}: ${r.message}` };
    if (prev !== undefined) {
      if (r.identity.root_key !== prev.identity.root_key) return refuse('TALLY_LOG_IDENTITY_CHAIN', `identity ${i + 1} is signed by root key ${r.rootKey.name}, not the pinned ${prev.rootKey.name}`);
      const named = r.identity.previous[0];
      if (named === undefined || named.identity !== prev.id || named.origin !== prev.identity.origin || named.log_key !== prev.identity.log_key) {
        return refuse('TALLY_LOG_IDENTITY_CHAIN', `identity ${i + 1} (${r.identity.origin}) does not name identity ${i} (${prev.identity.origin}, id ${prev.id}) as the shard it succeeds`);
      }
    }
    prev = r;
  }
  return inWindow(prev!, options.now);
}

/**
 * The engine log's identity document (docs/PROTOCOL.md §15.8): a C2SP signed
 * note whose text is `src/protocol/log/identity.ts`'s, signed by the
 * operator's root key (which outlives shards) and by the shard's log key.
 * {@link signLogIdentity} makes one; {@link openLogIdentity} checks one, in
 * the order of §15.8, with typed `TALLY_LOG_IDENTITY_*` refusals; and
 * {@link openLogIdentityChain} follows a pinned identity to its successors
 * (a rotation: same root key, each naming the one before).
 */
import { logIdentityId, logIdentityText, parseLogIdentityText, TallyError, type LogIdentity } from '../protocol/index.js';
import { sha256 } from '../codec/sha256.js';
import type { EngineKey } from '../receipt/keys/engineKey.js';
import { openNote } from '../receipt/note/open.js';
import { signNote } from '../receipt/note/sign.js';
import { parseVerifierKey } from '../receipt/note/verifierKey.js';
import type { ParsedVerifierKey } from '../receipt/note/types.js';
import { parseWitnessPolicy } from '../witness/policy/parse.js';
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

/** Outcome of {@link openLogIdentity}. */
export type OpenLogIdentityResult = OpenedLogIdentity | { readonly ok: false; readonly code: LogIdentityCode; readonly message: string };

function refuse(code: LogIdentityCode, message: string): OpenLogIdentityResult {
  return { ok: false, code, message };
}

/** Options of {@link openLogIdentity}. */
export interface OpenLogIdentityOptions {
  /** POSIX seconds to check the validity window at (default: the system clock). */
  readonly now?: number;
}

function shardOf(origin: string, vkey: string, policyText: string, where: string): IdentityShard | string {
  const k = parseVerifierKey(vkey);
  if (!k.ok) return `${where}: log_key is not an Ed25519 verifier key: ${k.message}`;
  if (k.verifier.name !== origin) return `${where}: the log key is named ${JSON.stringify(k.verifier.name)}, not the origin ${JSON.stringify(origin)}`;
  const p = parseWitnessPolicy(policyText);
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
 * const r = openLogIdentity(readFileSync('log.identity', 'utf8'));
 * if (r.ok) r.shards[0].logKey; // the current shard's key
 */
export function openLogIdentity(note: string, options: OpenLogIdentityOptions = {}): OpenLogIdentityResult {
  const r = readLogIdentity(note);
  if (!r.ok) return r;
  return inWindow(r, options.now ?? Math.floor(Date.now() / 1000));
}

function inWindow(r: OpenedLogIdentity, now: number): OpenLogIdentityResult {
  const d = r.identity;
  if (now < d.not_before) return refuse('TALLY_LOG_IDENTITY_EXPIRED', `the identity of ${d.origin} is valid from ${d.not_before}, and it is ${now}`);
  if (d.not_after !== undefined && now >= d.not_after) return refuse('TALLY_LOG_IDENTITY_EXPIRED', `the identity of ${d.origin} was valid until ${d.not_after}, and it is ${now}: get its successor`);
  return r;
}

/**
 * Steps 1 and 2 of {@link openLogIdentity}, without the validity window: for
 * an operator who succeeds a shard as its window ends (`tally log identity
 * --succeeds`), not for a grader.
 */
export function readLogIdentity(note: string): OpenLogIdentityResult {
  if (typeof note !== 'string') return refuse('TALLY_LOG_IDENTITY_INVALID', 'an identity is a signed note (text)');
  const cut = note.indexOf('\n\n');
  const text = cut < 0 ? note : note.slice(0, cut + 1);
  const p = parseLogIdentityText(text);
  if (!p.ok) return refuse('TALLY_LOG_IDENTITY_INVALID', `${p.code}: ${p.message}`);
  const d = p.identity;
  const root = parseVerifierKey(d.root_key);
  if (!root.ok) return refuse('TALLY_LOG_IDENTITY_INVALID', `root_key is not an Ed25519 verifier key: ${root.message}`);
  const shards: IdentityShard[] = [];
  for (const [i, s] of [d, ...d.previous].entries()) {
    const shard = shardOf(s.origin, s.log_key, s.witness_policy, i === 0 ? 'the document' : `previous[${i - 1}]`);
    if (typeof shard === 'string') return refuse('TALLY_LOG_IDENTITY_INVALID', shard);
    shards.push(i === 0 ? shard : { ...shard, final: { size: d.previous[i - 1]!.size, root: d.previous[i - 1]!.root } });
  }
  const current = shards[0]!.logKey;
  if (current.name === root.verifier.name && current.keyId === root.verifier.keyId) return refuse('TALLY_LOG_IDENTITY_INVALID', 'root_key and log_key must be two keys');
  const opened = openNote(note, [root.verifier, current]);
  if (!opened.ok) return refuse(opened.code === 'no-pinned-signature' || opened.code === 'bad-signature' ? 'TALLY_LOG_IDENTITY_UNSIGNED' : 'TALLY_LOG_IDENTITY_INVALID', `the identity note does not open with its keys (${opened.code}): ${opened.message}`);
  if (opened.text !== text) return refuse('TALLY_LOG_IDENTITY_INVALID', 'the identity note has a blank line in its text');
  const by = (k: ParsedVerifierKey): boolean => opened.verified.some((s) => s.name === k.name && s.keyId === k.keyId);
  if (!by(root.verifier)) return refuse('TALLY_LOG_IDENTITY_UNSIGNED', `the identity is not signed by its root key ${root.verifier.name}`);
  if (!by(current)) return refuse('TALLY_LOG_IDENTITY_UNSIGNED', `the identity is not signed by its log key ${current.name}`);
  return { ok: true, identity: d, id: logIdentityId(sha256, text), text, rootKey: root.verifier, shards };
}

/**
 * Follows a chain of identity notes, oldest (the pinned one) first: each
 * must open (steps 1–2), be signed by the same root key as the first, and
 * name the one before it as its newest previous shard (`previous[0]`: its
 * id, origin and log key) — else `TALLY_LOG_IDENTITY_CHAIN`. Only the newest
 * is held to its validity window; it is the answer (it names every shard).
 *
 * @example
 * const r = openLogIdentityChain([pinnedText, successorText]);
 */
export function openLogIdentityChain(notes: readonly string[], options: OpenLogIdentityOptions = {}): OpenLogIdentityResult {
  if (notes.length === 0) return refuse('TALLY_LOG_IDENTITY_INVALID', 'no identity given');
  let prev: OpenedLogIdentity | undefined;
  for (const [i, note] of notes.entries()) {
    const r = readLogIdentity(note);
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
  return inWindow(prev!, options.now ?? Math.floor(Date.now() / 1000));
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

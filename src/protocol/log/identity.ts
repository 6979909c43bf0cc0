/**
 * The engine log's identity document, byte for byte (docs/PROTOCOL.md §15.8):
 * the text of a C2SP signed note,
 *
 *     "tally/v1/log-identity" "\n" canonicalJson(object) "\n"
 *
 * whose object states one shard of the log — its origin, its verifier key,
 * where its tiles are served, the witness policy graders apply to it, the
 * add-checkpoint rate it declares, its validity — and every earlier shard it
 * succeeds (`previous`, newest first), each with its final checkpoint. This
 * module only writes and reads those bytes; the keys, the policy text and the
 * signatures are checked in `src/identity` (they need crypto). Pure.
 */
import { DOMAIN_TAGS, taggedHash, type Digest } from '../bytes.js';
import { canonicalJson, utf8, type CanonicalValue } from '../canonical.js';
import { isDigestHex, toHex } from '../hex.js';
import { parseStrictJson } from '../strict-json.js';

/** An earlier shard, as its successor records it. */
export interface PreviousShard {
  /** {@link logIdentityId} of that shard's identity text. */
  readonly identity: string;
  readonly origin: string;
  /** The shard's log verifier key (its name is `origin`). */
  readonly log_key: string;
  /** Its final checkpoint: no leaf after `size`, and its root there. */
  readonly size: number;
  readonly root: string;
  /** The witness policy that applied to it (Sigsum policy text). */
  readonly witness_policy: string;
}

/** One shard of the engine log, as a grader pins it. */
export interface LogIdentity {
  readonly origin: string;
  /** The log's verifier key (C2SP note vkey, name = `origin`). */
  readonly log_key: string;
  /** The operator's root verifier key: it signs every shard's identity, so rotation is verifiable. */
  readonly root_key: string;
  /** tlog-tiles URL prefixes where the log is served (may be empty: files handed over). */
  readonly tiles: readonly string[];
  /** The witness policy graders apply to the log's checkpoints (Sigsum policy text, what `--policy` reads). */
  readonly witness_policy: string;
  /** The declared add-checkpoint budget per witness: at most `requests` in any `window_seconds`. */
  readonly rate: { readonly requests: number; readonly window_seconds: number };
  /** POSIX seconds from which the document is valid. */
  readonly not_before: number;
  /** POSIX seconds from which it is not (absent: until succeeded). */
  readonly not_after?: number;
  /** Every earlier shard, newest first. */
  readonly previous: readonly PreviousShard[];
}

/** Why {@link parseLogIdentityText} refused a text. */
export type LogIdentityTextCode = 'identity-tag' | 'identity-json' | 'identity-shape' | 'identity-not-canonical';
/** Outcome of {@link parseLogIdentityText}. */
export type ParseLogIdentityResult = { readonly ok: true; readonly identity: LogIdentity } | { readonly ok: false; readonly code: LogIdentityTextCode; readonly message: string };

const MAX = Number.MAX_SAFE_INTEGER;
// eslint-disable-next-line no-control-regex
const LINE = /^[^\u0000-\u0020\u007f]+$/;
const isLine = (v: unknown): v is string => typeof v === 'string' && LINE.test(v);
const isCount = (v: unknown, min: number): v is number => Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= MAX;

function objectOf(d: LogIdentity): CanonicalValue {
  return {
    log_key: d.log_key,
    ...(d.not_after === undefined ? {} : { not_after: d.not_after }),
    not_before: d.not_before,
    origin: d.origin,
    previous: d.previous.map((p) => ({ identity: p.identity, log_key: p.log_key, origin: p.origin, root: p.root, size: p.size, witness_policy: p.witness_policy })),
    rate: { requests: d.rate.requests, window_seconds: d.rate.window_seconds },
    root_key: d.root_key,
    tiles: [...d.tiles],
    witness_policy: d.witness_policy,
  };
}

const keysOf = (v: object): string => Object.keys(v).sort().join(',');
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The first problem with a document's members, or `undefined`. */
function shapeProblem(d: Record<string, unknown>): string | undefined {
  const want = d['not_after'] === undefined ? 'log_key,not_before,origin,previous,rate,root_key,tiles,witness_policy' : 'log_key,not_after,not_before,origin,previous,rate,root_key,tiles,witness_policy';
  if (keysOf(d) !== want) return `the document has exactly the members ${want}`;
  if (!isLine(d['origin'])) return 'origin must be a non-empty line without spaces or control characters';
  if (!isLine(d['log_key']) || !isLine(d['root_key'])) return 'log_key and root_key must be verifier keys (one word)';
  if (!Array.isArray(d['tiles']) || !d['tiles'].every(isLine)) return 'tiles must be an array of URLs (one word each)';
  if (typeof d['witness_policy'] !== 'string') return 'witness_policy must be a string (Sigsum policy text)';
  const rate = d['rate'];
  if (!isObject(rate) || keysOf(rate) !== 'requests,window_seconds' || !isCount(rate['requests'], 1) || !isCount(rate['window_seconds'], 1)) return 'rate must be {"requests": n >= 1, "window_seconds": s >= 1}';
  if (!isCount(d['not_before'], 0)) return 'not_before must be an integer 0 to 2^53 - 1';
  if (d['not_after'] !== undefined && (!isCount(d['not_after'], 0) || (d['not_after'] as number) <= (d['not_before'] as number))) return 'not_after must be an integer above not_before';
  const prev = d['previous'];
  if (!Array.isArray(prev)) return 'previous must be an array';
  const origins = new Set([d['origin']]);
  for (const [i, p] of prev.entries()) {
    if (!isObject(p) || keysOf(p) !== 'identity,log_key,origin,root,size,witness_policy') return `previous[${i}] has exactly the members identity,log_key,origin,root,size,witness_policy`;
    if (!isDigestHex(p['identity']) || !isDigestHex(p['root'])) return `previous[${i}]: identity and root must be 64 lowercase hex`;
    if (!isLine(p['origin']) || !isLine(p['log_key']) || typeof p['witness_policy'] !== 'string') return `previous[${i}]: origin and log_key must be one word, witness_policy a string`;
    if (!isCount(p['size'], 1)) return `previous[${i}]: size must be an integer 1 to 2^53 - 1`;
    if (origins.has(p['origin'])) return `previous[${i}]: origin ${JSON.stringify(p['origin'])} is named twice`;
    origins.add(p['origin']);
  }
  return undefined;
}

/**
 * The note text of `d` (see the module comment). Throws `RangeError` naming
 * the member when it is not a document the protocol allows.
 *
 * @example
 * const text = logIdentityText({ origin, log_key, root_key, tiles: [url], witness_policy: 'quorum none\n', rate: { requests: 12, window_seconds: 60 }, not_before: 0, previous: [] });
 */
export function logIdentityText(d: LogIdentity): string {
  const obj = objectOf(d) as Record<string, unknown>;
  const problem = shapeProblem(obj);
  if (problem) throw new RangeError(`log identity: ${problem}`);
  return `${DOMAIN_TAGS.logIdentity}\n${canonicalJson(obj as CanonicalValue)}\n`;
}

/**
 * Reads a note text in the one encoding the protocol allows: the tag line,
 * one line of canonical JSON with exactly the members above, a newline.
 * Anything else is refused, never repaired.
 */
export function parseLogIdentityText(text: string): ParseLogIdentityResult {
  const head = `${DOMAIN_TAGS.logIdentity}\n`;
  if (typeof text !== 'string' || !text.startsWith(head)) return { ok: false, code: 'identity-tag', message: `an identity's text starts with the line "${DOMAIN_TAGS.logIdentity}"` };
  const body = text.slice(head.length);
  if (!body.endsWith('\n') || body.indexOf('\n') !== body.length - 1) return { ok: false, code: 'identity-shape', message: "an identity's text is the tag line and one line of JSON" };
  const parsed = parseStrictJson(utf8(body.slice(0, -1)));
  if (!parsed.ok) return { ok: false, code: 'identity-json', message: `the identity's JSON is invalid (${parsed.code})` };
  const v = parsed.value;
  if (!isObject(v)) return { ok: false, code: 'identity-shape', message: 'an identity is a JSON object' };
  const problem = shapeProblem(v);
  if (problem) return { ok: false, code: 'identity-shape', message: problem };
  const d = v as unknown as LogIdentity;
  if (canonicalJson(objectOf(d)) !== body.slice(0, -1)) return { ok: false, code: 'identity-not-canonical', message: 'the identity is not its canonical encoding' };
  return { ok: true, identity: d };
}

/** The id a successor names a shard's identity by: `hex(H(utf8("tally/v1/log-identity") ‖ 0x00 ‖ utf8(text)))`. */
export function logIdentityId(digest: Digest, text: string): string {
  return toHex(taggedHash(digest, DOMAIN_TAGS.logIdentity, utf8(text)));
}

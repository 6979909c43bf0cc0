/**
 * The engine log's leaves, byte for byte (docs/PROTOCOL.md §15.1). A leaf is
 *
 *     utf8("tally/v1/engine-log-leaf") ‖ 0x00 ‖ canonicalJson(object)
 *
 * and its RFC 6962 leaf hash is `D(0x00 ‖ leaf)`. The object is one of
 *
 * - `{"kind":"open","session":<64 hex>,"spec":<64 hex>}`: the engine opened
 *   a session (its id, and the tagged hash of its spec, {@link specHash});
 * - `{"kind":"checkpoint","origin":…,"root":<64 hex>,"seal":<bool>,"size":<n>}`:
 *   the engine key signed a session checkpoint; `seal` is true when the
 *   checkpoint covers the session's finalize entry (its last).
 *
 * A leaf never starts with `{` (a session entry always does), so no leaf is
 * also a session entry. Pure: the digest is passed in.
 */
import { DOMAIN_TAGS, taggedHash, type Digest } from '../bytes.js';
import { canonicalBytes, canonicalJson, utf8, type CanonicalValue } from '../canonical.js';
import { isDigestHex, toHex } from '../hex.js';
import { parseStrictJson } from '../strict-json.js';

/** The engine opened a session. */
export interface OpenLeaf {
  readonly kind: 'open';
  /** The session id (64 lowercase hex). */
  readonly session: string;
  /** {@link specHash} of the session's spec (64 lowercase hex). */
  readonly spec: string;
}

/** The engine key signed a session checkpoint. */
export interface CheckpointLeaf {
  readonly kind: 'checkpoint';
  /** The checkpoint's origin line, `<engine name>/<session id>`. */
  readonly origin: string;
  readonly size: number;
  /** The checkpoint's root, 64 lowercase hex. */
  readonly root: string;
  /** The checkpoint covers the session's finalize entry. */
  readonly seal: boolean;
}

/** One leaf of the engine log. */
export type EngineLogLeaf = OpenLeaf | CheckpointLeaf;

/** Why {@link parseEngineLogLeaf} refused bytes. */
export const LEAF_REFUSAL_CODES = ['leaf-tag', 'leaf-json', 'leaf-not-canonical', 'leaf-shape'] as const;
/** A code of {@link LEAF_REFUSAL_CODES}. */
export type LeafRefusalCode = (typeof LEAF_REFUSAL_CODES)[number];
/** Outcome of {@link parseEngineLogLeaf}. */
export type ParseLeafResult = { readonly ok: true; readonly leaf: EngineLogLeaf } | { readonly ok: false; readonly code: LeafRefusalCode; readonly message: string };

/** The largest size a checkpoint leaf may carry (2^53 − 1, as §11.3). */
const MAX_SIZE = Number.MAX_SAFE_INTEGER;

let prefix: Uint8Array | undefined;
/** `utf8(tag) ‖ 0x00`. */
function leafPrefix(): Uint8Array {
  if (!prefix) {
    const t = utf8(DOMAIN_TAGS.engineLogLeaf);
    prefix = new Uint8Array(t.length + 1);
    prefix.set(t, 0);
  }
  return prefix;
}

/** The object of a leaf, members as the protocol names them. */
function objectOf(leaf: EngineLogLeaf): CanonicalValue {
  return leaf.kind === 'open'
    ? { kind: 'open', session: leaf.session, spec: leaf.spec }
    : { kind: 'checkpoint', origin: leaf.origin, root: leaf.root, seal: leaf.seal, size: leaf.size };
}

/** A problem with a leaf's members, or `undefined`. */
function shapeProblem(leaf: EngineLogLeaf): string | undefined {
  if (leaf.kind === 'open') {
    if (!isDigestHex(leaf.session)) return 'session must be 64 lowercase hex';
    if (!isDigestHex(leaf.spec)) return 'spec must be 64 lowercase hex';
    return undefined;
  }
  if (leaf.kind !== 'checkpoint') return 'kind must be "open" or "checkpoint"';
  if (typeof leaf.origin !== 'string' || leaf.origin.length === 0 || /[\u0000-\u0020\u007f]/.test(leaf.origin)) return 'origin must be a non-empty line without spaces or control characters';
  if (!Number.isSafeInteger(leaf.size) || leaf.size < 1 || leaf.size > MAX_SIZE) return 'size must be an integer 1 to 2^53 - 1';
  if (!isDigestHex(leaf.root)) return 'root must be 64 lowercase hex';
  if (typeof leaf.seal !== 'boolean') return 'seal must be a boolean';
  return undefined;
}

/**
 * The bytes of `leaf` (see the module comment). Throws `RangeError` naming
 * the member when the leaf is not one the protocol allows.
 *
 * @example
 * engineLogLeafBytes({ kind: 'open', session: sid, spec: specHashHex })
 */
export function engineLogLeafBytes(leaf: EngineLogLeaf): Uint8Array {
  const problem = shapeProblem(leaf);
  if (problem) throw new RangeError(`engine log leaf: ${problem}`);
  const p = leafPrefix();
  const body = canonicalBytes(objectOf(leaf));
  const out = new Uint8Array(p.length + body.length);
  out.set(p, 0);
  out.set(body, p.length);
  return out;
}

/**
 * Reads leaf bytes in the one encoding the protocol allows: the tag and NUL,
 * then the canonical JSON of an object with exactly the members of its kind.
 * Anything else is refused (never repaired).
 */
export function parseEngineLogLeaf(bytes: Uint8Array): ParseLeafResult {
  const p = leafPrefix();
  if (!(bytes instanceof Uint8Array) || bytes.length < p.length || p.some((b, i) => bytes[i] !== b)) return { ok: false, code: 'leaf-tag', message: `a leaf starts with "${DOMAIN_TAGS.engineLogLeaf}" and NUL` };
  const body = bytes.subarray(p.length);
  const parsed = parseStrictJson(body);
  if (!parsed.ok) return { ok: false, code: 'leaf-json', message: `the leaf's JSON is invalid (${parsed.code})` };
  const v = parsed.value as Record<string, unknown> | null;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { ok: false, code: 'leaf-shape', message: 'a leaf is a JSON object' };
  const keys = Object.keys(v).sort().join(',');
  const want = v.kind === 'open' ? 'kind,session,spec' : 'kind,origin,root,seal,size';
  if (keys !== want) return { ok: false, code: 'leaf-shape', message: `a ${String(v.kind)} leaf has exactly the members ${want}` };
  const leaf: EngineLogLeaf =
    v.kind === 'open'
      ? { kind: 'open', session: v.session as string, spec: v.spec as string }
      : { kind: 'checkpoint', origin: v.origin as string, size: v.size as number, root: v.root as string, seal: v.seal as boolean };
  const problem = shapeProblem(leaf);
  if (problem) return { ok: false, code: 'leaf-shape', message: problem };
  if (canonicalJson(objectOf(leaf)) !== new TextDecoder().decode(body)) return { ok: false, code: 'leaf-not-canonical', message: 'the leaf is not its canonical encoding' };
  return { ok: true, leaf };
}

/** The spec hash an open leaf names: `hex(D(utf8("tally/v1/spec") ‖ 0x00 ‖ canonicalJson(spec)))`. */
export function specHash(digest: Digest, spec: CanonicalValue): string {
  return toHex(taggedHash(digest, DOMAIN_TAGS.spec, canonicalBytes(spec)));
}

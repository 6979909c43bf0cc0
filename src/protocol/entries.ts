/**
 * The four entry kinds of a transcript and their strict structural parser.
 * An entry's bytes are its canonical JSON; the parser is used by the engine on
 * input, by stores on load and by the offline verifier.
 */
import type { CanonicalObject, CanonicalValue } from './canonical.js';
import { isDigestHex } from './hex.js';
import { LIMITS } from './limits.js';
import { FAILURE_CLASSES, OPEN_ORDINAL, isMember, type FailureClass } from './vocabulary.js';
import { PROTOCOL_VERSION } from './bytes.js';

/** Lowercase 64-hex SHA-256 digest. */
export type Hex32 = string;

/**
 * The pure description of a session, sealed in genesis. `name` is required;
 * other members are extensions validated by the layers that own them (for
 * example `agents` and `intent` by the intent layer). Two opens of the same
 * spec are the same session, so put what makes a day unique (a date, a run
 * id) into the spec.
 */
export interface SessionSpec extends CanonicalObject {
  readonly name: string;
}

/** First entry; its entry hash is the session id. */
export interface GenesisEntry {
  readonly kind: 'genesis';
  readonly protocol: typeof PROTOCOL_VERSION;
  readonly spec: SessionSpec;
}

/** A frame delivered by the runtime: OPEN at ordinal -1, then wakes 0, 1, 2, … */
export interface FrameEntry {
  readonly kind: 'frame';
  readonly session: Hex32;
  readonly ordinal: number;
  readonly parent: Hex32;
  /** Frame time in epoch milliseconds; never decreases along a session. */
  readonly time: number;
  readonly data?: CanonicalValue;
  readonly frameRoot: Hex32;
}

/** An authored body: the exact bytes (standard base64) and their authored hash. */
export interface AuthoredBody {
  readonly kind: 'authored';
  readonly bytes: string;
  readonly hash: Hex32;
}
/** A stand-down recorded when the agent failed to answer. */
export interface StandDownBody {
  readonly kind: 'stand-down';
  readonly failureClass: FailureClass;
}
/** What a turn carries. */
export type TurnBody = AuthoredBody | StandDownBody;

/** The one answer to a frame, bound to (session, ordinal, parent, frameRoot). */
export interface TurnEntry {
  readonly kind: 'turn';
  readonly session: Hex32;
  readonly ordinal: number;
  readonly parent: Hex32;
  readonly frameRoot: Hex32;
  readonly body: TurnBody;
  /** The engine's ruling on the body (for example an intent validation), if a rule applies. */
  readonly ruling?: CanonicalObject;
}

/** The seal: commits to the first `size` entries by their RFC 6962 `root`. */
export interface FinalizeEntry {
  readonly kind: 'finalize';
  readonly session: Hex32;
  readonly parent: Hex32;
  readonly size: number;
  readonly root: Hex32;
  readonly artifacts?: CanonicalObject;
}

/** Any transcript entry. */
export type Entry = GenesisEntry | FrameEntry | TurnEntry | FinalizeEntry;

/** Result of {@link parseEntry}. */
export type ParseEntryResult = { readonly ok: true; readonly entry: Entry } | { readonly ok: false; readonly reason: string };

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const p: unknown = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

function keysExactly(o: Record<string, unknown>, required: readonly string[], optional: readonly string[] = []): string | undefined {
  for (const k of required) if (!(k in o)) return `missing "${k}"`;
  for (const k of Object.keys(o)) if (!required.includes(k) && !optional.includes(k)) return `unknown key "${k}"`;
  return undefined;
}

/** True for an ordinal a frame or turn may carry: -1 or 0…LIMITS.maxOrdinal. */
export function isOrdinal(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= OPEN_ORDINAL && n <= LIMITS.maxOrdinal;
}

/** True for a frame time: a non-negative safe integer of epoch milliseconds. */
export function isFrameTime(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/** Validates the core of a session spec (the `name`); extensions are checked by their layers. */
export function checkSpec(spec: unknown): string | undefined {
  if (!isPlainObject(spec)) return 'spec must be an object';
  const name = spec['name'];
  if (typeof name !== 'string' || name.trim().length === 0) return 'spec.name must be a non-empty string';
  if (name.length > LIMITS.nameLength) return `spec.name is longer than ${LIMITS.nameLength}`;
  return undefined;
}

/**
 * Strict structural check of a decoded entry: exact key sets, closed
 * vocabularies, digests as 64 lowercase hex. Hash VALUES are not checked here
 * (that needs a digest: see the chain verifier).
 */
export function parseEntry(v: unknown): ParseEntryResult {
  const fail = (reason: string): ParseEntryResult => ({ ok: false, reason });
  if (!isPlainObject(v)) return fail('entry is not an object');
  switch (v['kind']) {
    case 'genesis': {
      const k = keysExactly(v, ['kind', 'protocol', 'spec']);
      if (k) return fail(`genesis: ${k}`);
      if (v['protocol'] !== PROTOCOL_VERSION) return fail(`genesis: protocol must be "${PROTOCOL_VERSION}"`);
      const s = checkSpec(v['spec']);
      if (s) return fail(`genesis: ${s}`);
      return { ok: true, entry: v as unknown as GenesisEntry };
    }
    case 'frame': {
      const k = keysExactly(v, ['kind', 'session', 'ordinal', 'parent', 'time', 'frameRoot'], ['data']);
      if (k) return fail(`frame: ${k}`);
      if (!isDigestHex(v['session']) || !isDigestHex(v['parent']) || !isDigestHex(v['frameRoot'])) return fail('frame: digest fields must be 64 lowercase hex');
      if (!isOrdinal(v['ordinal'])) return fail('frame: ordinal must be an integer from -1');
      if (!isFrameTime(v['time'])) return fail('frame: time must be a non-negative safe integer (epoch ms)');
      return { ok: true, entry: v as unknown as FrameEntry };
    }
    case 'turn': {
      const k = keysExactly(v, ['kind', 'session', 'ordinal', 'parent', 'frameRoot', 'body'], ['ruling']);
      if (k) return fail(`turn: ${k}`);
      if (!isDigestHex(v['session']) || !isDigestHex(v['parent']) || !isDigestHex(v['frameRoot'])) return fail('turn: digest fields must be 64 lowercase hex');
      if (!isOrdinal(v['ordinal'])) return fail('turn: ordinal must be an integer from -1');
      const b = checkBody(v['body']);
      if (b) return fail(`turn: ${b}`);
      if ('ruling' in v && !isPlainObject(v['ruling'])) return fail('turn: ruling must be an object');
      return { ok: true, entry: v as unknown as TurnEntry };
    }
    case 'finalize': {
      const k = keysExactly(v, ['kind', 'session', 'parent', 'size', 'root'], ['artifacts']);
      if (k) return fail(`finalize: ${k}`);
      if (!isDigestHex(v['session']) || !isDigestHex(v['parent']) || !isDigestHex(v['root'])) return fail('finalize: digest fields must be 64 lowercase hex');
      const size = v['size'];
      if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 1) return fail('finalize: size must be a positive integer');
      if ('artifacts' in v && !isPlainObject(v['artifacts'])) return fail('finalize: artifacts must be an object');
      return { ok: true, entry: v as unknown as FinalizeEntry };
    }
    default:
      return fail('unknown entry kind');
  }
}

/** Checks a turn body's shape; returns a reason or `undefined`. */
export function checkBody(body: unknown): string | undefined {
  if (!isPlainObject(body)) return 'body must be an object';
  if (body['kind'] === 'authored') {
    const k = keysExactly(body, ['kind', 'bytes', 'hash']);
    if (k) return `body: ${k}`;
    if (typeof body['bytes'] !== 'string') return 'body.bytes must be base64 text';
    if (!isDigestHex(body['hash'])) return 'body.hash must be 64 lowercase hex';
    return undefined;
  }
  if (body['kind'] === 'stand-down') {
    const k = keysExactly(body, ['kind', 'failureClass']);
    if (k) return `body: ${k}`;
    if (!isMember(FAILURE_CLASSES, body['failureClass'])) return `body.failureClass must be one of ${FAILURE_CLASSES.join(', ')}`;
    return undefined;
  }
  return 'body.kind must be "authored" or "stand-down"';
}

/** The turn entry as submitted: the entry without the engine's `ruling`. */
export function turnClaimOf(t: TurnEntry): Omit<TurnEntry, 'ruling'> {
  return { kind: 'turn', session: t.session, ordinal: t.ordinal, parent: t.parent, frameRoot: t.frameRoot, body: t.body };
}

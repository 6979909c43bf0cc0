/**
 * THE byte rules: every domain tag and every hashed or signed byte string of
 * the session protocol is assembled here and nowhere else (docs/PROTOCOL.md
 * specifies the same bytes in prose). The digest is passed in; this file does
 * no crypto itself.
 *
 * Domain separation:
 * - entry hash     = D(0x00 ‖ entryBytes)             RFC 6962 leaf hash
 * - tree node      = D(0x01 ‖ left ‖ right)           RFC 6962 interior node
 * - tagged hash    = D(utf8(tag) ‖ 0x00 ‖ data)       every other hash; tags
 *   start with "tally/" (0x74…), so no tagged preimage can begin with 0x00 or
 *   0x01 and collide with a tree preimage, and the NUL ends the tag.
 */
import { base64Into } from './base64.js';
import { canonicalJson, tryCanonicalJson, utf8, type CanonicalValue } from './canonical.js';
import { LIMITS } from './limits.js';
import { LEAF_PREFIX } from './merkle/hasher.js';

const encoder = new TextEncoder();

/**
 * A 32-byte digest function (SHA-256 in Tally). It MUST finish reading `data`
 * before it returns and MUST NOT keep a reference to it: the functions below
 * may pass a view of a reused buffer.
 */
export type Digest = (data: Uint8Array) => Uint8Array;

/**
 * The same digest written into `out[0, 32)` instead of a fresh array (the
 * verifier's hot path: no array per hash). The same contract as {@link Digest}.
 */
export type DigestInto = (data: Uint8Array, out: Uint8Array) => void;

/** Version string written into every genesis entry. */
export const PROTOCOL_VERSION = 'tally/1';

/** Every domain tag, by the structure it names. */
export const DOMAIN_TAGS = {
  /** Frame root: the digest of a frame's content `{data?, ordinal, time}`. */
  frameRoot: 'tally/v1/frame-root',
  /** Authored bytes of a turn. */
  authored: 'tally/v1/authored',
  /** Identity of a turn as submitted (the entry without the engine's ruling). */
  turnClaim: 'tally/v1/turn-claim',
  /** A leaf of the engine log (`src/protocol/log/leaf.ts`): the tag starts the leaf's bytes. */
  engineLogLeaf: 'tally/v1/engine-log-leaf',
  /** A session's spec, as the engine log's open leaf names it. */
  spec: 'tally/v1/spec',
  /** The engine log's identity document (`src/protocol/log/identity.ts`): the first line of its note text, and the tag of its id. */
  logIdentity: 'tally/v1/log-identity',
} as const;

export { LEAF_PREFIX, NODE_PREFIX } from './merkle/hasher.js';

const tagPrefixes = new Map<string, Uint8Array>();

/** `utf8(tag) ‖ 0x00`, encoded once per tag. */
function tagPrefix(tag: string): Uint8Array {
  let p = tagPrefixes.get(tag);
  if (!p) {
    const t = utf8(tag);
    p = new Uint8Array(t.length + 1);
    p.set(t, 0);
    tagPrefixes.set(tag, p);
  }
  return p;
}

// One grow-only buffer for `prefix ‖ data`: each preimage is assembled here and
// handed to the digest as a view, instead of allocating a fresh array per hash.
// Safe because digests are synchronous and keep no reference (see Digest).
let scratch = new Uint8Array(4096);
/** `views[n]` is `scratch.subarray(0, n)`, made once: a hash of a given length allocates no view. */
let views = newViews();
/** Room for every cached length up front (a dense array, never a sparse one). */
function newViews(): Array<Uint8Array | undefined> {
  return new Array<Uint8Array | undefined>(4097).fill(undefined);
}

function preimage(prefixLength: number, dataLength: number): Uint8Array {
  const need = prefixLength + dataLength;
  if (scratch.length < need) {
    scratch = new Uint8Array(Math.max(need, scratch.length * 2));
    views = newViews();
  }
  return scratch;
}

/** The first `n` bytes of the preimage buffer, as a view made once per length. */
function head(n: number): Uint8Array {
  let v = views[n];
  if (v === undefined) {
    v = scratch.subarray(0, n);
    if (n <= 4096) views[n] = v;
  }
  return v;
}

/** `D(utf8(tag) ‖ 0x00 ‖ data)`. */
export function taggedHash(digest: Digest, tag: string, data: Uint8Array): Uint8Array {
  const t = tagPrefix(tag);
  const buf = preimage(t.length, data.length);
  buf.set(t, 0);
  buf.set(data, t.length);
  return digest(buf.subarray(0, t.length + data.length));
}

/** Entry hash = RFC 6962 leaf hash of the entry's canonical bytes: `D(0x00 ‖ bytes)`. */
export function entryHash(digest: Digest, entryBytes: Uint8Array): Uint8Array {
  return digest(entryPreimage(entryBytes));
}

/** {@link entryHash} written into `out` (32 bytes). */
export function entryHashInto(digestInto: DigestInto, entryBytes: Uint8Array, out: Uint8Array): void {
  digestInto(entryPreimage(entryBytes), out);
}

/** `0x00 ‖ bytes` in the preimage buffer (valid until the next preimage). */
function entryPreimage(entryBytes: Uint8Array): Uint8Array {
  const buf = preimage(1, entryBytes.length);
  buf[0] = LEAF_PREFIX;
  buf.set(entryBytes, 1);
  return head(entryBytes.length + 1);
}

/** The content a frame root commits to. `data` is omitted when absent. */
export interface FrameContent {
  readonly ordinal: number;
  readonly time: number;
  readonly data?: CanonicalValue;
}

/** Frame root = tagged hash of canonical `{"data":…,"ordinal":…,"time":…}`. */
export function frameRoot(digest: Digest, content: FrameContent): Uint8Array {
  const { ordinal, time, data } = content;
  // The canonical text of {data?, ordinal, time}, written in its key order
  // (data < ordinal < time; safe integers as `${n}`, -0 as 0) when the members
  // are canonical; anything else takes the general encoder, which also names
  // the problem.
  if (Number.isSafeInteger(ordinal) && Number.isSafeInteger(time)) {
    if (data === undefined) return frameRootOfDataText(digest, ordinal, time, undefined);
    const d = tryCanonicalJson(data, { level: 2 });
    if (d.ok) return frameRootOfDataText(digest, ordinal, time, d.text);
  }
  const obj: { ordinal: number; time: number; data?: CanonicalValue } = { ordinal, time };
  if (data !== undefined) obj.data = data;
  return frameRootOfText(digest, canonicalJson(obj));
}

/**
 * {@link frameRoot} of a frame whose `data` (at level 2) has the canonical text `dataText`
 * (`undefined`: no data), already computed by the caller; `ordinal` and `time` safe integers.
 */
export function frameRootOfDataText(digest: Digest, ordinal: number, time: number, dataText: string | undefined): Uint8Array {
  return frameRootOfText(digest, dataText === undefined ? `{"ordinal":${ordinal},"time":${time}}` : `{"data":${dataText},"ordinal":${ordinal},"time":${time}}`);
}

function frameRootOfText(digest: Digest, text: string): Uint8Array {
  // The same bytes as taggedHash(digest, tag, canonicalBytes(obj)), with the
  // canonical text UTF-8 encoded straight into the preimage buffer.
  const t = tagPrefix(DOMAIN_TAGS.frameRoot);
  const buf = preimage(t.length, text.length * 3);
  buf.set(t, 0);
  const { written } = encoder.encodeInto(text, buf.subarray(t.length));
  return digest(buf.subarray(0, t.length + written));
}

const OPEN_DATA = utf8('{"data":');
const COMMA_ORDINAL = utf8(',"ordinal":');
const OPEN_ORDINAL = utf8('{"ordinal":');
const COMMA_TIME = utf8(',"time":');

/**
 * {@link frameRoot} of a frame whose line is PROVEN to be its canonical
 * encoding (src/protocol/scan.ts): the same preimage, assembled from spans of
 * the line instead of re-encoding the content. In a canonical frame line the
 * `data` member's value, the ordinal's digits and the time's digits are byte
 * for byte the canonical text of those members, so the preimage
 * `tag ‖ 0x00 ‖ {"data":D,"ordinal":O,"time":T}` (without `"data":D,` when
 * absent) is copied from the line once. `dataStart < 0` means no data.
 */
export function frameRootOfLine(digest: Digest, line: Uint8Array, dataStart: number, dataEnd: number, ordStart: number, ordEnd: number, timeStart: number, timeEnd: number): Uint8Array {
  return digest(frameRootPreimageOfLine(line, dataStart, dataEnd, ordStart, ordEnd, timeStart, timeEnd));
}

/** {@link frameRootOfLine} written into `out` (32 bytes). */
export function frameRootOfLineInto(digestInto: DigestInto, out: Uint8Array, line: Uint8Array, dataStart: number, dataEnd: number, ordStart: number, ordEnd: number, timeStart: number, timeEnd: number): void {
  digestInto(frameRootPreimageOfLine(line, dataStart, dataEnd, ordStart, ordEnd, timeStart, timeEnd), out);
}

const FRAME_ROOT_PREFIX = tagPrefix(DOMAIN_TAGS.frameRoot);

function frameRootPreimageOfLine(line: Uint8Array, dataStart: number, dataEnd: number, ordStart: number, ordEnd: number, timeStart: number, timeEnd: number): Uint8Array {
  const t = FRAME_ROOT_PREFIX;
  const dataLen = dataStart < 0 ? 0 : dataEnd - dataStart + OPEN_DATA.length;
  const need = dataLen + OPEN_ORDINAL.length + (ordEnd - ordStart) + COMMA_TIME.length + (timeEnd - timeStart) + 1;
  const buf = preimage(t.length, need);
  buf.set(t, 0);
  let o = t.length;
  if (dataStart >= 0) {
    buf.set(OPEN_DATA, o);
    o += OPEN_DATA.length;
    // A short value is copied byte by byte (no view); a long one natively.
    if (dataEnd - dataStart <= 64) for (let i = dataStart; i < dataEnd; i++) buf[o++] = line[i]!;
    else {
      buf.set(line.subarray(dataStart, dataEnd), o);
      o += dataEnd - dataStart;
    }
    buf.set(COMMA_ORDINAL, o);
    o += COMMA_ORDINAL.length;
  } else {
    buf.set(OPEN_ORDINAL, o);
    o += OPEN_ORDINAL.length;
  }
  for (let i = ordStart; i < ordEnd; i++) buf[o++] = line[i]!;
  buf.set(COMMA_TIME, o);
  o += COMMA_TIME.length;
  for (let i = timeStart; i < timeEnd; i++) buf[o++] = line[i]!;
  buf[o++] = 0x7d;
  return head(o);
}

/**
 * {@link authoredHash} of the bytes whose canonical padded base64 is
 * `text[start, end)` (ASCII codes, as in a bundle line), decoded straight into
 * the preimage after the tag (no array for the bytes); `undefined` when the
 * text is not canonical base64 or the bytes exceed LIMITS.authoredBytes (the
 * reference, `authoredProblem`, then names it).
 */
export function authoredHashOfBase64(digest: Digest, text: Uint8Array, start: number, end: number): Uint8Array | undefined {
  const p = authoredPreimageOfBase64(text, start, end);
  return p === undefined ? undefined : digest(p);
}

/** {@link authoredHashOfBase64} written into `out` (32 bytes); false (nothing written) where that gives `undefined`. */
export function authoredHashOfBase64Into(digestInto: DigestInto, out: Uint8Array, text: Uint8Array, start: number, end: number): boolean {
  const p = authoredPreimageOfBase64(text, start, end);
  if (p === undefined) return false;
  digestInto(p, out);
  return true;
}

const AUTHORED_PREFIX = tagPrefix(DOMAIN_TAGS.authored);

function authoredPreimageOfBase64(text: Uint8Array, start: number, end: number): Uint8Array | undefined {
  if ((end - start) % 4 !== 0 || ((end - start) / 4) * 3 > LIMITS.authoredBytes + 2) return undefined;
  const t = AUTHORED_PREFIX;
  const buf = preimage(t.length, ((end - start) / 4) * 3 + 3);
  for (let i = 0; i < t.length; i++) buf[i] = t[i]!;
  const n = base64Into(text, start, end, buf, t.length);
  if (n < 0 || n > LIMITS.authoredBytes) return undefined;
  return head(t.length + n);
}

/** Authored hash = tagged hash of the exact authored bytes. */
export function authoredHash(digest: Digest, authored: Uint8Array): Uint8Array {
  return taggedHash(digest, DOMAIN_TAGS.authored, authored);
}

/** Turn-claim hash = tagged hash of the canonical turn entry WITHOUT its `ruling`. */
export function turnClaimHash(digest: Digest, claimBytes: Uint8Array): Uint8Array {
  return taggedHash(digest, DOMAIN_TAGS.turnClaim, claimBytes);
}

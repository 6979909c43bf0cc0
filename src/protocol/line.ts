/**
 * The context-free checks of one bundle line, before its place in the chain
 * is considered: size, UTF-8, JSON, canonical bytes (with whole-line fast
 * paths for the commonest entry shapes), entry structure and entry hash
 * (`inspectLine`); an authored body's bytes and hash (`authoredProblem`); a
 * frame's root (`frameRootHex`). The streaming `ChainVerifier` (chain.ts) and
 * the parallel verifier's workers run exactly these.
 */
import { isCanonicalParse, tryCanonicalJson, type CanonicalValue } from './canonical.js';
import { fromBase64 } from './base64.js';
import { authoredHash, entryHash, frameRoot, type Digest } from './bytes.js';
import { parseEntry, type AuthoredBody, type Entry, type FinalizeEntry, type FrameEntry, type TurnEntry } from './entries.js';
import { toHex } from './hex.js';
import { LIMITS } from './limits.js';
import { parseStrictJson } from './strict-json.js';
import type { FailureClass } from './vocabulary.js';

// `ignoreBOM: true` keeps a leading U+FEFF in the text instead of silently
// dropping it: decoding is then one-to-one, and a BOM is refused below.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** What one line is on its own, before its place in the chain is considered. */
export type LineInspection =
  | { readonly ok: true; readonly entry: Entry; readonly hash: Uint8Array }
  | { readonly ok: false; readonly code: 'too-large' | 'not-utf8' | 'not-json' | 'not-canonical' | 'bad-structure'; readonly message: string };


/**
 * A line refused at the JSON step (`not-json`) or the canonical step
 * (`not-canonical`): the code is the step's, and the strict parser names the
 * precise reason in the message when it has one (bom, duplicate-key,
 * lone-surrogate, too-deep, syntax, trailing-data).
 */
function refused(line: Uint8Array, code: 'not-json' | 'not-canonical', fallback: string): LineInspection {
  const s = parseStrictJson(line);
  return { ok: false, code, message: s.ok ? fallback : `${fallback} (${s.code}: ${s.message})` };
}

/**
 * The context-free checks of one line, in the verifier's order: size, UTF-8,
 * JSON, canonical bytes, entry structure; then its entry hash. A parallel
 * verifier may run this for many lines at once and apply the results in order.
 *
 * The canonical check compares RAW BYTES: the line is accepted only when it is
 * byte for byte the UTF-8 of the canonical encoding of its value, so a BOM,
 * a duplicate key, an escape, whitespace or anything else that decodes to
 * the same value is refused (docs/PROTOCOL.md "One encoding").
 */
export function inspectLine(digest: Digest, line: Uint8Array): LineInspection {
  if (line.length > LIMITS.entryBytes) return { ok: false, code: 'too-large', message: `entry exceeds ${LIMITS.entryBytes} bytes` };
  let text: string;
  try {
    text = decoder.decode(line);
  } catch {
    return { ok: false, code: 'not-utf8', message: 'entry is not valid UTF-8' };
  }
  // The whole-line shapes are pure ASCII: when one matches and the text has
  // as many characters as the line has bytes, the line's bytes ARE the text.
  const known = text.length === line.length ? knownShape(text) : undefined;
  if (known) return { ok: true, entry: known, hash: entryHash(digest, line) };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return refused(line, 'not-json', 'entry is not JSON');
  }
  // parseEntry is pure, so running it first changes no verdict; the canonical
  // check still decides first whenever the fast proof does not apply.
  const parsed = parseEntry(value);
  let canonical = parsed.ok && !text.includes('\\') ? canonicalEntryText(parsed.entry) : undefined;
  if (canonical !== text) {
    if (isCanonicalParse(value, text)) canonical = text;
    else {
      const c = tryCanonicalJson(value);
      if (!c.ok) return refused(line, 'not-canonical', `entry is outside canonical JSON (${c.problem.code} at ${c.problem.path || '/'})`);
      canonical = c.text;
    }
  }
  // `text` is the fatal, BOM-keeping decoding of `line`, under which UTF-8 round-trips
  // exactly (and canonical text holds no lone surrogate): the canonical text's UTF-8 is
  // `line` exactly when the canonical text IS `text`, so no second encoding is needed.
  if (canonical !== text) return refused(line, 'not-canonical', 'entry bytes are not the canonical encoding of their value');
  if (!parsed.ok) return { ok: false, code: 'bad-structure', message: parsed.reason };
  return { ok: true, entry: parsed.entry, hash: entryHash(digest, line) };
}

// The commonest entries, matched whole. A match means the text is exactly the
// canonical JSON of an entry that parseEntry accepts (digests are 64 lowercase
// hex, ordinals -1 or unsigned without leading zeros, strings hold no
// character JSON would escape), so the reference checks cannot fail on it;
// number ranges are checked after the match. Anything else takes the full path.
const HEX = '([0-9a-f]{64})';
const ORD = '(-1|0|[1-9][0-9]{0,12})';
const UINT = '(0|[1-9][0-9]{0,15})';
const TAIL = `"frameRoot":"${HEX}","kind":"turn","ordinal":${ORD},"parent":"${HEX}","session":"${HEX}"\\}$`;
const AUTHORED_TURN = new RegExp(`^\\{"body":\\{"bytes":"([A-Za-z0-9+/=]*)","hash":"${HEX}","kind":"authored"\\},${TAIL}`);
const STAND_DOWN_TURN = new RegExp(`^\\{"body":\\{"failureClass":"(provider|timeout|malformed)","kind":"stand-down"\\},${TAIL}`);
const PLAIN_FRAME = new RegExp(`^\\{"frameRoot":"${HEX}","kind":"frame","ordinal":${ORD},"parent":"${HEX}","session":"${HEX}","time":${UINT}\\}$`);
const PLAIN_SEAL = new RegExp(`^\\{"kind":"finalize","parent":"${HEX}","root":"${HEX}","session":"${HEX}","size":([1-9][0-9]{0,15})\\}$`);

function ordinalOf(s: string): number | undefined {
  const n = Number(s);
  return n <= LIMITS.maxOrdinal ? n : undefined;
}

/** The entry a line of a known shape holds (as JSON.parse would build it), or `undefined`. */
function knownShape(text: string): Entry | undefined {
  switch (text.charCodeAt(2)) {
    case 0x62: {
      // {"body":…
      let m = AUTHORED_TURN.exec(text);
      if (m) {
        const ordinal = ordinalOf(m[4]!);
        if (ordinal === undefined) return undefined;
        return { body: { bytes: m[1]!, hash: m[2]!, kind: 'authored' }, frameRoot: m[3]!, kind: 'turn', ordinal, parent: m[5]!, session: m[6]! } as TurnEntry;
      }
      m = STAND_DOWN_TURN.exec(text);
      if (m) {
        const ordinal = ordinalOf(m[3]!);
        if (ordinal === undefined) return undefined;
        return { body: { failureClass: m[1]! as FailureClass, kind: 'stand-down' }, frameRoot: m[2]!, kind: 'turn', ordinal, parent: m[4]!, session: m[5]! } as TurnEntry;
      }
      return undefined;
    }
    case 0x66: {
      // {"frameRoot":…
      const m = PLAIN_FRAME.exec(text);
      if (!m) return undefined;
      const ordinal = ordinalOf(m[2]!);
      const time = Number(m[5]!);
      if (ordinal === undefined || !Number.isSafeInteger(time)) return undefined;
      return { frameRoot: m[1]!, kind: 'frame', ordinal, parent: m[3]!, session: m[4]!, time } as FrameEntry;
    }
    case 0x6b: {
      // {"kind":"finalize",…
      const m = PLAIN_SEAL.exec(text);
      if (!m) return undefined;
      const size = Number(m[4]!);
      if (!Number.isSafeInteger(size)) return undefined;
      return { kind: 'finalize', parent: m[1]!, root: m[2]!, session: m[3]!, size } as FinalizeEntry;
    }
    default:
      return undefined;
  }
}

// Free-form members sit at level 2 of their entry (the entry object is level 1).
function canon(v: CanonicalValue): string | undefined {
  const c = tryCanonicalJson(v, { level: 2 });
  return c.ok ? c.text : undefined;
}

/**
 * The canonical text of a STRUCTURALLY VALID entry, written from its known
 * key order (free-form members — spec, data, ruling, artifacts — through the
 * canonical encoder; `undefined` if one of them is outside canonical JSON).
 *
 * Precondition: every string member written directly (digests, kinds, base64
 * bytes, failure class, protocol) is its own JSON encoding between quotes —
 * no `"`, `\\`, control character or lone surrogate. `inspectLine` ensures it
 * by using this only on entries parsed from a well-formed text without any
 * backslash; the engine, for entries it builds from checked hex and base64.
 */
export function canonicalEntryText(e: Entry): string | undefined {
  switch (e.kind) {
    case 'genesis': {
      const spec = canon(e.spec);
      return spec === undefined ? undefined : `{"kind":"genesis","protocol":"${e.protocol}","spec":${spec}}`;
    }
    case 'frame': {
      const data = e.data === undefined ? undefined : canon(e.data);
      return e.data !== undefined && data === undefined ? undefined : canonicalFrameText(e, data);
    }
    case 'turn': {
      const ruling = e.ruling === undefined ? '' : canon(e.ruling);
      if (ruling === undefined) return undefined;
      const b = e.body;
      const body = b.kind === 'authored' ? `{"bytes":"${b.bytes}","hash":"${b.hash}","kind":"authored"}` : `{"failureClass":"${b.failureClass}","kind":"stand-down"}`;
      return `{"body":${body},"frameRoot":"${e.frameRoot}","kind":"turn","ordinal":${e.ordinal},"parent":"${e.parent}",${ruling === '' ? '' : `"ruling":${ruling},`}"session":"${e.session}"}`;
    }
    case 'finalize': {
      const artifacts = e.artifacts === undefined ? '' : canon(e.artifacts);
      if (artifacts === undefined) return undefined;
      return `{${artifacts === '' ? '' : `"artifacts":${artifacts},`}"kind":"finalize","parent":"${e.parent}","root":"${e.root}","session":"${e.session}","size":${e.size}}`;
    }
  }
}

/**
 * The canonical text of a frame entry whose `data` has the canonical text `dataText` (level 2;
 * `undefined`: the frame has no data), under the precondition of {@link canonicalEntryText}.
 */
export function canonicalFrameText(e: FrameEntry, dataText: string | undefined): string {
  return `{${dataText === undefined ? '' : `"data":${dataText},`}"frameRoot":"${e.frameRoot}","kind":"frame","ordinal":${e.ordinal},"parent":"${e.parent}","session":"${e.session}","time":${e.time}}`;
}

/** The frame root recomputed from a frame's content, as hex. */
export function frameRootHex(digest: Digest, e: FrameEntry): string {
  return toHex(frameRoot(digest, e.data === undefined ? { ordinal: e.ordinal, time: e.time } : { ordinal: e.ordinal, time: e.time, data: e.data }));
}

/** Messages of the two authored-body failures. */
export const AUTHORED_MESSAGES = {
  'bad-authored-bytes': 'body.bytes is not canonical padded base64 within the size limit',
  'bad-authored-hash': 'body.hash does not match the authored bytes',
} as const;

/** Checks an authored body's bytes and hash; `undefined` when both hold. */
export function authoredProblem(digest: Digest, body: AuthoredBody): 'bad-authored-bytes' | 'bad-authored-hash' | undefined {
  const bytes = fromBase64(body.bytes);
  if (!bytes || bytes.length > LIMITS.authoredBytes) return 'bad-authored-bytes';
  if (toHex(authoredHash(digest, bytes)) !== body.hash) return 'bad-authored-hash';
  return undefined;
}

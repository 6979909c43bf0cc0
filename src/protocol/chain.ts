/**
 * The offline chain verifier as a pure, streaming state machine: feed it the
 * lines of a bundle one at a time; it recomputes every hash, link, ordinal,
 * frame root, the Merkle root and the seal, and reports the FIRST bad entry by
 * index with a typed reason. State is O(log n) (a Merkle frontier), so memory
 * stays bounded however long the bundle.
 */
import { isCanonicalParse, tryCanonicalJson, type CanonicalValue } from './canonical.js';
import { fromBase64 } from './base64.js';
import { authoredHash, entryHash, frameRoot, type Digest } from './bytes.js';
import { parseEntry, type AuthoredBody, type Entry, type FinalizeEntry, type FrameEntry, type TurnEntry } from './entries.js';
import { toHex } from './hex.js';
import { LIMITS } from './limits.js';
import { isoTime } from './time.js';
import { Frontier } from './merkle/frontier.js';
import { rfc6962Hasher } from './merkle/hasher.js';
import { parseStrictJson } from './strict-json.js';
import { OPEN_ORDINAL, type FailureClass } from './vocabulary.js';

/** Why a bundle failed verification. */
export type ChainErrorCode =
  | 'empty'
  | 'too-large'
  | 'not-utf8'
  | 'not-json'
  | 'not-canonical'
  | 'bad-structure'
  | 'not-genesis'
  | 'wrong-session'
  | 'broken-link'
  | 'unexpected-entry'
  | 'bad-ordinal'
  | 'time-regressed'
  | 'bad-frame-root'
  | 'bad-authored-bytes'
  | 'bad-authored-hash'
  | 'bad-seal-size'
  | 'bad-seal-root'
  | 'after-seal'
  | 'not-sealed'
  | 'missing-newline'
  | 'pin-mismatch';
/** Runtime tuple of every {@link ChainErrorCode}. */
export const CHAIN_ERROR_CODES = [
  'empty',
  'too-large',
  'not-utf8',
  'not-json',
  'not-canonical',
  'bad-structure',
  'not-genesis',
  'wrong-session',
  'broken-link',
  'unexpected-entry',
  'bad-ordinal',
  'time-regressed',
  'bad-frame-root',
  'bad-authored-bytes',
  'bad-authored-hash',
  'bad-seal-size',
  'bad-seal-root',
  'after-seal',
  'not-sealed',
  'missing-newline',
  'pin-mismatch',
] as const satisfies readonly ChainErrorCode[];

/** A verification failure naming the 0-based entry (line) index. */
export interface ChainError {
  readonly ok: false;
  readonly index: number;
  readonly code: ChainErrorCode;
  readonly message: string;
}

/** A verified chain. `receiptRoot` is the RFC 6962 root over all `size` entries. */
export interface ChainSummary {
  readonly ok: true;
  readonly sessionId: string;
  readonly size: number;
  readonly head: string;
  readonly receiptRoot: string;
  readonly sealed: boolean;
  readonly frames: number;
  readonly turns: number;
}

/** A checked entry as the verifier saw it, for callers that want more than a verdict. */
export interface VerifiedEntry {
  readonly ok: true;
  readonly index: number;
  readonly hash: string;
  readonly entry: Entry;
}

/** What a grader pins: any given member must match the bundle. */
export interface ChainPin {
  readonly sessionId?: string;
  readonly size?: number;
  readonly receiptRoot?: string;
}

/** Options of {@link ChainVerifier.finish}. */
export interface FinishOptions {
  /** Reject a bundle that stops before its seal (default true): this is how a truncated tail is caught. */
  readonly requireSealed?: boolean;
  /** Values pinned out of band (for example from a signed receipt); a mismatch is `pin-mismatch`. */
  readonly pin?: ChainPin;
}

// `ignoreBOM: true` keeps a leading U+FEFF in the text instead of silently
// dropping it: decoding is then one-to-one, and a BOM is refused below.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/** What one line is on its own, before its place in the chain is considered. */
export type LineInspection =
  | { readonly ok: true; readonly entry: Entry; readonly hash: Uint8Array }
  | { readonly ok: false; readonly code: 'too-large' | 'not-utf8' | 'not-json' | 'not-canonical' | 'bad-structure'; readonly message: string };

/** True when the UTF-8 encoding of `text` is exactly `bytes` (the raw-byte canonical check). */
function isUtf8Of(text: string, bytes: Uint8Array): boolean {
  if (text.length > bytes.length || text.length * 3 < bytes.length) return false;
  const enc = encoder.encode(text);
  if (enc.length !== bytes.length) return false;
  for (let i = 0; i < enc.length; i++) if (enc[i] !== bytes[i]) return false;
  return true;
}

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
  if (!isUtf8Of(canonical, line)) return refused(line, 'not-canonical', 'entry bytes are not the canonical encoding of their value');
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
      const data = e.data === undefined ? '' : canon(e.data);
      if (data === undefined) return undefined;
      return `{${data === '' ? '' : `"data":${data},`}"frameRoot":"${e.frameRoot}","kind":"frame","ordinal":${e.ordinal},"parent":"${e.parent}","session":"${e.session}","time":${e.time}}`;
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

/** Streaming verifier; see the module comment. Construct with the SHA-256 digest. */
export class ChainVerifier {
  private readonly digest: Digest;
  private readonly frontier: Frontier;
  private index = 0;
  private sessionId = '';
  private head = '';
  private expectOrdinal = OPEN_ORDINAL;
  private pending: { ordinal: number; frameRoot: string } | undefined;
  private lastTime = 0;
  private sealed = false;
  private frames = 0;
  private turns = 0;
  private failed: ChainError | undefined;

  constructor(digest: Digest) {
    this.digest = digest;
    this.frontier = new Frontier(rfc6962Hasher(digest));
  }

  /** Feeds the bytes of one line (without its newline). Returns the error once one is found. */
  push(line: Uint8Array): ChainError | VerifiedEntry {
    if (this.failed) return this.failed;
    const r = this.check(line);
    if (!r.ok) this.failed = r;
    return r;
  }

  private fail(code: ChainErrorCode, message: string): ChainError {
    return { ok: false, index: this.index, code, message };
  }

  private check(line: Uint8Array): ChainError | VerifiedEntry {
    if (this.sealed) return this.fail('after-seal', 'an entry follows the finalize seal');
    const seen = inspectLine(this.digest, line);
    if (!seen.ok) return this.fail(seen.code, seen.message);
    const e = seen.entry;
    const hashBytes = seen.hash;
    const hash = toHex(hashBytes);

    if (this.index === 0) {
      if (e.kind !== 'genesis') return this.fail('not-genesis', 'the first entry must be the genesis');
      this.sessionId = hash;
    } else {
      if (e.kind === 'genesis') return this.fail('unexpected-entry', 'genesis may only be the first entry');
      if (e.session !== this.sessionId) return this.fail('wrong-session', `entry names session ${e.session}, expected ${this.sessionId}`);
      if (e.parent !== this.head) return this.fail('broken-link', `entry ${this.index}'s link does not match entry ${this.index - 1}: its parent ${e.parent} is not the hash of entry ${this.index - 1}, ${this.head} (one of the two was changed: look at both)`);
      const bad = this.checkTransition(e);
      if (bad) return bad;
    }
    this.frontier.append(hashBytes);
    this.head = hash;
    const verified: VerifiedEntry = { ok: true, index: this.index, hash, entry: e };
    this.index++;
    return verified;
  }

  private checkTransition(e: Exclude<Entry, { kind: 'genesis' }>): ChainError | undefined {
    switch (e.kind) {
      case 'frame': {
        if (this.pending) return this.fail('unexpected-entry', `frame ${e.ordinal} arrives while frame ${this.pending.ordinal} is unanswered`);
        if (e.ordinal !== this.expectOrdinal) return this.fail('bad-ordinal', `frame ordinal ${e.ordinal}, expected ${this.expectOrdinal}`);
        if (e.time < this.lastTime) return this.fail('time-regressed', `frame time ${isoTime(e.time)} is before the previous frame's ${isoTime(this.lastTime)}`);
        const root = frameRootHex(this.digest, e);
        if (root !== e.frameRoot) return this.fail('bad-frame-root', `frameRoot ${e.frameRoot} does not match the frame content (${root})`);
        this.pending = { ordinal: e.ordinal, frameRoot: root };
        this.lastTime = e.time;
        this.frames++;
        return undefined;
      }
      case 'turn': {
        if (!this.pending) return this.fail('unexpected-entry', 'a turn with no frame to answer');
        if (e.ordinal !== this.pending.ordinal) return this.fail('bad-ordinal', `turn ordinal ${e.ordinal} does not answer frame ${this.pending.ordinal}`);
        if (e.frameRoot !== this.pending.frameRoot) return this.fail('bad-frame-root', 'turn names another frame root than the frame it answers');
        if (e.body.kind === 'authored') {
          const bad = authoredProblem(this.digest, e.body);
          if (bad) return this.fail(bad, AUTHORED_MESSAGES[bad]);
        }
        this.expectOrdinal = this.pending.ordinal + 1;
        this.pending = undefined;
        this.turns++;
        return undefined;
      }
      case 'finalize': {
        if (this.pending) return this.fail('unexpected-entry', `finalize while frame ${this.pending.ordinal} is unanswered`);
        if (e.size !== this.index) return this.fail('bad-seal-size', `seal size ${e.size}, but ${this.index} entries precede it`);
        const root = toHex(this.frontier.root());
        if (root !== e.root) return this.fail('bad-seal-root', `seal root ${e.root} does not match the entries' root ${root}`);
        this.sealed = true;
        return undefined;
      }
    }
  }

  /** Ends the stream and returns the summary, or the first error. */
  finish(options: FinishOptions = {}): ChainSummary | ChainError {
    if (this.failed) return this.failed;
    if (this.index === 0) return this.fail('empty', 'the bundle has no entries');
    if ((options.requireSealed ?? true) && !this.sealed) return this.fail('not-sealed', 'the bundle ends before a finalize seal');
    const pin = options.pin;
    const root = toHex(this.frontier.root());
    if (pin) {
      const last = this.index - 1;
      if (pin.sessionId !== undefined && pin.sessionId !== this.sessionId) return { ok: false, index: 0, code: 'pin-mismatch', message: `session id ${this.sessionId} is not the pinned ${pin.sessionId}` };
      if (pin.size !== undefined && pin.size !== this.index) return { ok: false, index: last, code: 'pin-mismatch', message: `bundle has ${this.index} entries, the pin says ${pin.size}` };
      if (pin.receiptRoot !== undefined && pin.receiptRoot !== root) return { ok: false, index: last, code: 'pin-mismatch', message: `receipt root ${root} is not the pinned ${pin.receiptRoot}` };
    }
    return {
      ok: true,
      sessionId: this.sessionId,
      size: this.index,
      head: this.head,
      receiptRoot: root,
      sealed: this.sealed,
      frames: this.frames,
      turns: this.turns,
    };
  }

  /** The Merkle frontier over every entry accepted so far (a copy). */
  frontierHashes(): Uint8Array[] {
    return this.frontier.hashes();
  }

  /** Records a framing error found by the caller (for example a missing final newline) at the current index. */
  reject(code: ChainErrorCode, message: string): ChainError {
    if (this.failed) return this.failed;
    this.failed = this.fail(code, message);
    return this.failed;
  }
}

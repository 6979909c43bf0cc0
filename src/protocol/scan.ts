/**
 * The byte-level line checker: one pass over a bundle line's bytes that
 * PROVES it is exactly the canonical encoding of a frame, a turn or a seal
 * that the entry parser accepts, and records where the fields the chain rules
 * need sit in the line — without decoding text or building the object tree.
 *
 * It only ever proves: `false` means "not proven here", and the caller runs
 * the reference (`inspectLine`, line.ts), which decides and names every
 * refusal. So a line this accepts is one the reference accepts with the same
 * value, and every other line gets the reference's verdict; nothing here can
 * change a verdict. Shapes it proves, written in canonical key order:
 *
 * - frame    `{["data":V,]"frameRoot":H,"kind":"frame","ordinal":O,"parent":H,"session":H,"time":T}`
 * - turn     `{"body":B,"frameRoot":H,"kind":"turn","ordinal":O,"parent":H,["ruling":{…},]"session":H}`
 *            with B `{"bytes":"<base64 alphabet>","hash":H,"kind":"authored"}` or
 *            `{"failureClass":"provider|timeout|malformed","kind":"stand-down"}`
 * - finalize `{["artifacts":{…},]"kind":"finalize","parent":H,"root":H,"session":H,"size":S}`
 *
 * H is `"` + 64 lowercase hex + `"`, O is -1 or 0…2^40 (LIMITS.maxOrdinal), T a
 * non-negative and S a positive safe integer, all in canonical integer form;
 * V and the objects are proven canonical by scan-value.ts. The genesis (one
 * line a day) always takes the reference.
 */
import { LIMITS } from './limits.js';
import { scanInteger, scanObject, scanValue } from './scan-value.js';

/** Where a proven line's fields are: offsets into the scanned bytes (-1 when absent). */
export interface LineScan {
  /** 1 frame, 2 turn, 3 finalize (the parallel record's kind codes). */
  kind: number;
  ordinal: number;
  /** Frame time, or seal size. */
  timeOrSize: number;
  /** First hex digit of each digest. */
  session: number;
  parent: number;
  /** frameRoot (frame, turn) or root (finalize). */
  root: number;
  /** Digit span of the ordinal and of the time (frames: the frame root's preimage reuses them). */
  ordStart: number;
  ordEnd: number;
  timeStart: number;
  timeEnd: number;
  /** Span of the member value `data`, `ruling` or `artifacts`, or -1. */
  memberStart: number;
  memberEnd: number;
  /** Turns: 1 authored, 2 stand-down. */
  body: number;
  /** Authored: the base64 span (quotes excluded) and the first hex digit of `hash`. Stand-down: the failure class span. */
  bytesStart: number;
  bytesEnd: number;
  hashAt: number;
}

/** A fresh, reusable scan record (one per verifier: {@link scanLine} writes into it). */
export function newLineScan(): LineScan {
  return { kind: 0, ordinal: 0, timeOrSize: 0, session: -1, parent: -1, root: -1, ordStart: -1, ordEnd: -1, timeStart: -1, timeEnd: -1, memberStart: -1, memberEnd: -1, body: 0, bytesStart: -1, bytesEnd: -1, hashAt: -1 };
}

const enc = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const L = {
  data: enc('{"data":'),
  frameRootFirst: enc('{"frameRoot":"'),
  frameRoot: enc(',"frameRoot":"'),
  kindFrame: enc('","kind":"frame","ordinal":'),
  kindTurn: enc('","kind":"turn","ordinal":'),
  parent: enc(',"parent":"'),
  ruling: enc('","ruling":'),
  session: enc('","session":"'),
  rulingSession: enc(',"session":"'),
  time: enc('","time":'),
  turnEnd: enc('"}'),
  bodyAuthored: enc('{"body":{"bytes":"'),
  hash: enc('","hash":"'),
  authoredEnd: enc('","kind":"authored"}'),
  bodyStandDown: enc('{"body":{"failureClass":"'),
  standDownEnd: enc('","kind":"stand-down"}'),
  artifacts: enc('{"artifacts":'),
  kindFinalizeFirst: enc('{"kind":"finalize","parent":"'),
  kindFinalize: enc(',"kind":"finalize","parent":"'),
  root: enc('","root":"'),
  size: enc('","size":'),
} as const;
const FAILURE_CLASSES = ['provider', 'timeout', 'malformed'].map(enc);

function lit(b: Uint8Array, at: number, w: Uint8Array): number {
  if (at < 0 || at + w.length > b.length) return -1;
  for (let k = 0; k < w.length; k++) if (b[at + k] !== w[k]) return -1;
  return at + w.length;
}

/**
 * The end of the 64 characters of a digest at `at`, or -1 past the line. The
 * characters are NOT checked here: see {@link scanLine}'s contract.
 */
function hex64(b: Uint8Array, at: number): number {
  return at < 0 || at + 64 > b.length ? -1 : at + 64;
}

/** The value of the canonical digits `b[start, end)` (a safe integer: checked by scanInteger). */
function digits(b: Uint8Array, start: number, end: number): number {
  let neg = false;
  let i = start;
  if (b[i] === 0x2d) {
    neg = true;
    i++;
  }
  let n = 0;
  for (; i < end; i++) n = n * 10 + (b[i]! - 0x30);
  return neg ? -n : n;
}

/** An ordinal at `at` (-1 or 0…LIMITS.maxOrdinal): its end, with `s.ordinal` set, or -1. */
function ordinal(b: Uint8Array, at: number, s: LineScan): number {
  if (at < 0) return -1;
  const end = scanInteger(b, at);
  if (end < 0) return -1;
  const n = digits(b, at, end);
  if (n < -1 || n > LIMITS.maxOrdinal) return -1;
  s.ordinal = n;
  s.ordStart = at;
  s.ordEnd = end;
  return end;
}

/**
 * Proves `line` is the canonical encoding of a frame, turn or seal the entry
 * parser accepts (see the module comment), filling `s` (offsets into `line`);
 * `false` when it is not proven (the reference decides). Pure; reads each
 * byte about once. {@link scanEntryAt} with the whole of `line` as the entry.
 *
 * Contract: two things are left to the caller, which checks them anyway, so
 * that no byte is read twice. (1) Each digest's 64 characters (at `session`,
 * `parent`, `root`, `hashAt`) are proven lowercase hex only by comparing them
 * to a digest's hex (`hexEqualsAt`) or decoding them strictly. (2) An authored
 * body's text (`bytesStart`…`bytesEnd`, up to the next quote) is proven to be
 * base64 only by decoding it (`authoredHashOfBase64`): every other byte, a
 * backslash or control character included, fails that decoding. A line is
 * proven only when `scanLine` is true AND both hold.
 */
export function scanLine(line: Uint8Array, s: LineScan): boolean {
  return line.length <= LIMITS.entryBytes && scanEntryAt(line, 0, s) === line.length;
}

/**
 * The same proof for an entry that starts at `b[start]` and whose end is not
 * known yet (a bundle's bytes, lines and newlines): the index just past the
 * entry's closing brace, with `s` filled (offsets into `b`), or -1 when not
 * proven. The entry is a line of the bundle exactly when `b` has a newline at
 * the returned index: under the same contract, no byte of a proven entry is a
 * newline (literals, digits and canonical strings have none; the digests and
 * the base64 text the caller checks admit none), so that newline is the first
 * after `start`. Bytes past the entry are never taken for part of it.
 */
export function scanEntryAt(b: Uint8Array, start: number, s: LineScan): number {
  if (b[start] !== 0x7b) return -1;
  s.memberStart = -1;
  s.memberEnd = -1;
  let end: number;
  switch (b[start + 2]) {
    case 0x64: // {"data":…
    case 0x66: // {"frameRoot":…
      end = frame(b, start, s);
      break;
    case 0x62: // {"body":…
      end = turn(b, start, s);
      break;
    case 0x61: // {"artifacts":…
    case 0x6b: // {"kind":"finalize",…
      end = seal(b, start, s);
      break;
    default:
      return -1;
  }
  return end < 0 || end - start > LIMITS.entryBytes ? -1 : end;
}

function frame(b: Uint8Array, o: number, s: LineScan): number {
  let i: number;
  if (b[o + 2] === 0x64) {
    i = lit(b, o, L.data);
    const end = scanValue(b, i, 2);
    if (end < 0) return -1;
    s.memberStart = i;
    s.memberEnd = end;
    i = lit(b, end, L.frameRoot);
  } else i = lit(b, o, L.frameRootFirst);
  s.root = i;
  i = lit(b, hex64(b, i), L.kindFrame);
  i = ordinal(b, i, s);
  i = lit(b, i, L.parent);
  s.parent = i;
  i = lit(b, hex64(b, i), L.session);
  s.session = i;
  i = lit(b, hex64(b, i), L.time);
  if (i < 0 || b[i] === 0x2d) return -1;
  const end = scanInteger(b, i);
  if (end < 0 || b[end] !== 0x7d) return -1;
  s.timeStart = i;
  s.timeEnd = end;
  s.timeOrSize = digits(b, i, end);
  s.kind = 1;
  return end + 1;
}

function turn(b: Uint8Array, o: number, s: LineScan): number {
  let i = lit(b, o, L.bodyAuthored);
  if (i >= 0) {
    s.body = 1;
    s.bytesStart = i;
    i = b.indexOf(0x22, i);
    s.bytesEnd = i;
    i = lit(b, i, L.hash);
    s.hashAt = i;
    i = lit(b, hex64(b, i), L.authoredEnd);
  } else {
    i = lit(b, o, L.bodyStandDown);
    if (i < 0) return -1;
    let end = -1;
    for (const f of FAILURE_CLASSES) if ((end = lit(b, i, f)) >= 0) break;
    if (end < 0) return -1;
    s.body = 2;
    s.bytesStart = i;
    s.bytesEnd = end;
    i = lit(b, end, L.standDownEnd);
  }
  i = lit(b, i, L.frameRoot);
  s.root = i;
  i = lit(b, hex64(b, i), L.kindTurn);
  i = ordinal(b, i, s);
  i = lit(b, i, L.parent);
  s.parent = i;
  i = hex64(b, i);
  if (i < 0) return -1;
  const r = lit(b, i, L.ruling);
  if (r >= 0) {
    const end = scanObject(b, r, 2);
    if (end < 0) return -1;
    s.memberStart = r;
    s.memberEnd = end;
    i = lit(b, end, L.rulingSession);
  } else i = lit(b, i, L.session);
  s.session = i;
  i = lit(b, hex64(b, i), L.turnEnd);
  if (i < 0) return -1;
  s.kind = 2;
  return i;
}

function seal(b: Uint8Array, o: number, s: LineScan): number {
  let i: number;
  if (b[o + 2] === 0x61) {
    i = lit(b, o, L.artifacts);
    const end = scanObject(b, i, 2);
    if (end < 0) return -1;
    s.memberStart = i;
    s.memberEnd = end;
    i = lit(b, end, L.kindFinalize);
  } else i = lit(b, o, L.kindFinalizeFirst);
  s.parent = i;
  i = lit(b, hex64(b, i), L.root);
  s.root = i;
  i = lit(b, hex64(b, i), L.session);
  s.session = i;
  i = lit(b, hex64(b, i), L.size);
  if (i < 0 || b[i] === 0x2d || b[i] === 0x30) return -1;
  const end = scanInteger(b, i);
  if (end < 0 || b[end] !== 0x7d) return -1;
  s.timeStart = i;
  s.timeEnd = end;
  s.timeOrSize = digits(b, i, end);
  s.kind = 3;
  return end + 1;
}

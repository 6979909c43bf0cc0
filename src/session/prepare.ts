/**
 * Input checking for the write verbs. Everything arriving from a caller is
 * `unknown` until proven otherwise; every hash is recomputed here from the
 * received bytes. Nothing in this file throws on bad input: it returns a
 * `malformed-entry` rejection that says what is wrong.
 */
import {
  FAILURE_CLASSES,
  LIMITS,
  authoredHash,
  canonicalBytes,
  canonicalJson,
  utf8,
  checkSpec,
  frameRootOfDataText,
  isDigestHex,
  isFrameTime,
  isMember,
  isOrdinal,
  toBase64,
  toHex,
  tryCanonicalJson,
  turnClaimHash,
  type CanonicalObject,
  type CanonicalValue,
  type SessionSpec,
  type TurnClaim,
  type TurnEntry,
  type FrameEntry,
} from '../protocol/index.js';
import { canonicalEntryText, canonicalFrameText } from '../protocol/chain.js';
import { sha256 } from '../codec/sha256.js';
import type { Rejection } from './types.js';

/** A `malformed-entry` rejection with a message. */
export function malformed(message: string): Rejection {
  return { ok: false, diagnostic: 'malformed-entry', message };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A checked spec with its canonical text. */
export function prepareSpec(spec: unknown): { ok: true; spec: SessionSpec } | Rejection {
  const problem = checkSpec(spec);
  if (problem) return malformed(problem);
  const c = tryCanonicalJson(spec, { level: 2 });
  if (!c.ok) return malformed(`spec is not canonical JSON: ${c.problem.code} at ${c.problem.path || '/'}`);
  if (c.text.length > LIMITS.specBytes) return malformed(`spec exceeds ${LIMITS.specBytes} bytes`);
  return { ok: true, spec: JSON.parse(c.text) as SessionSpec };
}

/** A checked frame. */
export interface PreparedFrame {
  readonly sessionId: string;
  readonly ordinal: number;
  readonly time: number;
  readonly data?: CanonicalValue;
  /** The canonical text of `data` (level 2), computed once here: the frame root and the entry's bytes reuse it. */
  readonly dataText?: string;
  readonly parentHash?: string;
  readonly frameRoot: string;
}

/** Checks a frame input and computes its frame root. */
export function prepareFrame(input: unknown): { ok: true; frame: PreparedFrame } | Rejection {
  if (!isObject(input)) return malformed('frame input must be an object');
  const { sessionId, ordinal, time, data, parentHash } = input;
  if (!isDigestHex(sessionId)) return malformed('sessionId must be 64 lowercase hex');
  if (!isOrdinal(ordinal)) return malformed(`ordinal must be an integer from -1 to ${LIMITS.maxOrdinal}`);
  if (!isFrameTime(time)) return malformed('time must be a non-negative safe integer of epoch milliseconds');
  if (parentHash !== undefined && !isDigestHex(parentHash)) return malformed('parentHash must be 64 lowercase hex');
  let dataText: string | undefined;
  if (data !== undefined) {
    const c = tryCanonicalJson(data, { level: 2 });
    if (!c.ok) return malformed(`frame data is not canonical JSON: ${c.problem.code} at ${c.problem.path || '/'}`);
    if (c.text.length > LIMITS.entryBytes / 2) return malformed(`frame data exceeds ${LIMITS.entryBytes / 2} bytes`);
    dataText = c.text;
  }
  // isOrdinal and isFrameTime hold: safe integers, as frameRootOfDataText needs.
  const root = toHex(frameRootOfDataText(sha256, ordinal, time, dataText));
  const frame: PreparedFrame = {
    sessionId,
    ordinal,
    time,
    frameRoot: root,
    ...(data === undefined ? {} : { data: data as CanonicalValue, dataText: dataText! }),
    ...(parentHash === undefined ? {} : { parentHash }),
  };
  return { ok: true, frame };
}

/**
 * The canonical bytes of the frame entry a prepared frame makes: its session and parent are
 * checked lowercase hex, its frame root computed hex, ordinal and time safe integers, and its
 * data's canonical text is the one {@link prepareFrame} computed (the same bytes as
 * canonicalBytes(entry), without encoding the data again).
 */
export function frameEntryBytes(entry: FrameEntry, f: PreparedFrame): Uint8Array {
  return utf8(canonicalFrameText(entry, f.dataText));
}

/** A checked turn: its claim (for reconciliation), entry skeleton and bytes. */
export interface PreparedTurn {
  readonly claim: TurnClaim;
  /** The turn entry without a ruling. */
  readonly entry: TurnEntry;
  /** Authored bytes, when the body is authored. */
  readonly authored?: Uint8Array;
  /**
   * Canonical bytes of the claim, which are also the canonical bytes of the
   * entry while it carries no ruling (the claim IS the entry without `ruling`).
   */
  readonly claimBytes: Uint8Array;
}

/** Checks a turn input and recomputes its authored and claim hashes. */
export function prepareTurn(input: unknown): { ok: true; turn: PreparedTurn } | Rejection {
  if (!isObject(input)) return malformed('turn input must be an object');
  const { sessionId, ordinal, parentHash, frameRoot: root, body, claimHash } = input;
  if (!isDigestHex(sessionId)) return malformed('sessionId must be 64 lowercase hex');
  if (!isOrdinal(ordinal)) return malformed(`ordinal must be an integer from -1 to ${LIMITS.maxOrdinal}`);
  if (!isDigestHex(parentHash)) return malformed('parentHash must be 64 lowercase hex');
  if (!isDigestHex(root)) return malformed('frameRoot must be 64 lowercase hex');
  if (claimHash !== undefined && typeof claimHash !== 'string') return malformed('claimHash must be a string');
  if (!isObject(body)) return malformed('body must be an object');
  let entryBody: TurnEntry['body'];
  let claimBody: TurnClaim['body'];
  let authored: Uint8Array | undefined;
  let declaredAuthored: string | undefined;
  if (body['kind'] === 'authored') {
    const bytes = body['bytes'];
    if (!(bytes instanceof Uint8Array)) return malformed('body.bytes must be a Uint8Array');
    if (bytes.length > LIMITS.authoredBytes) return malformed(`authored body exceeds ${LIMITS.authoredBytes} bytes`);
    if (body['hash'] !== undefined && typeof body['hash'] !== 'string') return malformed('body.hash must be a string');
    authored = new Uint8Array(bytes); // a private copy: the caller may reuse its array
    const hash = toHex(authoredHash(sha256, authored));
    declaredAuthored = body['hash'] as string | undefined;
    entryBody = { kind: 'authored', bytes: base64Of(authored), hash };
    claimBody = { kind: 'authored', authoredHash: hash };
  } else if (body['kind'] === 'stand-down') {
    const fc = body['failureClass'];
    if (!isMember(FAILURE_CLASSES, fc)) return malformed(`body.failureClass must be one of ${FAILURE_CLASSES.join(', ')}`);
    entryBody = { kind: 'stand-down', failureClass: fc };
    claimBody = { kind: 'stand-down', failureClass: fc };
  } else {
    return malformed('body.kind must be "authored" or "stand-down"');
  }
  const entry: TurnEntry = { kind: 'turn', session: sessionId, ordinal, parent: parentHash, frameRoot: root, body: entryBody };
  // Every string of this entry is checked lowercase hex, standard base64 or a
  // failure-class name, so its canonical text can be written from the known
  // key order (the same bytes as canonicalBytes(entry), without the encoder).
  const claimBytes = utf8(canonicalEntryText(entry) ?? canonicalJson(entry as unknown as CanonicalObject));
  const claimHashHex = toHex(turnClaimHash(sha256, claimBytes));
  const declared: { claimHash?: string; authoredHash?: string } = {};
  if (claimHash !== undefined) declared.claimHash = claimHash;
  if (declaredAuthored !== undefined) declared.authoredHash = declaredAuthored;
  const claim: TurnClaim = {
    sessionId,
    ordinal,
    parentHash,
    frameRoot: root,
    body: claimBody,
    claimHash: claimHashHex,
    ...(claimHash !== undefined || declaredAuthored !== undefined ? { declared } : {}),
  };
  return { ok: true, turn: authored ? { claim, entry, authored, claimBytes } : { claim, entry, claimBytes } };
}

// Node's native base64 writes the same standard padded alphabet as the
// protocol's `toBase64` (RFC 4648 §4), natively: faster for large bodies.
// Where there is no Buffer (the audit page replays a day in a browser worker)
// the protocol's own encoder writes the same text.
type NodeBuffer = { from(b: ArrayBufferLike, offset: number, length: number): { toString(enc: 'base64'): string } };
const nodeBuffer = (globalThis as { Buffer?: NodeBuffer }).Buffer;
function base64Of(bytes: Uint8Array): string {
  return nodeBuffer ? nodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') : toBase64(bytes);
}

/** Claim hash of a turn entry (its ruling ignored). */
export function computeClaimHash(t: TurnEntry): string {
  const claim: TurnEntry = { kind: 'turn', session: t.session, ordinal: t.ordinal, parent: t.parent, frameRoot: t.frameRoot, body: t.body };
  return toHex(turnClaimHash(sha256, canonicalBytes(claim as unknown as CanonicalObject)));
}

/** Checks finalize artifacts. */
export function prepareArtifacts(artifacts: unknown): { ok: true; artifacts: CanonicalObject | undefined; text: string } | Rejection {
  if (artifacts === undefined) return { ok: true, artifacts: undefined, text: '{}' };
  if (!isObject(artifacts)) return malformed('artifacts must be an object');
  const c = tryCanonicalJson(artifacts, { level: 2 });
  if (!c.ok) return malformed(`artifacts are not canonical JSON: ${c.problem.code} at ${c.problem.path || '/'}`);
  if (c.text.length > LIMITS.entryBytes / 2) return malformed(`artifacts exceed ${LIMITS.entryBytes / 2} bytes`);
  // An empty object and no artifacts are the same seal: both omit the member.
  if (c.text === '{}') return { ok: true, artifacts: undefined, text: '{}' };
  return { ok: true, artifacts: JSON.parse(c.text) as CanonicalObject, text: c.text };
}

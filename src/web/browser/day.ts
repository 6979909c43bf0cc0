/**
 * The worker's state of the loaded day: the verified entry hashes (32 bytes
 * apiece in one array; the RFC 6962 tree over them for inclusion proofs is
 * built from them when a proof or root is first asked, `treeOf`), each
 * entry's byte offset (to re-read its bytes for a receipt), the bundle's
 * bytes, the pinned checkpoint, and the display rows not yet posted. Reset
 * for each day; a live day keeps growing it.
 */
import { MerkleLevels, fromHex, rfc6962Hasher, toHex, type ChainVerifier, type VerifiedEntry } from '../../protocol/index.js';
import { inspectLine } from '../../protocol/line.js';
import { sealedAuthorityOf, type SealedAuthority } from '../../payments/replay-ruler.js';
import { specSealsMandate } from '../../referee/replay-ruler.js';
import type { SessionCheckpoint } from '../../receipt/session/checkpoint-note.js';
import { sha256 } from './crypto.js';
import { rowOf, type Row } from './rows.js';

/** The day the worker holds. */
export interface Day {
  /** The tree over the first `tree.size` leaves: behind `leaves` until {@link treeOf} catches it up. */
  readonly tree: MerkleLevels;
  /** Entry `i`'s hash at `[32i, 32i + 32)` (grown by doubling). */
  leaves: Uint8Array;
  readonly offsets: number[];
  /** A failed day: the byte offset of each line from the first bad entry on (listed unverified). */
  readonly tail: number[];
  /** The bundle's bytes (a live day: the pieces fetched so far). */
  parts: Blob[];
  checkpoint: SessionCheckpoint | undefined;
  sealsMandate: boolean;
  /** What the genesis spec seals: the replay ruler is chosen from it (payments/replay-ruler.ts). */
  authority: SealedAuthority;
  requireSealed: boolean;
  /** Genesis hash (the session id) once seen. */
  sessionId: string | undefined;
  sealed: boolean;
  /** Rows verified but not yet posted to the page. */
  rows: Row[];
  nextOffset: number;
  frameTime: number | undefined;
}

/** A fresh day. */
export function newDay(requireSealed: boolean): Day {
  return { tree: new MerkleLevels(rfc6962Hasher(sha256)), leaves: new Uint8Array(32 * 1024), offsets: [], tail: [], parts: [], checkpoint: undefined, sealsMandate: false, authority: undefined, requireSealed, sessionId: undefined, sealed: false, rows: [], nextOffset: 0, frameTime: undefined };
}

/** Records verified entry `offsets.length`: its hash and where its line of `length` bytes starts. */
export function addLeaf(day: Day, hash: Uint8Array, length: number): void {
  const at = 32 * day.offsets.length;
  if (at + 32 > day.leaves.length) {
    const grown = new Uint8Array(2 * day.leaves.length);
    grown.set(day.leaves);
    day.leaves = grown;
  }
  day.leaves.set(hash, at);
  day.offsets.push(day.nextOffset);
  day.nextOffset += length + 1;
}

/** The day's tree over every verified entry (its levels built now for the leaves added since it was last asked). */
export function treeOf(day: Day): MerkleLevels {
  const t = day.tree;
  for (let i = t.size; i < day.offsets.length; i++) t.append(day.leaves.subarray(32 * i, 32 * i + 32));
  return t;
}

/** What the genesis line says of the day: the spec's seals, and the session id (its hash). */
function noteGenesis(day: Day, spec: Parameters<typeof specSealsMandate>[0], hash: string): void {
  day.sealsMandate = specSealsMandate(spec);
  day.authority = sealedAuthorityOf(spec);
  day.sessionId = hash;
}

/** Records one verified entry and its display row (the chain verifier's `onEntry`: a live day). */
export function collect(day: Day, e: VerifiedEntry, line: Uint8Array): void {
  addLeaf(day, fromHex(e.hash), line.length);
  if (e.entry.kind === 'frame') day.frameTime = e.entry.time;
  else if (e.entry.kind === 'genesis') noteGenesis(day, e.entry.spec, e.hash);
  else if (e.entry.kind === 'finalize') day.sealed = true;
  day.rows.push(rowOf(e.index, e.hash, line.length, e.entry, day.frameTime));
}

/**
 * Records one accepted line without its entry or row (the verdict-only
 * path's `onAccepted`: a loaded day, whose rows the rows worker builds). The
 * genesis, which the verifier has just accepted, is read by the one line rule
 * for its spec; the seal is the verdict's.
 */
export function collectLeaf(day: Day, line: Uint8Array, v: ChainVerifier): void {
  const hash = v.headView();
  addLeaf(day, hash, line.length);
  if (v.isSealed) day.sealed = true;
  if (v.size !== 1) return;
  const g = inspectLine(sha256, line);
  if (g.ok && g.entry.kind === 'genesis') noteGenesis(day, g.entry.spec, toHex(hash));
}

/** The rows not yet posted (and forgets them). */
export function takeRows(day: Day): Row[] {
  const rows = day.rows;
  day.rows = [];
  return rows;
}

/** The bundle bytes held so far. */
export function bundleOf(day: Day): Blob {
  return new Blob(day.parts);
}

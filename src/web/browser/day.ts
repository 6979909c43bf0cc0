/**
 * The worker's state of the loaded day: the RFC 6962 tree of verified entry
 * hashes (inclusion proofs), each entry's byte offset (to re-read its bytes
 * for a receipt), the bundle's bytes, the pinned checkpoint, and the display
 * rows not yet posted. Reset for each day; a live day keeps growing it.
 */
import { MerkleLevels, fromHex, rfc6962Hasher, type VerifiedEntry } from '../../protocol/index.js';
import { sealedAuthorityOf, type SealedAuthority } from '../../payments/replay-ruler.js';
import { specSealsMandate } from '../../referee/replay-ruler.js';
import type { SessionCheckpoint } from '../../receipt/session/checkpoint-note.js';
import { sha256 } from './crypto.js';
import { rowOf, type Row } from './rows.js';

/** The day the worker holds. */
export interface Day {
  readonly tree: MerkleLevels;
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
  return { tree: new MerkleLevels(rfc6962Hasher(sha256)), offsets: [], tail: [], parts: [], checkpoint: undefined, sealsMandate: false, authority: undefined, requireSealed, sessionId: undefined, sealed: false, rows: [], nextOffset: 0, frameTime: undefined };
}

/** Records one verified entry (the chain verifier's `onEntry`). */
export function collect(day: Day, e: VerifiedEntry, line: Uint8Array): void {
  day.tree.append(fromHex(e.hash));
  day.offsets.push(day.nextOffset);
  day.nextOffset += line.length + 1;
  if (e.entry.kind === 'frame') day.frameTime = e.entry.time;
  else if (e.entry.kind === 'genesis') {
    day.sealsMandate = specSealsMandate(e.entry.spec);
    day.authority = sealedAuthorityOf(e.entry.spec);
    day.sessionId = e.hash;
  } else if (e.entry.kind === 'finalize') day.sealed = true;
  day.rows.push(rowOf(e.index, e.hash, line.length, e.entry, day.frameTime));
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

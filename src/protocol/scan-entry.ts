/**
 * The entry a line proven by scanLine (scan.ts) holds, built from the scan's
 * spans: the same object, with the same members in the same order, that the
 * reference (`JSON.parse` of the line, then `parseEntry`) gives. Only callers
 * that want the entry (a verifier's `onEntry`) pay for it.
 */
import type { CanonicalObject, CanonicalValue } from './canonical.js';
import type { Entry, FinalizeEntry, FrameEntry, TurnEntry } from './entries.js';
import type { LineScan } from './scan.js';
import type { FailureClass } from './vocabulary.js';

// Digests, base64 and the failure class are ASCII, which latin1 decodes one byte per character.
const ascii = new TextDecoder('latin1');
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const hexAt = (b: Uint8Array, at: number): string => ascii.decode(b.subarray(at, at + 64));
/** A proven canonical member value (its text is well-formed UTF-8 JSON). */
const memberOf = (b: Uint8Array, s: LineScan): unknown => JSON.parse(utf8.decode(b.subarray(s.memberStart, s.memberEnd)));

/** The entry of a line for which `scanLine(line, s)` returned true. */
export function entryOfScan(b: Uint8Array, s: LineScan): Entry {
  const session = hexAt(b, s.session);
  const parent = hexAt(b, s.parent);
  const root = hexAt(b, s.root);
  if (s.kind === 1) {
    const head = s.memberStart < 0 ? {} : { data: memberOf(b, s) as CanonicalValue };
    return { ...head, frameRoot: root, kind: 'frame', ordinal: s.ordinal, parent, session, time: s.timeOrSize } as FrameEntry;
  }
  if (s.kind === 2) {
    const body =
      s.body === 1
        ? { bytes: ascii.decode(b.subarray(s.bytesStart, s.bytesEnd)), hash: hexAt(b, s.hashAt), kind: 'authored' as const }
        : { failureClass: ascii.decode(b.subarray(s.bytesStart, s.bytesEnd)) as FailureClass, kind: 'stand-down' as const };
    const ruling = s.memberStart < 0 ? {} : { ruling: memberOf(b, s) as CanonicalObject };
    return { body, frameRoot: root, kind: 'turn', ordinal: s.ordinal, parent, ...ruling, session } as TurnEntry;
  }
  const artifacts = s.memberStart < 0 ? {} : { artifacts: memberOf(b, s) as CanonicalObject };
  return { ...artifacts, kind: 'finalize', parent, root, session, size: s.timeOrSize } as FinalizeEntry;
}

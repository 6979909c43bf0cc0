/** The engine's rows: entries as stored rows and back, and the refusals of a turn. */
import { canonicalBytes, entryHash, parseEntry, toHex, utf8 as utf8Bytes, type CanonicalObject, type Entry, type TurnEntry } from '../protocol/index.js';
import { canonicalEntryText } from '../protocol/chain.js';
import { sha256 } from '../codec/sha256.js';
import type { StoredEntry } from '../store/types.js';
import { StoreCorruptionError } from './errors.js';
import type { PreparedTurn } from './prepare.js';
import type { Rejection } from './types.js';

// Stateless between calls (no `stream`): one decoder serves every row.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A typed refusal: nothing was written. */
export function reject(diagnostic: Rejection['diagnostic'], message: string): Rejection {
  return { ok: false, diagnostic, message };
}

/** A stored row for `entry` and its leaf hash bytes (the row's `hash` as bytes). */
export interface Row {
  readonly s: StoredEntry;
  readonly leaf: Uint8Array;
  /** The entry whose canonical bytes are `s.bytes`. */
  readonly entry: Entry;
}

/** `bytes`, when given, MUST be the canonical bytes of `entry` (the caller already encoded it). */
export function stored(index: number, entry: Entry, bytes: Uint8Array = canonicalBytes(entry as unknown as CanonicalObject)): Row {
  const leaf = entryHash(sha256, bytes);
  const hash = toHex(leaf);
  const ordinal = entry.kind === 'frame' || entry.kind === 'turn' ? entry.ordinal : undefined;
  const s: StoredEntry = ordinal === undefined ? { index, hash, bytes, kind: entry.kind } : { index, hash, bytes, kind: entry.kind, ordinal };
  return { s, leaf, entry };
}

/**
 * The row of a turn entry the engine built (its strings checked hex and base64, from a prepared
 * turn) with a ruling: written from the entry's known key order, the ruling through the
 * canonical encoder (the same bytes as canonicalBytes(entry); that one names a bad ruling).
 */
export function rulingRow(index: number, entry: TurnEntry): Row {
  const text = canonicalEntryText(entry);
  return text === undefined ? stored(index, entry) : stored(index, entry, utf8Bytes(text));
}

/** A stored row as an entry; a row that is not bytes, not its hash, or not an entry is {@link StoreCorruptionError}. */
export function decode(e: StoredEntry, sessionId: string): Entry {
  if (!((e.bytes as unknown) instanceof Uint8Array)) throw new StoreCorruptionError(sessionId, e.index, 'stored bytes are not a byte string');
  if (toHex(entryHash(sha256, e.bytes)) !== e.hash) throw new StoreCorruptionError(sessionId, e.index, 'stored hash is not the hash of the stored bytes');
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(e.bytes));
  } catch {
    throw new StoreCorruptionError(sessionId, e.index, 'not-json: entry is not JSON');
  }
  const r = parseEntry(value);
  if (!r.ok) throw new StoreCorruptionError(sessionId, e.index, r.reason);
  return r.entry;
}

/** The slot a prepared turn claims. */
export function slotOf(t: PreparedTurn): { sessionId: string; ordinal: number; parentHash: string; frameRoot: string } {
  return { sessionId: t.claim.sessionId, ordinal: t.claim.ordinal, parentHash: t.claim.parentHash, frameRoot: t.claim.frameRoot };
}

/** The message of a turn's refusal in its slot. */
export function turnMessage(d: Rejection['diagnostic'], ordinal: number): string {
  switch (d) {
    case 'turn-conflict':
      return `slot ${ordinal} already holds a different turn; nothing was written`;
    case 'stale-frame':
      return `the turn answers another frame than the one delivered for slot ${ordinal}`;
    case 'broken-chain':
      return `the turn does not continue the chain at slot ${ordinal} (wrong ordinal or parentHash)`;
    default:
      return d;
  }
}

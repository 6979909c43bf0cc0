/**
 * The row shapes the two SQL stores share (same column names in SQLite and
 * PostgreSQL) and their mapping to the store contract's types.
 */
import type { NonceOwner, StoredEntry } from './types.js';

/** A row of `entries`. */
export interface EntryRow {
  readonly idx: number;
  readonly hash: string;
  readonly kind: StoredEntry['kind'];
  readonly ordinal: number | null;
  readonly bytes: Buffer;
}

/** A row of `nonces` naming its first owner. */
export interface OwnerRow {
  readonly intent_hash: string;
  readonly session_id: string;
  readonly idx: number;
}

/** An entry row as a {@link StoredEntry} (its own copy of the bytes). */
export function toEntry(r: EntryRow): StoredEntry {
  const bytes = new Uint8Array(r.bytes);
  return r.ordinal === null ? { index: r.idx, hash: r.hash, bytes, kind: r.kind } : { index: r.idx, hash: r.hash, bytes, kind: r.kind, ordinal: r.ordinal };
}

/** A nonce row as a {@link NonceOwner}. */
export function toOwner(r: OwnerRow): NonceOwner {
  return { intentHash: r.intent_hash, sessionId: r.session_id, index: r.idx };
}

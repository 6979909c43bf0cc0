/**
 * The row shapes the two SQL stores share (same column names in SQLite and
 * PostgreSQL) and their mapping to the store contract's types.
 */
import type { NonceOwner, SignedCheckpointRecord, StoredEntry } from './types.js';

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

/** A row of `signed_checkpoints` (the signing log). */
export interface SignedRow {
  readonly origin: string;
  readonly size: number | string;
  readonly root: string;
  readonly signed_at: number | string;
}

/** A signing-log row as a {@link SignedCheckpointRecord} (PostgreSQL returns bigint as text). */
export function toSigned(r: SignedRow): SignedCheckpointRecord {
  return { origin: r.origin, size: Number(r.size), root: r.root, signedAt: Number(r.signed_at) };
}

/** A signing-log row with its position columns (SQLite migration 7, PostgreSQL migration 11). */
export interface PositionedRow extends SignedRow {
  readonly db_system: string | null;
  readonly db_timeline: number | string | null;
  readonly db_lsn: string | number | null;
}

/** A stamped row as a record (with `position` when it has one). */
export function toPositioned(r: PositionedRow): SignedCheckpointRecord {
  const base = toSigned(r);
  return r.db_system === null || r.db_timeline === null || r.db_lsn === null ? base : { ...base, position: { system: r.db_system, timeline: Number(r.db_timeline), lsn: String(r.db_lsn) } };
}

/** Refuses a malformed record before it reaches a database (misuse, not a result). */
export function checkSignedRecord(r: SignedCheckpointRecord, misuse: (message: string) => Error): void {
  if (typeof r !== 'object' || r === null) throw misuse('recordCheckpoint needs a record.');
  if (typeof r.origin !== 'string' || r.origin === '' || r.origin.includes('\n')) throw misuse('A signed checkpoint origin must be a non-empty line.');
  if (!Number.isSafeInteger(r.size) || r.size < 1) throw misuse('A signed checkpoint size must be a positive safe integer.');
  if (typeof r.root !== 'string' || !/^[0-9a-f]{64}$/.test(r.root)) throw misuse('A signed checkpoint root must be 64 lowercase hex.');
  if (!Number.isSafeInteger(r.signedAt) || r.signedAt < 0) throw misuse('signedAt must be epoch milliseconds.');
}

/** True when `latest` is what the signer `expected` (both absent, or the same size and root). */
export function isExpectedLatest(latest: SignedCheckpointRecord | undefined, expected: { readonly size: number; readonly root: string } | undefined): boolean {
  if (latest === undefined || expected === undefined) return latest === expected;
  return latest.size === expected.size && latest.root === expected.root;
}

/**
 * The witness's durable state: per checkpoint origin, the latest (size, root)
 * it cosigned, and the log keys it trusts.
 *
 * Contract every implementation MUST keep:
 * - `compareAndSwap` is atomic: it replaces the record of `origin` by `next`
 *   only if the stored record is still exactly `expected` (same size and
 *   root; `undefined` = no record), and returns whether it did. Two racing
 *   swaps from the same `expected` MUST NOT both succeed (the C2SP tlog-witness
 *   rollback race), also across processes sharing the database.
 * - When `compareAndSwap` resolves `true`, the new record is durable (it
 *   survives a kill -9 of the process and a power cut on the implementation's
 *   terms: SQLite WAL with synchronous=FULL, PostgreSQL commit).
 * - A stored size never decreases; the store does not check this itself — the
 *   witness only ever swaps forward — but MUST NOT reorder or merge swaps.
 */

/** The latest cosigned state of one origin. */
export interface WitnessRecord {
  /** Tree size the witness cosigned. */
  readonly size: number;
  /** Root hash at that size (32 bytes). */
  readonly root: Uint8Array;
  /** The checkpoint as submitted (signed by the log), kept as evidence. */
  readonly signedCheckpoint: string;
  /** Cosignature time (POSIX seconds). */
  readonly time: number;
}

/** The part of a record a swap compares. */
export interface WitnessHead {
  readonly size: number;
  readonly root: Uint8Array;
}

/** Where a witness keeps its state. */
export interface WitnessStore {
  /** Human-readable description (no credentials). */
  readonly name: string;
  /** The latest cosigned record of `origin`, if any. */
  latest(origin: string): Promise<WitnessRecord | undefined>;
  /** Atomically replaces `expected` by `next` (see the contract above). */
  compareAndSwap(origin: string, expected: WitnessHead | undefined, next: WitnessRecord): Promise<boolean>;
  /** The trusted log verifier keys (`name+keyid+base64`), in the order added. */
  logKeys(): Promise<string[]>;
  /** Adds a trusted log verifier key (idempotent). */
  addLogKey(vkey: string): Promise<void>;
  /** Releases the database. */
  close(): Promise<void>;
}

/** Byte equality of two roots (the protocol's `bytesEqual`). */
export { bytesEqual as sameRoot } from '../../protocol/hex.js';

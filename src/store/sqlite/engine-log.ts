/**
 * The SQLite store's engine log (table `engine_log`, migration 6): the next
 * position is `MAX(seq) + 1`, taken inside the caller's write transaction
 * (BEGIN IMMEDIATE holds the database's one write lock), so two processes
 * never take one position and a rolled-back transaction leaves no gap.
 */
import type Database from 'better-sqlite3';

/** The engine-log statements of one SQLite connection. */
export class EngineLogStatements {
  readonly #append: Database.Statement<[Buffer]>;
  readonly #size: Database.Statement<[], { n: number | null }>;
  readonly #range: Database.Statement<[number, number], { leaf: Buffer }>;

  /** Prepares the statements on `db` (already migrated). */
  constructor(db: Database.Database) {
    this.#append = db.prepare('INSERT INTO engine_log (seq, leaf) VALUES ((SELECT COALESCE(MAX(seq) + 1, 0) FROM engine_log), ?)');
    this.#size = db.prepare('SELECT MAX(seq) + 1 AS n FROM engine_log');
    this.#range = db.prepare('SELECT leaf FROM engine_log WHERE seq >= ? AND seq < ? ORDER BY seq');
  }

  /** Appends `leaf` at the next position; call only inside a write transaction. */
  append(leaf: Uint8Array): void {
    this.#append.run(Buffer.from(leaf.buffer, leaf.byteOffset, leaf.byteLength));
  }

  /** Number of leaves. */
  size(): number {
    return this.#size.get()?.n ?? 0;
  }

  /** Leaves `from <= seq < to`, in order. */
  range(from: number, to: number): Uint8Array[] {
    return this.#range.all(from, to).map((r) => new Uint8Array(r.leaf));
  }
}

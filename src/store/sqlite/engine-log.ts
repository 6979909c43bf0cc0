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
  readonly #tileCounts: Database.Statement<[], { level: number; n: number }>;
  readonly #tiles: Database.Statement<[number, number, number], { hashes: Buffer }>;
  readonly #putTile: Database.Statement<[number, number, Buffer]>;
  readonly #claimKey: Database.Statement<[string, string]>;
  readonly #key: Database.Statement<[], { origin: string; verifier_key: string }>;

  /** Prepares the statements on `db` (already migrated). */
  constructor(db: Database.Database) {
    this.#append = db.prepare('INSERT INTO engine_log (seq, leaf) VALUES ((SELECT COALESCE(MAX(seq) + 1, 0) FROM engine_log), ?)');
    this.#size = db.prepare('SELECT MAX(seq) + 1 AS n FROM engine_log');
    this.#range = db.prepare('SELECT leaf FROM engine_log WHERE seq >= ? AND seq < ? ORDER BY seq');
    this.#tileCounts = db.prepare('SELECT level, MAX(idx) + 1 AS n FROM engine_log_tiles GROUP BY level ORDER BY level');
    this.#tiles = db.prepare('SELECT hashes FROM engine_log_tiles WHERE level = ? AND idx >= ? AND idx < ? ORDER BY idx');
    this.#putTile = db.prepare('INSERT OR IGNORE INTO engine_log_tiles (level, idx, hashes) VALUES (?, ?, ?)');
    this.#claimKey = db.prepare('INSERT OR IGNORE INTO engine_log_key (one, origin, verifier_key) VALUES (1, ?, ?)');
    this.#key = db.prepare('SELECT origin, verifier_key FROM engine_log_key WHERE one = 1');
  }

  /** Records the log key unless one is recorded; answers the one recorded. */
  claimKey(origin: string, verifierKey: string): { origin: string; verifierKey: string } {
    this.#claimKey.run(origin, verifierKey);
    const r = this.#key.get();
    if (!r) throw new Error('the engine log key is missing right after it was written');
    return { origin: r.origin, verifierKey: r.verifier_key };
  }

  /** Appends `leaf` at the next position; call only inside a write transaction. */
  append(leaf: Uint8Array): void {
    this.#append.run(Buffer.from(leaf.buffer, leaf.byteOffset, leaf.byteLength));
  }

  /** Number of leaves. */
  size(): number {
    return this.#size.get()?.n ?? 0;
  }

  /** Stored full tiles per level: `MAX(idx) + 1` at each level, 0 for a level with none. */
  tileCounts(): number[] {
    const out: number[] = [];
    for (const r of this.#tileCounts.all()) {
      while (out.length < r.level) out.push(0);
      out[r.level] = r.n;
    }
    return out;
  }

  /** Full tiles of `level` with `from <= idx < to`, in order. */
  tiles(level: number, from: number, to: number): Uint8Array[] {
    return this.#tiles.all(level, from, to).map((r) => new Uint8Array(r.hashes));
  }

  /** Writes the tile unless one is stored at (level, idx); answers the stored bytes. */
  putTile(level: number, idx: number, hashes: Uint8Array): Uint8Array {
    this.#putTile.run(level, idx, Buffer.from(hashes.buffer, hashes.byteOffset, hashes.byteLength));
    const got = this.tiles(level, idx, idx + 1)[0];
    if (!got) throw new Error(`engine log tile ${level}/${idx} is missing right after it was written`);
    return got;
  }

  /** Leaves `from <= seq < to`, in order. */
  range(from: number, to: number): Uint8Array[] {
    return this.#range.all(from, to).map((r) => new Uint8Array(r.leaf));
  }
}

/**
 * The PostgreSQL store's engine log (migration 10): `engine_log` holds the
 * leaves by position, `engine_log_head` one row with the number of leaves.
 * A leaf takes its position by incrementing that row inside the transaction
 * (or statement) that writes what it records: the row lock orders every
 * process sharing the schema, a transaction that rolls back gives its
 * position back, and one that commits later than another took a later
 * position — so readers never see a gap, and there is one order.
 */
import type pg from 'pg';

/** Migration 9: the engine log and its head row; append-only (the head only counts up). */
export const POSTGRES_V10_SQL = (s: string): string => `
CREATE TABLE ${s}.engine_log (
  seq  bigint PRIMARY KEY CHECK (seq >= 0),
  leaf bytea  NOT NULL CHECK (length(leaf) BETWEEN 1 AND 65535)
);
CREATE TABLE ${s}.engine_log_head (
  one  boolean PRIMARY KEY DEFAULT true CHECK (one),
  size bigint  NOT NULL CHECK (size >= 0)
);
INSERT INTO ${s}.engine_log_head (one, size) VALUES (true, 0);
CREATE FUNCTION ${s}.tally_engine_log_counts_up() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF NEW.size <> OLD.size + 1 THEN RAISE EXCEPTION 'tally: the engine log only grows by one leaf at a time'; END IF;
  RETURN NEW;
END
$fn$;
CREATE TRIGGER engine_log_immutable BEFORE UPDATE OR DELETE ON ${s}.engine_log
  FOR EACH ROW EXECUTE FUNCTION ${s}.tally_refuse_change();
CREATE TRIGGER engine_log_no_truncate BEFORE TRUNCATE ON ${s}.engine_log
  FOR EACH STATEMENT EXECUTE FUNCTION ${s}.tally_refuse_change();
CREATE TRIGGER engine_log_head_counts_up BEFORE UPDATE ON ${s}.engine_log_head
  FOR EACH ROW EXECUTE FUNCTION ${s}.tally_engine_log_counts_up();
CREATE TRIGGER engine_log_head_no_delete BEFORE DELETE ON ${s}.engine_log_head
  FOR EACH ROW EXECUTE FUNCTION ${s}.tally_refuse_change();
CREATE TRIGGER engine_log_head_no_truncate BEFORE TRUNCATE ON ${s}.engine_log_head
  FOR EACH STATEMENT EXECUTE FUNCTION ${s}.tally_refuse_change();
`;

/**
 * Migration 12: the engine log's full hash tiles (256 hashes of 32 bytes),
 * written once each is complete so an engine starts from them and the
 * leaves after them. Derived data, written with ON CONFLICT DO NOTHING and
 * compared by the writer (a difference is refused, never overwritten);
 * append-only.
 */
export const POSTGRES_V12_SQL = (s: string): string => `
CREATE TABLE ${s}.engine_log_tiles (
  level  smallint NOT NULL CHECK (level BETWEEN 0 AND 63),
  idx    bigint   NOT NULL CHECK (idx >= 0),
  hashes bytea    NOT NULL CHECK (length(hashes) = 8192),
  PRIMARY KEY (level, idx)
);
CREATE TRIGGER engine_log_tiles_immutable BEFORE UPDATE OR DELETE ON ${s}.engine_log_tiles
  FOR EACH ROW EXECUTE FUNCTION ${s}.tally_refuse_change();
CREATE TRIGGER engine_log_tiles_no_truncate BEFORE TRUNCATE ON ${s}.engine_log_tiles
  FOR EACH STATEMENT EXECUTE FUNCTION ${s}.tally_refuse_change();
`;

/** Migration 13: the engine log's key, recorded once by the first engine log that opens the schema (§15.3). */
export const POSTGRES_V13_SQL = (s: string): string => `
CREATE TABLE ${s}.engine_log_key (
  one          boolean PRIMARY KEY DEFAULT true CHECK (one),
  origin       text    NOT NULL,
  verifier_key text    NOT NULL
);
CREATE TRIGGER engine_log_key_immutable BEFORE UPDATE OR DELETE ON ${s}.engine_log_key
  FOR EACH ROW EXECUTE FUNCTION ${s}.tally_refuse_change();
CREATE TRIGGER engine_log_key_no_truncate BEFORE TRUNCATE ON ${s}.engine_log_key
  FOR EACH STATEMENT EXECUTE FUNCTION ${s}.tally_refuse_change();
`;

/** The engine-log statements of a schema (`s` already escaped). */
export interface EngineLogSql {
  /** Appends `$1` at the next position (inside a transaction). */
  readonly append: string;
  /** CTE members to add to the create-session statement: `$leaf` is appended when the session row `s` was inserted. */
  readonly createMembers: (leafParam: string) => string;
  readonly size: string;
  readonly range: string;
  readonly tileCounts: string;
  readonly tiles: string;
  /** Inserts tile ($1 level, $2 idx, $3 hashes) unless one is stored, and answers the stored bytes. */
  readonly putTile: string;
  /** Inserts the log key ($1 origin, $2 verifier key) unless one is recorded, and answers the recorded one. */
  readonly claimKey: string;
}

/** The statements of schema `s`. */
export function engineLogSql(s: string): EngineLogSql {
  const bump = (cond: string) => `UPDATE ${s}.engine_log_head SET size = size + 1 WHERE ${cond} RETURNING size - 1 AS seq`;
  return {
    append: `WITH h AS (${bump('true')}) INSERT INTO ${s}.engine_log (seq, leaf) SELECT seq, $1 FROM h`,
    createMembers: (p) => `, h AS (${bump(`${p}::bytea IS NOT NULL AND EXISTS (SELECT 1 FROM s)`)}), l AS (INSERT INTO ${s}.engine_log (seq, leaf) SELECT seq, ${p} FROM h RETURNING 1)`,
    size: `SELECT size FROM ${s}.engine_log_head`,
    range: `SELECT leaf FROM ${s}.engine_log WHERE seq >= $1 AND seq < $2 ORDER BY seq`,
    tileCounts: `SELECT level, MAX(idx) + 1 AS n FROM ${s}.engine_log_tiles GROUP BY level ORDER BY level`,
    tiles: `SELECT hashes FROM ${s}.engine_log_tiles WHERE level = $1 AND idx >= $2 AND idx < $3 ORDER BY idx`,
    putTile: `WITH i AS (INSERT INTO ${s}.engine_log_tiles (level, idx, hashes) VALUES ($1, $2, $3) ON CONFLICT (level, idx) DO NOTHING RETURNING hashes)
      SELECT hashes FROM i UNION ALL SELECT hashes FROM ${s}.engine_log_tiles WHERE level = $1 AND idx = $2 AND NOT EXISTS (SELECT 1 FROM i)`,
    claimKey: `WITH i AS (INSERT INTO ${s}.engine_log_key (one, origin, verifier_key) VALUES (true, $1, $2) ON CONFLICT (one) DO NOTHING RETURNING origin, verifier_key)
      SELECT origin, verifier_key FROM i UNION ALL SELECT origin, verifier_key FROM ${s}.engine_log_key WHERE NOT EXISTS (SELECT 1 FROM i)`,
  };
}

/** Appends `leaf` at the next position on `c`, inside its open transaction. */
export async function appendLeaf(c: pg.PoolClient, sql: EngineLogSql, leaf: Uint8Array): Promise<void> {
  const r = await c.query(sql.append, [Buffer.from(leaf.buffer, leaf.byteOffset, leaf.byteLength)]);
  if (r.rowCount !== 1) throw new Error('the engine log head row is missing');
}

import { SQLITE_V7_SQL } from './continuity.js';

/**
 * The numbered schema migrations of the SQLite store. A migration, once
 * released, is NEVER edited: its SQL is kept verbatim so a database written by
 * any earlier release can be brought forward (tests/store/sqlite-migrate
 * opens a committed version-1 file with the current code). Add a new number
 * instead.
 *
 * Layout: every key of `entries` starts with the session id; `nonces` is the
 * one table shared by all sessions, keyed by `(agent_id, nonce)` (the column
 * holds a reservation key: `<signer> <agent_id>` for an intent's nonce since
 * version 5).
 */

/** One numbered migration. */
export interface SqliteMigration {
  /** 1, 2, 3, … with no gaps; recorded in `tally_schema`. */
  readonly version: number;
  /** What the migration does, recorded beside the version. */
  readonly name: string;
  /** The statements, run in one `BEGIN IMMEDIATE` transaction. */
  readonly sql: string;
}

/** Version 1: sessions, entries (with unique frame/turn slots) and nonce reservations. */
export const SQLITE_V1_SQL = `
CREATE TABLE sessions (
  seq      INTEGER PRIMARY KEY AUTOINCREMENT,
  id       TEXT    NOT NULL UNIQUE,
  size     INTEGER NOT NULL CHECK (size >= 1),
  head     TEXT    NOT NULL,
  frontier TEXT    NOT NULL,
  phase    TEXT    NOT NULL CHECK (phase IN ('awaiting-frame', 'pending', 'sealed'))
);
CREATE TABLE entries (
  session_id TEXT    NOT NULL REFERENCES sessions (id),
  idx        INTEGER NOT NULL CHECK (idx >= 0),
  hash       TEXT    NOT NULL,
  kind       TEXT    NOT NULL CHECK (kind IN ('genesis', 'frame', 'turn', 'finalize')),
  ordinal    INTEGER,
  bytes      BLOB    NOT NULL,
  PRIMARY KEY (session_id, idx)
) WITHOUT ROWID;
CREATE UNIQUE INDEX entries_slot ON entries (session_id, kind, ordinal) WHERE ordinal IS NOT NULL;
CREATE TABLE nonces (
  agent_id    TEXT    NOT NULL,
  nonce       TEXT    NOT NULL,
  intent_hash TEXT    NOT NULL,
  session_id  TEXT    NOT NULL,
  idx         INTEGER NOT NULL,
  PRIMARY KEY (agent_id, nonce)
) WITHOUT ROWID;
`;

/**
 * Version 2: the database itself refuses to change history. Entries and
 * nonce reservations can be neither updated nor deleted, and a sealed
 * session's head can no longer move. (Defence in depth: the engine re-derives
 * every hash on load anyway, so a tamperer who drops these triggers is still
 * caught, by entry index.)
 */
export const SQLITE_V2_SQL = `
CREATE TRIGGER entries_immutable_update BEFORE UPDATE ON entries
BEGIN SELECT RAISE(ABORT, 'tally: entries are immutable'); END;
CREATE TRIGGER entries_immutable_delete BEFORE DELETE ON entries
BEGIN SELECT RAISE(ABORT, 'tally: entries are immutable'); END;
CREATE TRIGGER nonces_immutable_update BEFORE UPDATE ON nonces
BEGIN SELECT RAISE(ABORT, 'tally: nonce reservations are immutable'); END;
CREATE TRIGGER nonces_immutable_delete BEFORE DELETE ON nonces
BEGIN SELECT RAISE(ABORT, 'tally: nonce reservations are immutable'); END;
CREATE TRIGGER sessions_sealed_update BEFORE UPDATE ON sessions WHEN OLD.phase = 'sealed'
BEGIN SELECT RAISE(ABORT, 'tally: a sealed session is immutable'); END;
CREATE TRIGGER sessions_no_delete BEFORE DELETE ON sessions
BEGIN SELECT RAISE(ABORT, 'tally: sessions are never deleted'); END;
`;

/**
 * Version 3: the engine's signing log — every checkpoint the engine key has
 * signed from this database, one row per (origin, size). The primary key is
 * what makes two signers of one database unable to sign two roots for one
 * (origin, size); the triggers keep the log append-only.
 */
export const SQLITE_V3_SQL = `
CREATE TABLE signed_checkpoints (
  origin    TEXT    NOT NULL,
  size      INTEGER NOT NULL CHECK (size >= 1),
  root      TEXT    NOT NULL CHECK (length(root) = 64),
  signed_at INTEGER NOT NULL,
  PRIMARY KEY (origin, size)
) WITHOUT ROWID;
CREATE TRIGGER signed_checkpoints_immutable_update BEFORE UPDATE ON signed_checkpoints
BEGIN SELECT RAISE(ABORT, 'tally: the signing log is append-only'); END;
CREATE TRIGGER signed_checkpoints_immutable_delete BEFORE DELETE ON signed_checkpoints
BEGIN SELECT RAISE(ABORT, 'tally: the signing log is append-only'); END;
`;

/**
 * Version 4: witness cosignatures the engine collected for its signed
 * checkpoints (one per origin, size and witness), and the sizes each witness
 * cosigned (its latest is the largest), so a restarted engine serves them and
 * submits with the right consistency proof. Insert-only, like the signing log.
 */
export const SQLITE_V4_SQL = `
CREATE TABLE cosignatures (
  origin  TEXT    NOT NULL,
  size    INTEGER NOT NULL CHECK (size >= 1),
  root    TEXT    NOT NULL CHECK (length(root) = 64),
  witness TEXT    NOT NULL,
  line    TEXT    NOT NULL,
  PRIMARY KEY (origin, size, witness)
) WITHOUT ROWID;
CREATE TABLE witness_sizes (
  witness TEXT    NOT NULL,
  origin  TEXT    NOT NULL,
  size    INTEGER NOT NULL CHECK (size >= 0),
  PRIMARY KEY (witness, origin, size)
) WITHOUT ROWID;
CREATE TRIGGER cosignatures_immutable_update BEFORE UPDATE ON cosignatures
BEGIN SELECT RAISE(ABORT, 'tally: collected cosignatures are append-only'); END;
CREATE TRIGGER cosignatures_immutable_delete BEFORE DELETE ON cosignatures
BEGIN SELECT RAISE(ABORT, 'tally: collected cosignatures are append-only'); END;
CREATE TRIGGER witness_sizes_immutable_update BEFORE UPDATE ON witness_sizes
BEGIN SELECT RAISE(ABORT, 'tally: witness sizes are append-only'); END;
CREATE TRIGGER witness_sizes_immutable_delete BEFORE DELETE ON witness_sizes
BEGIN SELECT RAISE(ABORT, 'tally: witness sizes are append-only'); END;
`;

/**
 * Version 5: reservations keyed by what authenticates them. Releases before
 * it keyed an intent's nonce by its `agent_id` name, and a judge-rate window
 * by `judge-rate <window_ms> <agent_id>`; this release keys them by the
 * agent's registered signer (`<signer> <agent_id>`, and the wallet's window
 * `judge-wallet <window_ms> <signer>`), read from the `spec.agents` of the
 * genesis of the session that made the reservation. Every name-keyed row is
 * copied under its new key with the same owner, so a nonce used before the
 * upgrade stays used after it and a window's slots stay taken; rows are
 * never changed or deleted (the old rows remain, and nothing reads them).
 * Two names of one signer that took the same slot of a window collapse
 * into one (the union of two slot prefixes is the longer prefix).
 */
export const SQLITE_V5_SQL = `
INSERT OR IGNORE INTO nonces (agent_id, nonce, intent_hash, session_id, idx)
  SELECT lower(a.value) || ' ' || n.agent_id, n.nonce, n.intent_hash, n.session_id, n.idx
  FROM nonces n
  JOIN entries g ON g.session_id = n.session_id AND g.idx = 0
  JOIN json_each(CAST(g.bytes AS TEXT), '$.spec.agents') a ON a.key = n.agent_id
  WHERE instr(n.agent_id, ' ') = 0 AND a.type = 'text';
INSERT OR IGNORE INTO nonces (agent_id, nonce, intent_hash, session_id, idx)
  SELECT 'judge-wallet ' || r.ms || ' ' || lower(a.value), r.nonce, r.intent_hash, r.session_id, r.idx
  FROM (
    SELECT substr(n.agent_id, 12, instr(substr(n.agent_id, 12), ' ') - 1) AS ms,
           substr(substr(n.agent_id, 12), instr(substr(n.agent_id, 12), ' ') + 1) AS name,
           n.nonce, n.intent_hash, n.session_id, n.idx
    FROM nonces n WHERE n.agent_id LIKE 'judge-rate % %'
  ) r
  JOIN entries g ON g.session_id = r.session_id AND g.idx = 0
  JOIN json_each(CAST(g.bytes AS TEXT), '$.spec.agents') a ON a.key = r.name
  WHERE a.type = 'text'
  ORDER BY r.session_id, r.idx;
`;

/**
 * Version 6: the engine log (docs/PROTOCOL.md §15): one leaf per session
 * opened and per session checkpoint signed, at positions 0, 1, 2, … Each
 * leaf is inserted in the transaction that creates its session or records
 * its checkpoint, at MAX(seq) + 1 under the write lock, so positions have
 * no gap; the triggers keep it append-only.
 */
export const SQLITE_V6_SQL = `
CREATE TABLE engine_log (
  seq  INTEGER PRIMARY KEY CHECK (seq >= 0),
  leaf BLOB    NOT NULL CHECK (length(leaf) BETWEEN 1 AND 65535)
);
CREATE TRIGGER engine_log_immutable_update BEFORE UPDATE ON engine_log
BEGIN SELECT RAISE(ABORT, 'tally: the engine log is append-only'); END;
CREATE TRIGGER engine_log_immutable_delete BEFORE DELETE ON engine_log
BEGIN SELECT RAISE(ABORT, 'tally: the engine log is append-only'); END;
`;

/**
 * Version 8: the engine log's full hash tiles (C2SP tlog-tiles, 256 hashes of
 * 32 bytes), written once each is complete so an engine starts from the last
 * full tiles and the leaves after them instead of rehashing every leaf. A
 * tile is derived data: the engine writes it with INSERT OR IGNORE and
 * compares what is stored with what it computed (a difference is refused,
 * never overwritten); the triggers keep it append-only.
 */
export const SQLITE_V8_SQL = `
CREATE TABLE engine_log_tiles (
  level  INTEGER NOT NULL CHECK (level BETWEEN 0 AND 63),
  idx    INTEGER NOT NULL CHECK (idx >= 0),
  hashes BLOB    NOT NULL CHECK (length(hashes) = 8192),
  PRIMARY KEY (level, idx)
) WITHOUT ROWID;
CREATE TRIGGER engine_log_tiles_immutable_update BEFORE UPDATE ON engine_log_tiles
BEGIN SELECT RAISE(ABORT, 'tally: engine log tiles are append-only'); END;
CREATE TRIGGER engine_log_tiles_immutable_delete BEFORE DELETE ON engine_log_tiles
BEGIN SELECT RAISE(ABORT, 'tally: engine log tiles are append-only'); END;
`;

/**
 * Version 9: the engine log's key (origin and verifier key), recorded by the
 * first engine log that opens the store and compared by every later one, so
 * one store's log is never signed under a second origin or key (§15.3). A
 * store from before this version is claimed by the first log key that opens it.
 */
export const SQLITE_V9_SQL = `
CREATE TABLE engine_log_key (
  one          INTEGER PRIMARY KEY CHECK (one = 1),
  origin       TEXT    NOT NULL,
  verifier_key TEXT    NOT NULL
);
CREATE TRIGGER engine_log_key_immutable_update BEFORE UPDATE ON engine_log_key
BEGIN SELECT RAISE(ABORT, 'tally: the engine log key is recorded once'); END;
CREATE TRIGGER engine_log_key_immutable_delete BEFORE DELETE ON engine_log_key
BEGIN SELECT RAISE(ABORT, 'tally: the engine log key is recorded once'); END;
`;

/** Every migration, in order. The last version is the current schema. */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  { version: 1, name: 'sessions, entries, nonces', sql: SQLITE_V1_SQL },
  { version: 2, name: 'immutability triggers', sql: SQLITE_V2_SQL },
  { version: 3, name: 'signing log', sql: SQLITE_V3_SQL },
  { version: 4, name: 'witness cosignatures', sql: SQLITE_V4_SQL },
  { version: 5, name: 'reservations keyed by signer', sql: SQLITE_V5_SQL },
  { version: 6, name: 'engine log', sql: SQLITE_V6_SQL },
  { version: 7, name: 'signing-log positions and continuity', sql: SQLITE_V7_SQL },
  { version: 8, name: 'engine log tiles', sql: SQLITE_V8_SQL },
  { version: 9, name: 'engine log key', sql: SQLITE_V9_SQL },
];

/** The schema version this code writes. */
export const SQLITE_SCHEMA_VERSION = SQLITE_MIGRATIONS[SQLITE_MIGRATIONS.length - 1]!.version;

/** The version table; created before any migration runs (not itself a migration). */
export const SQLITE_VERSION_TABLE_SQL = `
CREATE TABLE IF NOT EXISTS tally_schema (
  version    INTEGER PRIMARY KEY,
  name       TEXT    NOT NULL,
  applied_at TEXT    NOT NULL
);
`;

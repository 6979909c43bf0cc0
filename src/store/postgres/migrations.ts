/**
 * The numbered schema migrations of the PostgreSQL store, as functions of the
 * (already quoted) schema name. A released migration is NEVER edited; add a
 * new number instead. Migrations run under `pg_advisory_xact_lock`, so many
 * engine processes may start at once against a fresh database.
 *
 * Every key of `sessions` and `entries` starts with the session id (the
 * distribution key on a sharded deployment); `nonces` is the one table shared
 * by all sessions and is keyed by `(agent_id, nonce)` — deliberately without
 * a foreign key to `sessions`, so it can be distributed by `agent_id`.
 */

/** One numbered migration. */
export interface PostgresMigration {
  readonly version: number;
  readonly name: string;
  /** The statements for schema `s` (a quoted identifier), run in one transaction. */
  readonly sql: (s: string) => string;
}

/** Version 1: sessions, entries (unique per index and per frame/turn slot) and nonce reservations. */
export const POSTGRES_V1_SQL = (s: string): string => `
CREATE TABLE ${s}.sessions (
  id       text    PRIMARY KEY,
  seq      bigint  GENERATED ALWAYS AS IDENTITY,
  size     integer NOT NULL CHECK (size >= 1),
  head     text    NOT NULL,
  frontier text[]  NOT NULL,
  phase    text    NOT NULL CHECK (phase IN ('awaiting-frame', 'pending', 'sealed'))
);
CREATE TABLE ${s}.entries (
  session_id text    NOT NULL REFERENCES ${s}.sessions (id),
  idx        integer NOT NULL CHECK (idx >= 0),
  hash       text    NOT NULL,
  kind       text    NOT NULL CHECK (kind IN ('genesis', 'frame', 'turn', 'finalize')),
  ordinal    integer,
  bytes      bytea   NOT NULL,
  PRIMARY KEY (session_id, idx),
  UNIQUE (session_id, kind, ordinal)
);
CREATE TABLE ${s}.nonces (
  agent_id    text    NOT NULL,
  nonce       text    NOT NULL,
  intent_hash text    NOT NULL,
  session_id  text    NOT NULL,
  idx         integer NOT NULL,
  PRIMARY KEY (agent_id, nonce)
);
`;

/**
 * Version 2: the database refuses to change history (entries and nonce
 * reservations are never updated or deleted; a sealed session's head never
 * moves). Defence in depth: the engine re-derives every hash on load anyway.
 */
export const POSTGRES_V2_SQL = (s: string): string => `
CREATE FUNCTION ${s}.tally_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  RAISE EXCEPTION 'tally: % % refused: history is immutable', TG_OP, TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
END
$fn$;
CREATE TRIGGER entries_immutable BEFORE UPDATE OR DELETE ON ${s}.entries
  FOR EACH ROW EXECUTE FUNCTION ${s}.tally_refuse_change();
CREATE TRIGGER nonces_immutable BEFORE UPDATE OR DELETE ON ${s}.nonces
  FOR EACH ROW EXECUTE FUNCTION ${s}.tally_refuse_change();
CREATE TRIGGER sessions_sealed BEFORE UPDATE ON ${s}.sessions
  FOR EACH ROW WHEN (OLD.phase = 'sealed') EXECUTE FUNCTION ${s}.tally_refuse_change();
CREATE TRIGGER sessions_no_delete BEFORE DELETE ON ${s}.sessions
  FOR EACH ROW EXECUTE FUNCTION ${s}.tally_refuse_change();
`;

/**
 * Version 3: the engine's signing log — every checkpoint the engine key has
 * signed from this database, one row per (origin, size). The primary key
 * makes two signers (any number of processes) unable to sign two roots for
 * one (origin, size); the trigger keeps the log append-only.
 */
export const POSTGRES_V3_SQL = (s: string): string => `
CREATE TABLE ${s}.signed_checkpoints (
  origin    text    NOT NULL,
  size      bigint  NOT NULL CHECK (size >= 1),
  root      text    NOT NULL CHECK (length(root) = 64),
  signed_at bigint  NOT NULL,
  PRIMARY KEY (origin, size)
);
CREATE TRIGGER signed_checkpoints_immutable BEFORE UPDATE OR DELETE ON ${s}.signed_checkpoints
  FOR EACH ROW EXECUTE FUNCTION ${s}.tally_refuse_change();
`;

/** Version 4: witness cosignatures and witness sizes (see the SQLite migration 4); insert-only. */
export const POSTGRES_V4_SQL = (s: string): string => `
CREATE TABLE ${s}.cosignatures (
  origin  text   NOT NULL,
  size    bigint NOT NULL CHECK (size >= 1),
  root    text   NOT NULL CHECK (length(root) = 64),
  witness text   NOT NULL,
  line    text   NOT NULL,
  PRIMARY KEY (origin, size, witness)
);
CREATE TABLE ${s}.witness_sizes (
  witness text   NOT NULL,
  origin  text   NOT NULL,
  size    bigint NOT NULL CHECK (size >= 0),
  PRIMARY KEY (witness, origin, size)
);
CREATE TRIGGER cosignatures_immutable BEFORE UPDATE OR DELETE ON ${s}.cosignatures
  FOR EACH ROW EXECUTE FUNCTION ${s}.tally_refuse_change();
CREATE TRIGGER witness_sizes_immutable BEFORE UPDATE OR DELETE ON ${s}.witness_sizes
  FOR EACH ROW EXECUTE FUNCTION ${s}.tally_refuse_change();
`;

/** Every migration, in order. */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  { version: 1, name: 'sessions, entries, nonces', sql: POSTGRES_V1_SQL },
  { version: 2, name: 'immutability triggers', sql: POSTGRES_V2_SQL },
  { version: 3, name: 'signing log', sql: POSTGRES_V3_SQL },
  { version: 4, name: 'witness cosignatures', sql: POSTGRES_V4_SQL },
];

/** The schema version this code writes. */
export const POSTGRES_SCHEMA_VERSION = POSTGRES_MIGRATIONS[POSTGRES_MIGRATIONS.length - 1]!.version;

/** The version table; created before any migration runs. */
export const POSTGRES_VERSION_TABLE_SQL = (s: string): string => `
CREATE TABLE IF NOT EXISTS ${s}.tally_schema (
  version    integer     PRIMARY KEY,
  name       text        NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);
`;

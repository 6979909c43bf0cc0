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
import { POSTGRES_V10_SQL, POSTGRES_V12_SQL, POSTGRES_V13_SQL } from './engine-log.js';
import { POSTGRES_V11_SQL } from './continuity.js';

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

/**
 * Version 5: compare-and-append as a function over a batch (group commit).
 * `tally_append` takes N appends as parallel arrays (each request's frontier
 * and nonce claims flattened, with their lengths) and runs them in order in
 * the caller's one statement, so N appends share one transaction, one round
 * trip and one WAL flush. Each is validated on its own, exactly as a lone
 * append: if a claimed nonce is already reserved (committed, or by an
 * earlier append of this batch) it writes nothing; otherwise a conditional
 * `UPDATE` of the session row compares and moves the head, and only if it
 * matched are the nonces and the entry inserted. A refused append answers
 * `sealed`, `unknown-session`, `nonce-taken` (the head still matched) or
 * `head-moved`, and the others in the batch go on. A nonce reserved by a
 * concurrent uncommitted transaction raises a unique violation that fails
 * the whole statement (the caller then retries each append alone). Returns
 * one code per request, in order: `ok` or the refusal.
 *
 * It also moves the sealed-session guard of migration 2 from BEFORE to AFTER
 * UPDATE: the same refusal (the statement fails, nothing changes), but a
 * BEFORE row trigger makes every head move lock the old row version first
 * (an extra tuple lock and WAL record per append), while an AFTER trigger
 * whose WHEN is false costs nothing.
 */
export const POSTGRES_V5_SQL = (s: string): string => `
DROP TRIGGER sessions_sealed ON ${s}.sessions;
CREATE TRIGGER sessions_sealed AFTER UPDATE ON ${s}.sessions
  FOR EACH ROW WHEN (OLD.phase = 'sealed') EXECUTE FUNCTION ${s}.tally_refuse_change();
CREATE FUNCTION ${s}.tally_append(
  p_ids text[], p_sizes integer[], p_heads text[], p_phases text[],
  p_hashes text[], p_kinds text[], p_ordinals integer[], p_bytes bytea[],
  p_frontier text[], p_frontier_len integer[],
  p_agents text[], p_nonces text[], p_intents text[], p_nonce_len integer[]
) RETURNS text[] LANGUAGE plpgsql AS $fn$
DECLARE
  codes text[] := '{}';
  f integer := 0;
  k integer := 0;
  nf integer;
  nk integer;
  taken boolean;
  cur record;
BEGIN
  FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
    nf := p_frontier_len[i];
    nk := p_nonce_len[i];
    taken := false;
    IF nk > 0 THEN
      SELECT EXISTS (
        SELECT 1 FROM unnest(p_agents[k + 1 : k + nk], p_nonces[k + 1 : k + nk]) AS c(a, n)
        JOIN ${s}.nonces x ON x.agent_id = c.a AND x.nonce = c.n
      ) INTO taken;
    END IF;
    IF NOT taken THEN
      UPDATE ${s}.sessions SET size = p_sizes[i] + 1, head = p_hashes[i], frontier = p_frontier[f + 1 : f + nf], phase = p_phases[i]
        WHERE id = p_ids[i] AND size = p_sizes[i] AND head = p_heads[i] AND phase <> 'sealed';
      IF FOUND THEN
        IF nk > 0 THEN
          INSERT INTO ${s}.nonces (agent_id, nonce, intent_hash, session_id, idx)
            SELECT c.a, c.n, c.h, p_ids[i], p_sizes[i]
            FROM unnest(p_agents[k + 1 : k + nk], p_nonces[k + 1 : k + nk], p_intents[k + 1 : k + nk]) WITH ORDINALITY AS c(a, n, h, o)
            ORDER BY c.o;
        END IF;
        INSERT INTO ${s}.entries (session_id, idx, hash, kind, ordinal, bytes)
          VALUES (p_ids[i], p_sizes[i], p_hashes[i], p_kinds[i], p_ordinals[i], p_bytes[i]);
        codes := codes || 'ok'::text;
        f := f + nf;
        k := k + nk;
        CONTINUE;
      END IF;
    END IF;
    SELECT size, head, phase INTO cur FROM ${s}.sessions WHERE id = p_ids[i];
    IF NOT FOUND THEN
      codes := codes || 'unknown-session'::text;
    ELSIF cur.phase = 'sealed' THEN
      codes := codes || 'sealed'::text;
    ELSIF taken AND cur.size = p_sizes[i] AND cur.head = p_heads[i] THEN
      codes := codes || 'nonce-taken'::text;
    ELSE
      codes := codes || 'head-moved'::text;
    END IF;
    f := f + nf;
    k := k + nk;
  END LOOP;
  RETURN codes;
END
$fn$;
`;

/**
 * Version 6: the head lives in the last entry, so an append is one `INSERT`
 * (`append-sql.ts`) and no row is ever updated.
 *
 * Before, every append also updated the session row (size, head, frontier,
 * phase): a second tuple, a dead one left behind, and a second WAL record
 * per append, which held one session at ~0.6 of the server's raw commit
 * rate. Now each entry row carries the phase after it and its `node` (the
 * last hash of the frontier after it; the frontier of any size is the nodes
 * of the entries that end its complete subtrees). The head is the row with
 * the highest `idx`. Existing sessions get their phase copied into their
 * last entry and their frontier's hashes into the entries that end its
 * subtrees, which are all a later frontier can need (the immutability
 * trigger is lifted for those two statements only; the subtree ends are
 * computed here as `frontierIndexesSql` in append-sql.ts computes them, a
 * frozen copy, since a released migration never changes). Then the session row
 * keeps only its id and creation order and becomes insert-only.
 *
 * A frame or turn slot is its index: the phase rules put the frame of
 * ordinal k at entry 2k + 3 and its turn at 2k + 4 (`protocol/slots.ts`),
 * every store refuses an append that puts one elsewhere, and the slot is
 * read by that index. So the `(session_id, idx)` key makes each slot hold
 * one entry, and the `(session_id, kind, ordinal)` key, a second index
 * written on every append, goes.
 *
 * The new columns carry no CHECK: a table CHECK is re-planned on every
 * insert (measured: each costs several percent of a one-row append), and
 * readers refuse what one would: a head whose phase is unknown or whose
 * frontier hashes are missing is `TALLY_STORE_CORRUPT`, and the engine
 * compares the frontier with the one it re-derives.
 *
 * The foreign key from entries to sessions goes: every append checks, in its
 * own statement, that the entry before it exists, and the chain starts at a
 * genesis inserted together with its session row, so it could never fire;
 * checking it cost a row lock on the session per append. The sealed guard of
 * migration 2 goes with the session row's phase: the append statement
 * refuses to follow a `finalize`, and an entry added by hand after one is
 * refused when the engine re-derives the chain on load (as any entry written
 * behind the engine's back is).
 */
export const POSTGRES_V6_SQL = (s: string): string => `
ALTER TABLE ${s}.entries ADD COLUMN node bytea, ADD COLUMN phase text;
ALTER TABLE ${s}.entries DISABLE TRIGGER entries_immutable;
UPDATE ${s}.entries e SET phase = x.phase
  FROM ${s}.sessions x WHERE e.session_id = x.id AND e.idx = x.size - 1;
UPDATE ${s}.entries e SET node = decode(x.frontier[f.j], 'hex')
  FROM ${s}.sessions x CROSS JOIN LATERAL (
    SELECT (sum(1::bigint << b) OVER (ORDER BY b DESC) - 1)::integer AS idx, row_number() OVER (ORDER BY b DESC)::integer AS j
    FROM generate_series(30, 0, -1) AS b WHERE (x.size::bigint & (1::bigint << b)) <> 0
  ) AS f
  WHERE e.session_id = x.id AND e.idx = f.idx;
ALTER TABLE ${s}.entries ENABLE TRIGGER entries_immutable;
ALTER TABLE ${s}.entries DROP CONSTRAINT entries_session_id_fkey;
ALTER TABLE ${s}.entries DROP CONSTRAINT entries_session_id_kind_ordinal_key;
DROP TRIGGER sessions_sealed ON ${s}.sessions;
DROP FUNCTION ${s}.tally_append(text[], integer[], text[], text[], text[], text[], integer[], bytea[], text[], integer[], text[], text[], text[], integer[]);
ALTER TABLE ${s}.sessions DROP COLUMN size, DROP COLUMN head, DROP COLUMN frontier, DROP COLUMN phase;
CREATE TRIGGER sessions_immutable BEFORE UPDATE ON ${s}.sessions
  FOR EACH ROW EXECUTE FUNCTION ${s}.tally_refuse_change();
`;

/**
 * Version 7: the entry's two value rules become domains. `idx >= 0` and
 * `kind IN (genesis, frame, turn, finalize)` were table CHECKs, which
 * PostgreSQL parses and plans again at every execution of an insert
 * (measured: each cost several percent of a one-row append). The same rules
 * as domain constraints are planned once per backend and checked on every
 * write all the same, so nothing is loosened. The column change rewrites
 * `entries` once, under an exclusive lock: on a large table, run the
 * upgrade at a quiet moment.
 */
export const POSTGRES_V7_SQL = (s: string): string => `
CREATE DOMAIN ${s}.entry_index AS integer CONSTRAINT entry_index_check CHECK (VALUE >= 0);
CREATE DOMAIN ${s}.entry_kind AS text CONSTRAINT entry_kind_check CHECK (VALUE IN ('genesis', 'frame', 'turn', 'finalize'));
ALTER TABLE ${s}.entries DROP CONSTRAINT entries_idx_check, DROP CONSTRAINT entries_kind_check;
ALTER TABLE ${s}.entries ALTER COLUMN idx TYPE ${s}.entry_index, ALTER COLUMN kind TYPE ${s}.entry_kind;
`;

/**
 * Version 8: the history refuses `TRUNCATE` too. Migration 2's row triggers
 * refuse UPDATE and DELETE, but `TRUNCATE` fires no row trigger, so one
 * statement could empty a table and the next append of an emptied session
 * would find no parent at all. A statement trigger on each table of history
 * refuses it with the same error. (A superuser can still switch triggers
 * off; the engine re-derives every hash on load regardless.)
 */
export const POSTGRES_V8_SQL = (s: string): string =>
  ['entries', 'nonces', 'sessions', 'signed_checkpoints', 'cosignatures', 'witness_sizes']
    .map((t) => `CREATE TRIGGER ${t}_no_truncate BEFORE TRUNCATE ON ${s}.${t} FOR EACH STATEMENT EXECUTE FUNCTION ${s}.tally_refuse_change();`)
    .join('\n');

/**
 * Version 9: reservations keyed by what authenticates them — the same step
 * as SQLite's version 5 (see there): every name-keyed nonce row is copied
 * under `<signer> <agent_id>`, every `judge-rate <window_ms> <agent_id>` slot
 * under `judge-wallet <window_ms> <signer>`, the signer read from the
 * `spec.agents` of the owning session's genesis; nothing is changed or
 * deleted.
 */
export const POSTGRES_V9_SQL = (s: string): string => `
INSERT INTO ${s}.nonces (agent_id, nonce, intent_hash, session_id, idx)
  SELECT lower(a.signer) || ' ' || n.agent_id, n.nonce, n.intent_hash, n.session_id, n.idx
  FROM ${s}.nonces n
  JOIN ${s}.entries g ON g.session_id = n.session_id AND g.idx = 0
  CROSS JOIN LATERAL (SELECT convert_from(g.bytes, 'UTF8')::jsonb -> 'spec' -> 'agents' ->> n.agent_id AS signer) a
  WHERE position(' ' in n.agent_id) = 0 AND a.signer IS NOT NULL
  ON CONFLICT DO NOTHING;
INSERT INTO ${s}.nonces (agent_id, nonce, intent_hash, session_id, idx)
  SELECT 'judge-wallet ' || r.ms || ' ' || lower(a.signer), r.nonce, r.intent_hash, r.session_id, r.idx
  FROM (
    SELECT substring(n.agent_id from '^judge-rate ([0-9]+) ') AS ms, substring(n.agent_id from '^judge-rate [0-9]+ (.*)$') AS name,
           n.nonce, n.intent_hash, n.session_id, n.idx
    FROM ${s}.nonces n WHERE n.agent_id LIKE 'judge-rate % %'
  ) r
  JOIN ${s}.entries g ON g.session_id = r.session_id AND g.idx = 0
  CROSS JOIN LATERAL (SELECT convert_from(g.bytes, 'UTF8')::jsonb -> 'spec' -> 'agents' ->> r.name AS signer) a
  WHERE r.ms IS NOT NULL AND a.signer IS NOT NULL
  ORDER BY r.session_id, r.idx
  ON CONFLICT DO NOTHING;
`;

/** Every migration, in order. */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  { version: 1, name: 'sessions, entries, nonces', sql: POSTGRES_V1_SQL },
  { version: 2, name: 'immutability triggers', sql: POSTGRES_V2_SQL },
  { version: 3, name: 'signing log', sql: POSTGRES_V3_SQL },
  { version: 4, name: 'witness cosignatures', sql: POSTGRES_V4_SQL },
  { version: 5, name: 'batched compare-and-append', sql: POSTGRES_V5_SQL },
  { version: 6, name: 'the head lives in the last entry', sql: POSTGRES_V6_SQL },
  { version: 7, name: 'entry rules as domains', sql: POSTGRES_V7_SQL },
  { version: 8, name: 'history refuses truncate', sql: POSTGRES_V8_SQL },
  { version: 9, name: 'reservations keyed by signer', sql: POSTGRES_V9_SQL },
  { version: 10, name: 'engine log', sql: POSTGRES_V10_SQL },
  { version: 11, name: 'signing-log positions and continuity', sql: POSTGRES_V11_SQL },
  { version: 12, name: 'engine log tiles', sql: POSTGRES_V12_SQL },
  { version: 13, name: 'engine log key', sql: POSTGRES_V13_SQL },
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

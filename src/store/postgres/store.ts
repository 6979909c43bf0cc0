/**
 * The shared durable store: PostgreSQL through a `pg` connection pool. Any
 * number of engine processes may use one database: compare-and-append is one
 * `INSERT` of the entry row, which carries the head after it
 * (`./append-sql.ts`): the `(session_id, idx)` primary key lets exactly one
 * writer of an index win (the losers wait for its commit and write nothing),
 * and the `(agent_id, nonce)` primary key makes a nonce reservation win
 * exactly once across all sessions. Appends of different sessions waiting at
 * the same moment share one transaction (group commit, `./append.ts`).
 */
import pg from 'pg';
import { TallyError } from '../../protocol/errors.js';
import { SESSION_PHASES, isMember, slotIndex } from '../../protocol/index.js';
import type {
  AppendOutcome,
  AppendRequest,
  ExpectedLatest,
  NonceOwner,
  ReserveOutcome,
  NonceClaim,
  RecordCheckpointOutcome,
  SessionHead,
  StoreHealth,
  ReplicationStatus,
  SignedCheckpointRecord,
  CosignatureRecord,
  CosignatureStore,
  EngineLogKeyRecord,
  EngineLogStore,
  EngineLogTileStore,
  ContinuityEvent,
  ContinuityState,
  ContinuityStore,
  StoredEntry,
  TranscriptStore,
} from '../types.js';
import { REPLICATION_SQL, replicationStatus } from './replication.js';
import { checkAppendRequest, checkLogLeaf, checkNewSession, checkTile } from '../request.js';
import { appendLeaf, engineLogSql, type EngineLogSql } from './engine-log.js';
import { checkSignedRecord, isExpectedLatest, toEntry, toOwner, toPositioned, toSigned, type EntryRow, type OwnerRow, type PositionedRow, type SignedRow } from '../rows.js';
import { GroupCommit, type GroupCommitOptions, type GroupCommitStats } from './append.js';
import { appendStatements, appendValues, classifyValues, frontierNode, isAppendCode, isLostRace, isUniqueViolation, type AppendCode, type AppendStatements, type HeadRow } from './append-sql.js';
import { ioError, redact, retrying, retryingCall, transaction } from './sql.js';
import { Lane } from './lane.js';
import { hostListClient, parseHostList } from './hosts.js';
import { continuitySql, eventValues, readContinuity, type ContinuitySql } from './continuity.js';
import { migrate } from './migrate.js';
import { POSTGRES_SCHEMA_VERSION } from './migrations.js';

/** Options of {@link PostgresStore.open}. */
export interface PostgresStoreOptions {
  /** Connection string, `postgres://user@host:port/db`. */
  readonly url: string;
  /**
   * The schema holding Tally's tables (default `tally`; created if missing).
   * Lowercase letters, digits and `_`, starting with a letter or `_`. Use a
   * fresh schema per test run and drop it afterwards.
   */
  readonly schema?: string;
  /**
   * Pool size (default 10). Concurrent appends of different sessions run on
   * different connections. From 2 up, one connection is held for lone
   * appends, from the first one until the store closes (`./lane.ts`).
   */
  readonly poolSize?: number;
  /**
   * Group commit (see `./append.ts`): most appends per statement (default
   * 16; 1 sends every append alone) and most statements running at once
   * (default 4, at most the pool size).
   */
  readonly groupCommit?: GroupCommitOptions;
}

/** The default schema. */
export const DEFAULT_PG_SCHEMA = 'tally';

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * A {@link TranscriptStore} in a PostgreSQL schema. Create it with
 * {@link PostgresStore.open}, which runs pending migrations.
 *
 * @example
 * const store = await PostgresStore.open({ url: 'postgres://postgres@127.0.0.1:5432/tally' });
 * const engine = createEngine({ store });
 * // …
 * await store.close(); // ends the pool
 */
export class PostgresStore implements TranscriptStore, CosignatureStore, EngineLogStore, EngineLogTileStore, ContinuityStore {
  readonly name: string;
  /** The schema holding the tables. */
  readonly schema: string;
  private readonly pool: pg.Pool;
  private readonly t: { readonly sessions: string; readonly entries: string; readonly nonces: string; readonly signed: string; readonly version: string };
  private readonly group: GroupCommit;
  private readonly lane: Lane;
  private readonly sql: AppendStatements;
  private readonly logSql: EngineLogSql;
  private readonly contSql: ContinuitySql;
  /** The last signing-log row this store object wrote (the signer's own evidence across a failover). */
  private mine: SignedCheckpointRecord | undefined;
  private closed = false;

  private constructor(pool: pg.Pool, schema: string, name: string, group: GroupCommitOptions, poolSize: number) {
    this.pool = pool;
    this.lane = new Lane(pool, poolSize >= 2);
    this.schema = schema;
    this.name = name;
    const s = pg.escapeIdentifier(schema);
    this.t = { sessions: `${s}.sessions`, entries: `${s}.entries`, nonces: `${s}.nonces`, signed: `${s}.signed_checkpoints`, version: `${s}.tally_schema` };
    this.sql = appendStatements(s);
    this.logSql = engineLogSql(s);
    this.contSql = continuitySql(s);
    this.group = new GroupCommit({ runBatch: (b) => this.runBatch(b), settle: (r, c) => this.settle(r, c), runOne: (r) => this.runOne(r) }, group);
  }

  /** Connects, creates the schema if needed and runs pending migrations (serialised across processes). */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const schema = options.schema ?? DEFAULT_PG_SCHEMA;
    if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) throw new RangeError(`schema must match ${SCHEMA_NAME}, got ${JSON.stringify(schema)}`);
    const poolSize = options.poolSize ?? 10;
    if (!Number.isSafeInteger(poolSize) || poolSize < 1) throw new RangeError(`poolSize must be a positive integer, got ${poolSize}`);
    // A multi-host location (`h1:5432,h2:5432`, `target_session_attrs`) is followed by the store itself (./hosts.ts).
    const hosts = parseHostList(options.url);
    const pool = new pg.Pool({ connectionString: hosts ? hosts.urlFor(hosts.hosts[0]!) : options.url, max: poolSize, ...(hosts ? { Client: hostListClient(hosts) } : {}) });
    // An idle client that loses its connection emits 'error' on the pool; without a
    // listener that would crash the process. The next query reports the problem.
    pool.on('error', () => {});
    const group = { maxBatch: options.groupCommit?.maxBatch ?? 16, maxInFlight: Math.min(poolSize, options.groupCommit?.maxInFlight ?? 4) };
    const shown = hosts ? `${hosts.hosts.map((h) => `${h.host}:${h.port}`).join(',')}${new URL(hosts.urlFor(hosts.hosts[0]!)).pathname}` : redact(options.url);
    const store = new PostgresStore(pool, schema, `postgres:${shown}#${schema}`, group, poolSize);
    try {
      await migrate(pool, schema, store.name);
    } catch (cause) {
      await pool.end().catch(() => {});
      if (cause instanceof TallyError && cause.code === 'TALLY_STORE_SCHEMA_TOO_NEW') throw cause;
      const details = cause instanceof TallyError ? (cause.details ?? cause.shortMessage) : String(cause);
      throw new TallyError('TALLY_STORE_OPEN', `Cannot open PostgreSQL store ${store.name}.`, { details, cause });
    }
    return store;
  }

  /** {@inheritDoc TranscriptStore.schemaStatus} */
  async schemaStatus(): Promise<{ readonly version: number; readonly expected: number }> {
    return { version: await this.schemaVersion(), expected: POSTGRES_SCHEMA_VERSION };
  }

  /** The schema version recorded in the database. */
  async schemaVersion(): Promise<number> {
    this.live();
    const r = await this.query<{ v: number | null }>('read the schema version', `SELECT MAX(version) AS v FROM ${this.t.version}`, []);
    return r[0]?.v ?? 0;
  }

  async createSession(genesis: StoredEntry, head: SessionHead, logLeaf?: Uint8Array): Promise<'created' | 'exists'> {
    this.live();
    checkNewSession(genesis, head);
    checkLogLeaf(logLeaf);
    // One statement is one transaction: the session row, its genesis entry (with the head after it) and its engine-log leaf together or not at all.
    const rows = await this.query<{ created: boolean }>(
      'create a session',
      `WITH s AS (
         INSERT INTO ${this.t.sessions} (id) VALUES ($1) ON CONFLICT (id) DO NOTHING RETURNING id
       ), e AS (
         INSERT INTO ${this.t.entries} (session_id, idx, hash, kind, ordinal, bytes, node, phase) SELECT id, $2::integer, $3, $4::text, $5, $6, $7, $8 FROM s RETURNING 1
       )${this.logSql.createMembers('$9')}
       SELECT EXISTS (SELECT 1 FROM e) AS created`,
      [head.sessionId, genesis.index, genesis.hash, genesis.kind, genesis.ordinal ?? null, buffer(genesis.bytes), frontierNode(head), head.phase, logLeaf ? buffer(logLeaf) : null],
    );
    return rows[0]?.created ? 'created' : 'exists';
  }

  /**
   * Compare-and-append through the group-commit queue ({@link GroupCommit}):
   * one `INSERT` of the entry row (`./append-sql.ts`), alone or in one
   * transaction with appends of other sessions waiting at the same moment.
   * Resolves only after that transaction committed.
   */
  async append(req: AppendRequest): Promise<AppendOutcome> {
    this.live();
    checkAppendRequest(req);
    return this.group.append(req);
  }

  /** What group commit has done on this store so far (batches, appends in them, failed batches, lone appends). */
  get groupCommitStats(): GroupCommitStats {
    return this.group.stats;
  }

  /** One transaction for `batch`, each append its own statement: one code per request; throws (nothing written) if it failed. */
  private async runBatch(batch: readonly AppendRequest[]): Promise<AppendCode[]> {
    return transaction(this.pool, this.name, 'append a batch', async (c) => {
      const codes: AppendCode[] = [];
      for (const req of batch) codes.push(await this.appendOn(c, req, false));
      return { commit: true, value: codes };
    });
  }

  /**
   * One append alone: one statement, so one transaction. A concurrent writer
   * of the same index makes this one wait for its commit and then write
   * nothing. A nonce reserved by a concurrent statement that then commits
   * raises a unique violation that rolls the whole statement back; the owner
   * is read afterwards. It runs on the held lone-append connection when that
   * is free (`./lane.ts`), else on the pool.
   */
  private async runOne(req: AppendRequest): Promise<AppendOutcome> {
    let code: AppendCode;
    try {
      code = await this.lane.run((on) => retryingCall(() => this.appendOn(on, req, true)));
    } catch (cause) {
      if (isUniqueViolation(cause, 'nonces_pkey')) {
        const taken = await this.firstOwner(req);
        if (taken) return taken;
      }
      throw ioError(this.name, 'append', cause);
    }
    return this.settle(req, code);
  }

  /** Runs the append statement for `req` on `on` (a pool or a connection in a transaction); if it wrote nothing, asks why. */
  private async appendOn(on: pg.Pool | pg.PoolClient, req: AppendRequest, alone: boolean): Promise<AppendCode> {
    const nonces = req.nonces.length > 0;
    const pair = alone ? this.sql.lone : this.sql.batch;
    const st = nonces ? pair.withNonces : pair.plain;
    let written: number | null;
    try {
      written = (await on.query({ name: st.name, text: st.text, values: appendValues(req, nonces) })).rowCount;
    } catch (e) {
      // The index is taken (a race lost, or an older expected head): nothing was written. (A batch's statement writes nothing instead.)
      if (!alone || !isLostRace(e)) throw e;
      written = 0;
    }
    if (written === 1) return 'ok';
    const why = await on.query<{ code: unknown }>({ name: this.sql.classify.name, text: this.sql.classify.text, values: classifyValues(req) });
    const code = why.rows[0]?.code;
    if (written !== 0 || !isAppendCode(code) || code === 'ok') {
      throw new TallyError('TALLY_STORE_IO', `PostgreSQL answered an append with ${written} rows and ${JSON.stringify(code)} (${this.name}).`);
    }
    return code;
  }

  /** The outcome for the database's code; for `nonce-taken`, names the first owner in request order. */
  private async settle(req: AppendRequest, code: AppendCode): Promise<AppendOutcome> {
    if (code === 'ok') return { ok: true };
    if (code !== 'nonce-taken') return { ok: false, reason: code };
    const taken = await this.firstOwner(req);
    if (taken) return taken;
    throw new TallyError('TALLY_STORE_IO', `PostgreSQL reported a taken nonce that has no owner (${this.name}).`);
  }

  private async firstOwner(req: AppendRequest): Promise<AppendOutcome | undefined> {
    for (const claim of req.nonces) {
      const owner = await this.readOwner(claim.agentId, claim.nonce);
      if (owner) return { ok: false, reason: 'nonce-taken', agentId: claim.agentId, nonce: claim.nonce, owner };
    }
    return undefined;
  }

  async loadHead(sessionId: string): Promise<SessionHead | undefined> {
    this.live();
    // The head is the last entry; the frontier is the nodes of the entries that end its complete subtrees (`./append-sql.ts`).
    const rows = await this.query<HeadRow>('read a head', this.sql.head.text, [sessionId], this.sql.head.name);
    const r = rows[0];
    if (!r) return undefined;
    const frontier = r.frontier ?? [];
    if (!isMember(SESSION_PHASES, r.phase) || frontier.length !== r.want || !frontier.every((x): x is string => typeof x === 'string')) {
      throw new TallyError('TALLY_STORE_CORRUPT', `PostgreSQL session ${sessionId.slice(0, 16)}… has no complete head at entry ${r.idx}: a node of its frontier or its phase is missing (${this.name}).`);
    }
    return { sessionId, size: r.idx + 1, head: r.hash, frontier, phase: r.phase };
  }

  async readRange(sessionId: string, from: number, to: number): Promise<StoredEntry[]> {
    this.live();
    if (to <= from) return [];
    const rows = await this.query<EntryRow>(
      'read entries',
      `SELECT idx, hash, kind, ordinal, bytes FROM ${this.t.entries} WHERE session_id = $1 AND idx >= $2 AND idx < $3 ORDER BY idx`,
      [sessionId, Math.max(0, from), Math.min(to, 2_147_483_647)],
      'tally_read_range',
    );
    return rows.map(toEntry);
  }

  async readSlot(sessionId: string, kind: 'frame' | 'turn', ordinal: number): Promise<StoredEntry | undefined> {
    this.live();
    // A slot is its index (protocol/slots.ts): every append is checked to put it there (store/request.ts).
    const idx = slotIndex(kind, ordinal);
    if (!Number.isSafeInteger(idx) || idx < 1 || idx > 2_147_483_647) return undefined;
    const rows = await this.query<EntryRow>(
      'read a slot',
      `SELECT idx, hash, kind, ordinal, bytes FROM ${this.t.entries} WHERE session_id = $1 AND idx = $2 AND kind = $3 AND ordinal = $4`,
      [sessionId, idx, kind, ordinal],
      'tally_read_slot6',
    );
    return rows[0] ? toEntry(rows[0]) : undefined;
  }

  async nonceOwner(agentId: string, nonce: string): Promise<NonceOwner | undefined> {
    this.live();
    return this.readOwner(agentId, nonce);
  }

  /** The owner of a nonce, also while the store closes (an append in flight then still names who took its nonce). */
  private async readOwner(agentId: string, nonce: string): Promise<NonceOwner | undefined> {
    const rows = await this.query<OwnerRow>('read a nonce', `SELECT intent_hash, session_id, idx FROM ${this.t.nonces} WHERE agent_id = $1 AND nonce = $2`, [agentId, nonce], 'tally_nonce_owner');
    const r = rows[0];
    return r ? toOwner(r) : undefined;
  }

  /**
   * Reserves every claim or none (see `TranscriptStore.reserve`): one
   * transaction, one `INSERT … ON CONFLICT DO NOTHING` in key order (a
   * concurrent reservation of the same key waits for the other to commit,
   * then finds it); if any row was not inserted, it rolls back and names that
   * key's owner.
   */
  async reserve(sessionId: string, index: number, claims: readonly NonceClaim[]): Promise<ReserveOutcome> {
    this.live();
    const sorted = [...claims].sort((a, b) => (a.agentId === b.agentId ? (a.nonce < b.nonce ? -1 : a.nonce > b.nonce ? 1 : 0) : a.agentId < b.agentId ? -1 : 1));
    const taken = await transaction<NonceClaim | undefined>(this.pool, this.name, 'reserve nonces', async (c) => {
      const r = await c.query<{ agent_id: string; nonce: string }>(
        `INSERT INTO ${this.t.nonces} (agent_id, nonce, intent_hash, session_id, idx)
           SELECT a, n, h, $4, $5 FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS c(a, n, h, o) ORDER BY o
           ON CONFLICT DO NOTHING RETURNING agent_id, nonce`,
        [sorted.map((n) => n.agentId), sorted.map((n) => n.nonce), sorted.map((n) => n.intentHash), sessionId, index],
      );
      if (r.rows.length === sorted.length) return { commit: true, value: undefined };
      const got = new Set(r.rows.map((x) => JSON.stringify([x.agent_id, x.nonce])));
      return { commit: false, value: sorted.find((n) => !got.has(JSON.stringify([n.agentId, n.nonce]))) };
    });
    if (taken === undefined) return { ok: true };
    const owner = await this.readOwner(taken.agentId, taken.nonce);
    if (!owner) throw new TallyError('TALLY_STORE_IO', `A reservation conflicted but its owner cannot be read (${this.name}).`);
    return { ok: false, reason: 'nonce-taken', agentId: taken.agentId, nonce: taken.nonce, owner };
  }

  async listSessions(): Promise<string[]> {
    this.live();
    const rows = await this.query<{ id: string }>('list sessions', `SELECT id FROM ${this.t.sessions} ORDER BY seq`, []);
    return rows.map((r) => r.id);
  }

  /**
   * Records a checkpoint in the signing log (see `SigningLogStore`): one
   * transaction that first takes a transaction-scoped advisory lock on the
   * origin (so signers of one origin, in any process, compare and record one
   * at a time), then compares and inserts. The `(origin, size)` primary key
   * backs the lock: a second root for one size can never be inserted.
   */
  async recordCheckpoint(record: SignedCheckpointRecord, expected: ExpectedLatest, logLeaf?: Uint8Array): Promise<RecordCheckpointOutcome> {
    this.live();
    checkSignedRecord(record, (m) => new TallyError('TALLY_STORE_MISUSE', m));
    checkLogLeaf(logLeaf);
    const cols = 'origin, size, root, signed_at';
    return transaction<RecordCheckpointOutcome>(this.pool, this.name, 'record a signed checkpoint', async (c) => {
      await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`agent-tally:sign:${this.schema}:${record.origin}`]);
      const at = await c.query<SignedRow>(`SELECT ${cols} FROM ${this.t.signed} WHERE origin = $1 AND size = $2`, [record.origin, record.size]);
      if (at.rows[0]) {
        const existing = toSigned(at.rows[0]);
        return { commit: false, value: existing.root === record.root ? { ok: true, duplicate: true, record: existing } : { ok: false, reason: 'equivocation', record: existing } };
      }
      const l = await c.query<SignedRow>(`SELECT ${cols} FROM ${this.t.signed} WHERE origin = $1 ORDER BY size DESC LIMIT 1`, [record.origin]);
      const latest = l.rows[0] ? toSigned(l.rows[0]) : undefined;
      if (!isExpectedLatest(latest, expected)) return { commit: false, value: { ok: false, reason: 'latest-moved', latest } };
      // Stamped with the database's identity, timeline and WAL position (./continuity.ts).
      const ins = await c.query<Pick<PositionedRow, 'db_system' | 'db_timeline' | 'db_lsn'>>(this.contSql.insertSigned, [record.origin, record.size, record.root, record.signedAt]);
      if (logLeaf) await appendLeaf(c, this.logSql, logLeaf);
      const written = toPositioned({ origin: record.origin, size: record.size, root: record.root, signed_at: record.signedAt, db_system: null, db_timeline: null, db_lsn: null, ...ins.rows[0] });
      return { commit: true, value: { ok: true, duplicate: false, record: written } };
    }).then((out) => {
      if (out.ok && !out.duplicate) this.mine = out.record;
      return out;
    });
  }

  /** {@inheritDoc ContinuityStore.continuityState} */
  async continuityState(): Promise<ContinuityState> {
    this.live();
    try {
      return await readContinuity(this.pool, this.contSql, this.mine, this.name);
    } catch (cause) {
      if (cause instanceof TallyError) throw cause;
      throw ioError(this.name, 'read the store position', cause);
    }
  }

  /** {@inheritDoc ContinuityStore.recordContinuityEvent} */
  async recordContinuityEvent(event: ContinuityEvent): Promise<void> {
    this.live();
    await this.query('record a continuity event', this.contSql.insertEvent, eventValues(event));
  }

  /** {@inheritDoc ContinuityStore.signingLogHeads} */
  async signingLogHeads(): Promise<SignedCheckpointRecord[]> {
    this.live();
    return (await this.query<PositionedRow>('read the signing log', this.contSql.heads, [])).map(toPositioned);
  }

  async latestCheckpoint(origin: string): Promise<SignedCheckpointRecord | undefined> {
    this.live();
    const rows = await this.query<SignedRow>('read the signing log', `SELECT origin, size, root, signed_at FROM ${this.t.signed} WHERE origin = $1 ORDER BY size DESC LIMIT 1`, [origin]);
    return rows[0] ? toSigned(rows[0]) : undefined;
  }

  async engineLogSize(): Promise<number> {
    this.live();
    return Number((await this.query<{ size: string }>('read the engine log', this.logSql.size, []))[0]?.size ?? 0);
  }

  async engineLogLeaves(from: number, to: number): Promise<Uint8Array[]> {
    this.live();
    return (await this.query<{ leaf: Buffer }>('read the engine log', this.logSql.range, [from, to])).map((r) => new Uint8Array(r.leaf));
  }

  /** {@inheritDoc EngineLogTileStore.engineLogTileCounts} */
  async engineLogTileCounts(): Promise<number[]> {
    this.live();
    const out: number[] = [];
    for (const r of await this.query<{ level: number; n: string }>('read the engine log tiles', this.logSql.tileCounts, [])) {
      while (out.length < r.level) out.push(0);
      out[r.level] = Number(r.n);
    }
    return out;
  }

  /** {@inheritDoc EngineLogTileStore.engineLogTiles} */
  async engineLogTiles(level: number, from: number, to: number): Promise<Uint8Array[]> {
    this.live();
    return (await this.query<{ hashes: Buffer }>('read the engine log tiles', this.logSql.tiles, [level, from, to])).map((r) => new Uint8Array(r.hashes));
  }

  /** {@inheritDoc EngineLogStore.claimEngineLogKey} */
  async claimEngineLogKey(origin: string, verifierKey: string): Promise<EngineLogKeyRecord> {
    this.live();
    const read = () => this.query<{ origin: string; verifier_key: string }>('record the engine log key', this.logSql.claimKey, [origin, verifierKey]);
    // As with a tile: a concurrent first claim committed after this statement's snapshot is visible to the next one.
    const r = (await read())[0] ?? (await read())[0];
    if (r === undefined) throw new TallyError('TALLY_STORE_IO', 'the engine log key is missing right after it was written');
    return { origin: r.origin, verifierKey: r.verifier_key };
  }

  /** {@inheritDoc EngineLogTileStore.putEngineLogTile} */
  async putEngineLogTile(level: number, index: number, hashes: Uint8Array): Promise<Uint8Array> {
    this.live();
    checkTile(level, index, hashes);
    const rows = await this.query<{ hashes: Buffer }>('write an engine log tile', this.logSql.putTile, [level, index, buffer(hashes)]);
    // A concurrent writer committed the row after this statement's snapshot: it is visible to the next one.
    if (rows[0] === undefined) rows.push(...(await this.query<{ hashes: Buffer }>('read the engine log tiles', this.logSql.tiles, [level, index, index + 1])));
    if (rows[0] === undefined) throw new TallyError('TALLY_STORE_IO', `engine log tile ${level}/${index} is missing right after it was written`);
    return new Uint8Array(rows[0].hashes);
  }

  async signedCheckpoints(origin: string): Promise<SignedCheckpointRecord[]> {
    this.live();
    const rows = await this.query<SignedRow>('read the signing log', `SELECT origin, size, root, signed_at FROM ${this.t.signed} WHERE origin = $1 ORDER BY size`, [origin]);
    return rows.map(toSigned);
  }

  /**
   * Whether the store can commit right now: a pooled connection answers and
   * its transactions are not read-only (`default_transaction_read_only`, a
   * hot standby after a failover). Never throws.
   */
  async health(): Promise<StoreHealth> {
    if (this.closed) return { ok: false, code: 'TALLY_STORE_CLOSED', message: `${this.name} is closed.` };
    try {
      const r = await this.pool.query<{ ro: string }>('SELECT current_setting($1) AS ro', ['transaction_read_only']);
      if (r.rows[0]?.ro !== 'off') return { ok: false, code: 'TALLY_STORE_IO', message: `PostgreSQL transactions are read-only (${this.name}).` };
      return { ok: true };
    } catch (cause) {
      return { ok: false, code: 'TALLY_STORE_IO', message: `PostgreSQL does not answer (${this.name}): ${String(cause)}` };
    }
  }

  /** The primary's streaming standbys and whether commits wait for a synchronous one. */
  async replication(): Promise<ReplicationStatus> {
    this.live();
    return replicationStatus((await this.query<{ standbys: number; synchronous: number; commit: string }>('read the replication state', REPLICATION_SQL, []))[0]);
  }

  /** Keeps a collected cosignature (the first line per origin, size and witness). */
  async recordCosignature(r: CosignatureRecord): Promise<void> {
    this.live();
    await this.query('record a cosignature', `INSERT INTO ${pg.escapeIdentifier(this.schema)}.cosignatures (origin, size, root, witness, line) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, [r.origin, r.size, r.root, r.witness, r.line]);
  }

  async cosignatures(origin: string, size: number): Promise<CosignatureRecord[]> {
    this.live();
    const rows = await this.query<{ origin: string; size: string | number; root: string; witness: string; line: string }>('read cosignatures', `SELECT origin, size, root, witness, line FROM ${pg.escapeIdentifier(this.schema)}.cosignatures WHERE origin = $1 AND size = $2 ORDER BY witness`, [origin, size]);
    return rows.map((x) => ({ origin: x.origin, size: Number(x.size), root: x.root, witness: x.witness, line: x.line }));
  }

  async recordWitnessSize(witness: string, origin: string, size: number): Promise<void> {
    this.live();
    await this.query('record a witness size', `INSERT INTO ${pg.escapeIdentifier(this.schema)}.witness_sizes (witness, origin, size) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [witness, origin, size]);
  }

  async witnessSize(witness: string, origin: string): Promise<number | undefined> {
    this.live();
    const rows = await this.query<{ size: string | number | null }>('read witness sizes', `SELECT max(size) AS size FROM ${pg.escapeIdentifier(this.schema)}.witness_sizes WHERE witness = $1 AND origin = $2`, [witness, origin]);
    const v = rows[0]?.size;
    return v === null || v === undefined ? undefined : Number(v);
  }

  /** Ends the pool (after queued appends and in-flight queries finish). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.group.drained();
    this.lane.close();
    await this.pool.end();
  }

  private live(): void {
    if (this.closed) throw new TallyError('TALLY_STORE_CLOSED', `${this.name} is closed.`);
  }

  /** Runs one statement (a prepared one, parsed and planned once per connection, when `name` is given). */
  private async query<R extends object>(what: string, sql: string, params: unknown[], name?: string): Promise<R[]> {
    try {
      return await retrying(() => (name === undefined ? this.pool.query<R>(sql, params) : this.pool.query<R>({ name, text: sql, values: params })));
    } catch (cause) {
      throw ioError(this.name, what, cause);
    }
  }
}

function buffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

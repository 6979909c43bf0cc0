/**
 * The shared durable store: PostgreSQL through a `pg` connection pool. Any
 * number of engine processes may use one database: compare-and-append is one
 * transaction whose first statement is a conditional `UPDATE` of the session
 * row (the row lock serialises writers of one session; the losers see the new
 * head and write nothing), and the `(agent_id, nonce)` primary key makes a
 * nonce reservation win exactly once across all sessions.
 */
import pg from 'pg';
import { TallyError } from '../../protocol/errors.js';
import type { SessionPhase } from '../../protocol/index.js';
import type { AppendOutcome, AppendRequest, NonceClaim, NonceOwner, SessionHead, StoredEntry, TranscriptStore } from '../types.js';
import { POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION, POSTGRES_VERSION_TABLE_SQL } from './migrations.js';

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
  /** Pool size (default 10). Concurrent appends of different sessions run on different connections. */
  readonly poolSize?: number;
}

/** The default schema. */
export const DEFAULT_PG_SCHEMA = 'tally';

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const MAX_TX_ATTEMPTS = 5;
// 40001 serialization_failure, 40P01 deadlock_detected: safe to run again.
const RETRYABLE = new Set(['40001', '40P01']);

interface HeadRow {
  readonly size: number;
  readonly head: string;
  readonly frontier: string[];
  readonly phase: SessionPhase;
}
interface EntryRow {
  readonly idx: number;
  readonly hash: string;
  readonly kind: StoredEntry['kind'];
  readonly ordinal: number | null;
  readonly bytes: Buffer;
}
interface OwnerRow {
  readonly intent_hash: string;
  readonly session_id: string;
  readonly idx: number;
}

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
export class PostgresStore implements TranscriptStore {
  readonly name: string;
  /** The schema holding the tables. */
  readonly schema: string;
  private readonly pool: pg.Pool;
  private readonly t: { readonly sessions: string; readonly entries: string; readonly nonces: string; readonly version: string };
  private closed = false;

  private constructor(pool: pg.Pool, schema: string, name: string) {
    this.pool = pool;
    this.schema = schema;
    this.name = name;
    const s = pg.escapeIdentifier(schema);
    this.t = { sessions: `${s}.sessions`, entries: `${s}.entries`, nonces: `${s}.nonces`, version: `${s}.tally_schema` };
  }

  /** Connects, creates the schema if needed and runs pending migrations (serialised across processes). */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const schema = options.schema ?? DEFAULT_PG_SCHEMA;
    if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) throw new RangeError(`schema must match ${SCHEMA_NAME}, got ${JSON.stringify(schema)}`);
    const poolSize = options.poolSize ?? 10;
    if (!Number.isSafeInteger(poolSize) || poolSize < 1) throw new RangeError(`poolSize must be a positive integer, got ${poolSize}`);
    const pool = new pg.Pool({ connectionString: options.url, max: poolSize });
    // An idle client that loses its connection emits 'error' on the pool; without a
    // listener that would crash the process. The next query reports the problem.
    pool.on('error', () => {});
    const store = new PostgresStore(pool, schema, `postgres:${redact(options.url)}#${schema}`);
    try {
      await store.migrate();
    } catch (cause) {
      await pool.end().catch(() => {});
      if (cause instanceof TallyError && cause.code === 'TALLY_STORE_SCHEMA_TOO_NEW') throw cause;
      const details = cause instanceof TallyError ? (cause.details ?? cause.shortMessage) : String(cause);
      throw new TallyError('TALLY_STORE_OPEN', `Cannot open PostgreSQL store ${store.name}.`, { details, cause });
    }
    return store;
  }

  /** The schema version recorded in the database. */
  async schemaVersion(): Promise<number> {
    this.live();
    const r = await this.query<{ v: number | null }>('read the schema version', `SELECT MAX(version) AS v FROM ${this.t.version}`, []);
    return r[0]?.v ?? 0;
  }

  async createSession(genesis: StoredEntry, head: SessionHead): Promise<'created' | 'exists'> {
    this.live();
    if (genesis.index !== 0 || head.size !== 1 || head.head !== genesis.hash) {
      throw new TallyError('TALLY_STORE_MISUSE', 'createSession needs the genesis entry (index 0) and the head of size 1 it makes.');
    }
    return this.transaction('create a session', async (c) => {
      const r = await c.query(`INSERT INTO ${this.t.sessions} (id, size, head, frontier, phase) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING`, [
        head.sessionId,
        head.size,
        head.head,
        head.frontier,
        head.phase,
      ]);
      if (r.rowCount !== 1) return { commit: false, value: 'exists' as const };
      await this.insertEntry(c, head.sessionId, genesis);
      return { commit: true, value: 'created' as const };
    });
  }

  async append(req: AppendRequest): Promise<AppendOutcome> {
    this.live();
    checkRequest(req);
    const nonces = sortedDistinct(req.nonces);
    const outcome = await this.transaction('append', async (c) => {
      const n = req.next;
      const u = await c.query(
        `UPDATE ${this.t.sessions} SET size = $4, head = $5, frontier = $6, phase = $7 WHERE id = $1 AND size = $2 AND head = $3 AND phase <> 'sealed'`,
        [req.sessionId, req.expected.size, req.expected.head, n.size, n.head, n.frontier, n.phase],
      );
      if (u.rowCount !== 1) {
        const h = await c.query<{ phase: string }>(`SELECT phase FROM ${this.t.sessions} WHERE id = $1`, [req.sessionId]);
        const phase = h.rows[0]?.phase;
        const reason = phase === undefined ? 'unknown-session' : phase === 'sealed' ? 'sealed' : 'head-moved';
        return { commit: false, value: { ok: false, reason } as AppendOutcome };
      }
      if (nonces.length > 0) {
        // ON CONFLICT DO NOTHING waits for a concurrent reserver of the same
        // nonce to commit or abort, then inserts or skips: fewer rows = taken.
        const r = await c.query(
          `INSERT INTO ${this.t.nonces} (agent_id, nonce, intent_hash, session_id, idx)
           SELECT a, n, h, $4, $5 FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS x(a, n, h, o) ORDER BY o
           ON CONFLICT DO NOTHING`,
          [nonces.map((x) => x.agentId), nonces.map((x) => x.nonce), nonces.map((x) => x.intentHash), req.sessionId, req.entry.index],
        );
        if (r.rowCount !== nonces.length) return { commit: false, value: undefined };
      }
      await this.insertEntry(c, req.sessionId, req.entry);
      return { commit: true, value: { ok: true } as AppendOutcome };
    });
    if (outcome) return outcome;
    // A nonce was taken: the transaction rolled back; name the first owner in request order.
    for (const claim of req.nonces) {
      const owner = await this.nonceOwner(claim.agentId, claim.nonce);
      if (owner) return { ok: false, reason: 'nonce-taken', agentId: claim.agentId, nonce: claim.nonce, owner };
    }
    throw new TallyError('TALLY_STORE_IO', 'A nonce reservation conflicted but no owner can be found.');
  }

  async loadHead(sessionId: string): Promise<SessionHead | undefined> {
    this.live();
    const rows = await this.query<HeadRow>('read a head', `SELECT size, head, frontier, phase FROM ${this.t.sessions} WHERE id = $1`, [sessionId]);
    const r = rows[0];
    return r ? { sessionId, size: r.size, head: r.head, frontier: r.frontier, phase: r.phase } : undefined;
  }

  async readRange(sessionId: string, from: number, to: number): Promise<StoredEntry[]> {
    this.live();
    if (to <= from) return [];
    const rows = await this.query<EntryRow>(
      'read entries',
      `SELECT idx, hash, kind, ordinal, bytes FROM ${this.t.entries} WHERE session_id = $1 AND idx >= $2 AND idx < $3 ORDER BY idx`,
      [sessionId, Math.max(0, from), Math.min(to, 2_147_483_647)],
    );
    return rows.map(toEntry);
  }

  async readSlot(sessionId: string, kind: 'frame' | 'turn', ordinal: number): Promise<StoredEntry | undefined> {
    this.live();
    const rows = await this.query<EntryRow>(
      'read a slot',
      `SELECT idx, hash, kind, ordinal, bytes FROM ${this.t.entries} WHERE session_id = $1 AND kind = $2 AND ordinal = $3`,
      [sessionId, kind, ordinal],
    );
    return rows[0] ? toEntry(rows[0]) : undefined;
  }

  async nonceOwner(agentId: string, nonce: string): Promise<NonceOwner | undefined> {
    this.live();
    const rows = await this.query<OwnerRow>('read a nonce', `SELECT intent_hash, session_id, idx FROM ${this.t.nonces} WHERE agent_id = $1 AND nonce = $2`, [agentId, nonce]);
    const r = rows[0];
    return r ? { intentHash: r.intent_hash, sessionId: r.session_id, index: r.idx } : undefined;
  }

  async listSessions(): Promise<string[]> {
    this.live();
    const rows = await this.query<{ id: string }>('list sessions', `SELECT id FROM ${this.t.sessions} ORDER BY seq`, []);
    return rows.map((r) => r.id);
  }

  /** Ends the pool (after in-flight queries finish). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  private live(): void {
    if (this.closed) throw new TallyError('TALLY_STORE_CLOSED', `${this.name} is closed.`);
  }

  private async insertEntry(c: pg.PoolClient, sessionId: string, e: StoredEntry): Promise<void> {
    await c.query(`INSERT INTO ${this.t.entries} (session_id, idx, hash, kind, ordinal, bytes) VALUES ($1, $2, $3, $4, $5, $6)`, [
      sessionId,
      e.index,
      e.hash,
      e.kind,
      e.ordinal ?? null,
      Buffer.from(e.bytes.buffer, e.bytes.byteOffset, e.bytes.byteLength),
    ]);
  }

  private async migrate(): Promise<void> {
    const s = pg.escapeIdentifier(this.schema);
    await this.transaction('migrate', async (c) => {
      await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`agent-tally:migrate:${this.schema}`]);
      await c.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await c.query(POSTGRES_VERSION_TABLE_SQL(s));
      const r = await c.query<{ v: number | null }>(`SELECT MAX(version) AS v FROM ${this.t.version}`);
      const current = r.rows[0]?.v ?? 0;
      if (current > POSTGRES_SCHEMA_VERSION) {
        throw new TallyError('TALLY_STORE_SCHEMA_TOO_NEW', `PostgreSQL schema ${this.schema} has version ${current}; this release understands up to ${POSTGRES_SCHEMA_VERSION}.`);
      }
      for (const m of POSTGRES_MIGRATIONS) {
        if (m.version <= current) continue;
        await c.query(m.sql(s));
        await c.query(`INSERT INTO ${this.t.version} (version, name) VALUES ($1, $2)`, [m.version, m.name]);
      }
      return { commit: true, value: undefined };
    });
  }

  private async query<R extends object>(what: string, sql: string, params: unknown[]): Promise<R[]> {
    try {
      return (await this.pool.query<R>(sql, params)).rows;
    } catch (cause) {
      throw ioError(this.name, what, cause);
    }
  }

  /** Runs `fn` in a transaction on one pooled connection; commits or rolls back as `fn` says; retries deadlocks. */
  private async transaction<T>(what: string, fn: (c: pg.PoolClient) => Promise<{ commit: boolean; value: T }>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } catch (cause) {
        throw ioError(this.name, what, cause);
      }
      let broken = false;
      try {
        await client.query('BEGIN');
        const r = await fn(client);
        await client.query(r.commit ? 'COMMIT' : 'ROLLBACK');
        return r.value;
      } catch (cause) {
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
        const code = (cause as { code?: unknown } | null)?.code;
        if (typeof code === 'string' && RETRYABLE.has(code) && attempt < MAX_TX_ATTEMPTS) continue;
        throw ioError(this.name, what, cause);
      } finally {
        client.release(broken);
      }
    }
  }
}

function checkRequest(r: AppendRequest): void {
  const e = r.entry;
  if (e.index !== r.expected.size || r.next.size !== r.expected.size + 1 || r.next.head !== e.hash || r.next.sessionId !== r.sessionId) {
    throw new TallyError('TALLY_STORE_MISUSE', 'An append request must add entry `expected.size` and produce the head (size + 1, entry hash) of the same session.');
  }
}

// One order for every transaction, so two appends reserving overlapping nonce sets cannot deadlock.
function sortedDistinct(claims: readonly NonceClaim[]): NonceClaim[] {
  const byKey = new Map<string, NonceClaim>();
  for (const c of claims) {
    const k = `${c.agentId.length}:${c.agentId}:${c.nonce}`;
    if (!byKey.has(k)) byKey.set(k, c);
  }
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, c]) => c);
}

function toEntry(r: EntryRow): StoredEntry {
  const bytes = new Uint8Array(r.bytes);
  return r.ordinal === null ? { index: r.idx, hash: r.hash, bytes, kind: r.kind } : { index: r.idx, hash: r.hash, bytes, kind: r.kind, ordinal: r.ordinal };
}

/** The URL without its password, for names and messages. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    u.search = '';
    return `${u.host}${u.pathname}`;
  } catch {
    return '(unparsable url)';
  }
}

function ioError(name: string, what: string, cause: unknown): TallyError {
  if (cause instanceof TallyError) return cause;
  return new TallyError('TALLY_STORE_IO', `PostgreSQL could not ${what} (${name}).`, { details: String(cause), cause });
}

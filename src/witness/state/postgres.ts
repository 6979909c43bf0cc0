import pg from 'pg';
import { TallyError } from '../../protocol/errors.js';
import type { WitnessHead, WitnessRecord, WitnessStore } from './types.js';

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Options of {@link PostgresWitnessStore.open}. */
export interface PostgresWitnessStoreOptions {
  /** `postgres://…` connection URL. */
  readonly url: string;
  /** Schema holding the witness tables (default `tally_witness`). */
  readonly schema?: string;
}

function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

/**
 * Witness state in PostgreSQL. The swap is one conditional `UPDATE` (or
 * `INSERT … ON CONFLICT DO NOTHING`), a transaction of its own: atomic across
 * witness processes sharing the database, durable once committed.
 */
export class PostgresWitnessStore implements WitnessStore {
  readonly name: string;
  private readonly pool: pg.Pool;
  private readonly latestTable: string;
  private readonly keysTable: string;

  private constructor(pool: pg.Pool, schema: string, url: string) {
    this.pool = pool;
    const s = pg.escapeIdentifier(schema);
    this.latestTable = `${s}.witness_latest`;
    this.keysTable = `${s}.witness_log_keys`;
    this.name = `postgres:${redact(url)}#${schema}`;
  }

  /** Connects and creates the schema and tables if needed. Throws `TALLY_WITNESS_STORE_OPEN`. */
  static async open(options: PostgresWitnessStoreOptions): Promise<PostgresWitnessStore> {
    const schema = options.schema ?? 'tally_witness';
    if (!SCHEMA_NAME.test(schema)) throw new RangeError(`schema must match ${SCHEMA_NAME}, got ${JSON.stringify(schema)}`);
    const pool = new pg.Pool({ connectionString: options.url, max: 4 });
    pool.on('error', () => {});
    const store = new PostgresWitnessStore(pool, schema, options.url);
    try {
      const s = pg.escapeIdentifier(schema);
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`tally-witness-schema:${schema}`]);
        await c.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
        await c.query(
          `CREATE TABLE IF NOT EXISTS ${store.latestTable} (origin TEXT PRIMARY KEY, size BIGINT NOT NULL CHECK (size >= 0), root BYTEA NOT NULL CHECK (length(root) = 32), signed_checkpoint TEXT NOT NULL, time BIGINT NOT NULL)`,
        );
        await c.query(`CREATE TABLE IF NOT EXISTS ${store.keysTable} (seq BIGSERIAL PRIMARY KEY, vkey TEXT NOT NULL UNIQUE)`);
        await c.query('COMMIT');
      } catch (e) {
        await c.query('ROLLBACK').catch(() => {});
        throw e;
      } finally {
        c.release();
      }
    } catch (cause) {
      await pool.end().catch(() => {});
      throw new TallyError('TALLY_WITNESS_STORE_OPEN', 'Cannot open the witness database.', { details: `${store.name}: ${String(cause)}`, cause });
    }
    return store;
  }

  async latest(origin: string): Promise<WitnessRecord | undefined> {
    const r = await this.pool.query<{ size: string; root: Buffer; signed_checkpoint: string; time: string }>(`SELECT size, root, signed_checkpoint, time FROM ${this.latestTable} WHERE origin = $1`, [origin]);
    const row = r.rows[0];
    return row === undefined ? undefined : { size: Number(row.size), root: new Uint8Array(row.root), signedCheckpoint: row.signed_checkpoint, time: Number(row.time) };
  }

  async compareAndSwap(origin: string, expected: WitnessHead | undefined, next: WitnessRecord): Promise<boolean> {
    const root = Buffer.from(next.root);
    const r =
      expected === undefined
        ? await this.pool.query(`INSERT INTO ${this.latestTable} (origin, size, root, signed_checkpoint, time) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (origin) DO NOTHING`, [origin, next.size, root, next.signedCheckpoint, next.time])
        : await this.pool.query(`UPDATE ${this.latestTable} SET size = $1, root = $2, signed_checkpoint = $3, time = $4 WHERE origin = $5 AND size = $6 AND root = $7`, [
            next.size,
            root,
            next.signedCheckpoint,
            next.time,
            origin,
            expected.size,
            Buffer.from(expected.root),
          ]);
    return r.rowCount === 1;
  }

  async logKeys(): Promise<string[]> {
    return (await this.pool.query<{ vkey: string }>(`SELECT vkey FROM ${this.keysTable} ORDER BY seq`)).rows.map((r) => r.vkey);
  }

  async addLogKey(vkey: string): Promise<void> {
    await this.pool.query(`INSERT INTO ${this.keysTable} (vkey) VALUES ($1) ON CONFLICT (vkey) DO NOTHING`, [vkey]);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/**
 * Runs the pending migrations of a PostgreSQL store's schema
 * (`./migrations.ts`), in one transaction under an advisory lock, so many
 * engine processes may open a fresh database at once and only one migrates.
 */
import pg from 'pg';
import { TallyError } from '../../protocol/errors.js';
import { POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION, POSTGRES_VERSION_TABLE_SQL } from './migrations.js';
import { transaction } from './sql.js';

/**
 * Creates `schema` if needed and applies every migration above its version.
 * Throws `TALLY_STORE_SCHEMA_TOO_NEW` if a newer release wrote it; `name`
 * names the store in errors.
 */
export async function migrate(pool: pg.Pool, schema: string, name: string): Promise<void> {
  const s = pg.escapeIdentifier(schema);
  await transaction(pool, name, 'migrate', async (c) => {
    await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`agent-tally:migrate:${schema}`]);
    await c.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await c.query(POSTGRES_VERSION_TABLE_SQL(s));
    const r = await c.query<{ v: number | null }>(`SELECT MAX(version) AS v FROM ${s}.tally_schema`);
    const current = r.rows[0]?.v ?? 0;
    if (current > POSTGRES_SCHEMA_VERSION) {
      throw new TallyError('TALLY_STORE_SCHEMA_TOO_NEW', `PostgreSQL schema ${schema} has version ${current}; this release understands up to ${POSTGRES_SCHEMA_VERSION}.`);
    }
    for (const m of POSTGRES_MIGRATIONS) {
      if (m.version <= current) continue;
      await c.query(m.sql(s));
      await c.query(`INSERT INTO ${s}.tally_schema (version, name) VALUES ($1, $2)`, [m.version, m.name]);
    }
    return { commit: true, value: undefined };
  });
}

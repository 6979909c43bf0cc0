/**
 * PostgreSQL for the store tests: the server named by TALLY_PG_URL (on our
 * machines `postgres://postgres@127.0.0.1:5432/test`, trust auth). When the
 * variable is unset or the server does not answer, Postgres tests SKIP and
 * say how to enable them.
 */
import pg from 'pg';
import { randomBytes } from 'node:crypto';

/** The server URL, if configured. */
export const PG_URL = process.env.TALLY_PG_URL;

async function probe(url: string | undefined): Promise<string | undefined> {
  if (!url) return 'TALLY_PG_URL is not set';
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return undefined;
  } catch (e) {
    return `cannot reach ${url}: ${String(e)}`;
  } finally {
    await c.end().catch(() => {});
  }
}

/** Why Postgres tests are skipped, or `undefined` when they run. */
export const pgSkipReason = await probe(PG_URL);

/** True when Postgres tests run. */
export const pgReady = pgSkipReason === undefined;

/** Prints (once per file) why Postgres tests are skipped and how to enable them. */
export function warnIfSkipped(file: string): void {
  if (pgSkipReason !== undefined) {
    console.warn(
      `[${file}] PostgreSQL tests SKIPPED (${pgSkipReason}). To run them, start a PostgreSQL server and set ` +
        'TALLY_PG_URL, e.g. TALLY_PG_URL=postgres://postgres@127.0.0.1:5432/test npx vitest run tests/store',
    );
  }
}

/** A schema name no other run uses. */
export function freshSchemaName(tag: string): string {
  return `tally_t_${tag}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** Runs SQL directly (as a tamperer or an old release would). */
export async function pgExec(sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: PG_URL! });
  await c.connect();
  try {
    return await c.query(sql, params);
  } finally {
    await c.end();
  }
}

/** Drops a test schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  await pgExec(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
}

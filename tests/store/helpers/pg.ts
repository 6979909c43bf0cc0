/**
 * PostgreSQL for the store tests: the server named by TALLY_PG_URL (on our
 * machines `postgres://postgres@127.0.0.1:5432/test`, trust auth).
 *
 * Set means required: when TALLY_PG_URL is set and the server does not
 * answer, importing this module FAILS with the connection error (a CI job
 * with a dead database is red, never green with skips). Only when the
 * variable is unset do the Postgres tests skip, and each file says so.
 */
import pg from 'pg';
import { randomBytes } from 'node:crypto';

/** The server URL, if configured. */
export const PG_URL = process.env.TALLY_PG_URL || undefined;

/** Connects once to the configured server; throws with the connection error when it does not answer. */
export async function probePostgres(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 15_000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
  } catch (e) {
    throw new Error(`TALLY_PG_URL is set (${url}) but PostgreSQL does not answer: ${String(e)}. Start the server, or unset TALLY_PG_URL to skip the PostgreSQL tests.`, { cause: e });
  } finally {
    await c.end().catch(() => {});
  }
}

if (PG_URL !== undefined) await probePostgres(PG_URL);

/** Why Postgres tests are skipped (only ever: the variable is unset), or `undefined` when they run. */
export const pgSkipReason: string | undefined = PG_URL === undefined ? 'TALLY_PG_URL is not set' : undefined;

/** True when Postgres tests run (TALLY_PG_URL is set and the server answered). */
export const pgReady = pgSkipReason === undefined;

/** Prints (once per file) that Postgres tests are skipped because TALLY_PG_URL is unset, and how to enable them. */
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

/**
 * Empties `tables` (a comma-separated list of quoted names) as only an
 * operator can: the history refuses TRUNCATE (migration 8), so this switches
 * triggers off for the one transaction (`session_replication_role`, a
 * superuser setting), which a test does between runs.
 */
export async function pgTruncateAsOperator(tables: string): Promise<void> {
  await pgExec(`BEGIN; SET LOCAL session_replication_role = replica; TRUNCATE ${tables} RESTART IDENTITY; COMMIT;`);
}

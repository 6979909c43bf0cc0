/**
 * The PostgreSQL store's statement plumbing: retries of deadlock and
 * serialization victims, transactions on one pooled connection, and its
 * error and name helpers.
 */
import pg from 'pg';
import { TallyError } from '../../protocol/errors.js';

const MAX_TX_ATTEMPTS = 5;
// 40001 serialization_failure, 40P01 deadlock_detected: safe to run again.
const RETRYABLE = new Set(['40001', '40P01']);

/** Runs one statement, again if the server aborted it as a deadlock or serialization victim. */
export async function retrying<R extends object>(run: () => Promise<pg.QueryResult<R>>): Promise<R[]> {
  return (await retryingCall(run)).rows;
}

/** Runs `run` (statements outside a transaction), again if the server aborted one as a deadlock or serialization victim. */
export async function retryingCall<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (cause) {
      const code = (cause as { code?: unknown } | null)?.code;
      if (typeof code === 'string' && RETRYABLE.has(code) && attempt < MAX_TX_ATTEMPTS) continue;
      throw cause;
    }
  }
}

/** Runs `fn` in a transaction on one pooled connection; commits or rolls back as `fn` says; retries deadlocks. */
export async function transaction<T>(pool: pg.Pool, name: string, what: string, fn: (c: pg.PoolClient) => Promise<{ commit: boolean; value: T }>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (cause) {
      throw ioError(name, what, cause);
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
      throw ioError(name, what, cause);
    } finally {
      client.release(broken);
    }
  }
}

/** The URL without its password, for names and messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    u.search = '';
    return `${u.host}${u.pathname}`;
  } catch {
    return '(unparsable url)';
  }
}

/** A store I/O error naming the store and what it could not do (a TallyError passes through). */
export function ioError(name: string, what: string, cause: unknown): TallyError {
  if (cause instanceof TallyError) return cause;
  return new TallyError('TALLY_STORE_IO', `PostgreSQL could not ${what} (${name}).`, { details: String(cause), cause });
}

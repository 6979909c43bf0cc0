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

/**
 * Checks a connection out of `pool` with `onError` listening on it from the
 * moment the pool hands it over. A checked-out connection has no listener of
 * the pool's, and the promise form of `pool.connect()` resumes its caller a
 * microtask later: a backend ended right after its start (pg_terminate_backend,
 * a failover) can send its FATAL in the same read as ReadyForQuery, and pg
 * emits it on the client before that microtask runs. With no listener, that
 * crashed the process (seen under load in tests/faults/postgres).
 */
export function checkout(pool: pg.Pool, onError: (client: pg.PoolClient, e: Error) => void): Promise<Checkout> {
  return new Promise((resolve, reject) => {
    pool.connect((err, client) => {
      if (err || client === undefined) {
        reject(err ?? new Error('the pool answered no connection'));
        return;
      }
      const listener = (e: Error): void => onError(client, e);
      client.on('error', listener);
      resolve({
        client,
        release(broken) {
          // A healthy connection goes back without our listener (the pool's idle one takes over);
          // a broken one keeps it while the pool closes it, so a late error is still caught.
          if (broken === undefined) client.removeListener('error', listener);
          client.release(broken);
        },
      });
    });
  });
}

/** A connection checked out by {@link checkout}: give it back with `release` (a cause, or `true`, when it is broken). */
export interface Checkout {
  readonly client: pg.PoolClient;
  release(broken?: Error | true): void;
}

/** Runs `fn` in a transaction on one pooled connection; commits or rolls back as `fn` says; retries deadlocks. */
export async function transaction<T>(pool: pg.Pool, name: string, what: string, fn: (c: pg.PoolClient) => Promise<{ commit: boolean; value: T }>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let held: Checkout;
    // A backend ended while the connection is checked out marks it broken; the next statement
    // fails and the transaction is refused as store I/O (tests/faults/postgres).
    let broken = false;
    try {
      held = await checkout(pool, () => {
        broken = true;
      });
    } catch (cause) {
      throw ioError(name, what, cause);
    }
    const client = held.client;
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
      held.release(broken ? true : undefined);
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

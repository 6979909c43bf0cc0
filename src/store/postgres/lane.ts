/**
 * The lone-append lane of the PostgreSQL store: one pooled connection held
 * while the store is open, for appends that go out alone.
 *
 * A lone append is one statement on one connection, so the whole cost is
 * the server's and the round trip's, and taking a connection from `pg.Pool`
 * and giving it back around every statement (the pool's timers, listeners
 * and callbacks) is the largest part of the rest (measured: 14–18 µs of CPU
 * per append; docs/PERFORMANCE.md, "PostgreSQL appends").
 *
 * The lane runs one statement at a time: while it is busy, another lone
 * append goes through the pool, as do batches and reads, so the lane never
 * queues work behind work. It is taken from the pool on first use and
 * given back when the store closes. It counts against `poolSize`: a store
 * of one connection has no lane, and in a store of two, batches, reads and
 * lone appends the lane cannot take share the other connection. If the connection fails, whether idle
 * (its `error` event) or under a statement (a network error, or a server
 * reply of class 08 connection exception or 57 operator intervention), it
 * is given back as broken, which makes the pool close it, and the next lone
 * append takes a fresh one. The statement that met the failure fails as it
 * would have on any pooled connection.
 */
import pg from 'pg';
import { TallyError } from '../../protocol/errors.js';
import { checkout, type Checkout } from './sql.js';

/** Runs lone statements on one held connection (see the module comment). */
export class Lane {
  private held: Checkout | undefined;
  private busy = false;
  private closed = false;

  /** `enabled` false (a pool of one connection) sends everything through the pool. */
  constructor(
    private readonly pool: pg.Pool,
    private readonly enabled: boolean,
  ) {}

  /** Runs `fn` on the held connection if it is free, else on the pool. */
  async run<T>(fn: (on: pg.Pool | pg.PoolClient) => Promise<T>): Promise<T> {
    if (!this.enabled || this.busy || this.closed) return fn(this.pool);
    this.busy = true;
    try {
      const c = this.held?.client ?? (await this.take());
      try {
        return await fn(c);
      } catch (e) {
        if (connectionLost(e)) this.drop(c, e);
        throw e;
      }
    } finally {
      this.busy = false;
      if (this.closed) this.giveBack();
    }
  }

  /** Gives the held connection back to the pool (at once, or when its statement ends); later statements use the pool. */
  close(): void {
    this.closed = true;
    if (!this.busy) this.giveBack();
  }

  private async take(): Promise<pg.PoolClient> {
    // Listening from the moment the pool hands it over (sql.ts checkout): losing it while idle
    // would otherwise crash the process.
    this.held = await checkout(this.pool, (client, e) => this.drop(client, e));
    return this.held.client;
  }

  private giveBack(): void {
    const h = this.held;
    this.held = undefined;
    h?.release();
  }

  /** Gives `c` back as broken (the pool closes it); its listener stays, so a late error on it is still caught. */
  private drop(c: pg.PoolClient, cause: unknown): void {
    const h = this.held;
    if (h?.client !== c) return;
    this.held = undefined;
    h.release(cause instanceof Error ? cause : new Error(String(cause)));
  }
}

/**
 * Whether `e` means the connection itself is gone: a server reply of class
 * 08 (connection exception) or 57P01–57P05 (the server ends the session),
 * or an error of the client or socket. A statement the server refused (any
 * other reply, including 57014 query canceled) or a store error raised on
 * a good answer leaves the connection usable.
 */
function connectionLost(e: unknown): boolean {
  if (e instanceof TallyError) return false;
  if (!(e instanceof pg.DatabaseError)) return true;
  const code = e.code ?? '';
  return code.startsWith('08') || /^57P0[1-5]$/.test(code);
}

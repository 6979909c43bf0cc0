/**
 * The one copy of the slow-client limits every Tally HTTP server runs with
 * (`tally serve`, `tally judge serve`, `tally witness serve`): how long a
 * client may take to send its headers and its whole request, and how long an
 * idle keep-alive connection is held. Without them node:http holds a stalled
 * header for its own defaults (60 s headers, 300 s request), checked only
 * every 30 s.
 */
import type { ServerOptions } from 'node:http';

/** Slow-client limits of a server; every one has a default. */
export interface HttpTimeouts {
  /** Time allowed to receive the request headers (default 10 s); past it the server answers 408 and closes. */
  readonly headersTimeoutMs: number;
  /** Time allowed to receive the whole request (default 30 s); past it the server answers 408 and closes. */
  readonly requestTimeoutMs: number;
  /** Idle keep-alive time (default 5 s). */
  readonly keepAliveTimeoutMs: number;
}

/** Default slow-client limits. */
export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
});

/** How often Node checks the header and request timeouts: a quarter of the shorter one, from 10 ms to 1 s. */
function checkingInterval(t: HttpTimeouts): number {
  const shortest = Math.min(...[t.headersTimeoutMs, t.requestTimeoutMs].filter((ms) => ms > 0));
  return Number.isFinite(shortest) ? Math.max(10, Math.min(1_000, Math.floor(shortest / 4))) : 1_000;
}

/**
 * The `node:http` `createServer` options for these limits (the defaults
 * filled in). Node checks both timeouts on `connectionsCheckingInterval`
 * (its default 30 s would let a 10 s timeout fire after up to 40 s).
 *
 * @example
 * const server = createServer(serverTimeoutOptions({ headersTimeoutMs: 2_000 }), handler);
 */
export function serverTimeoutOptions(timeouts: Partial<HttpTimeouts> = {}): ServerOptions {
  const t: HttpTimeouts = { ...DEFAULT_HTTP_TIMEOUTS, ...timeouts };
  return {
    headersTimeout: t.headersTimeoutMs,
    requestTimeout: t.requestTimeoutMs,
    keepAliveTimeout: t.keepAliveTimeoutMs,
    connectionsCheckingInterval: checkingInterval(t),
  };
}

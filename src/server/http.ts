/**
 * `tally serve`'s HTTP transport: JSON-RPC 2.0 at `POST /rpc` and plain GETs
 * for graders, behind bearer tokens, a per-token rate limit, a body-size and
 * a JSON-depth limit, header/request timeouts and a graceful close that lets
 * in-flight appends finish. See docs/WIRE.md for the reference.
 *
 * This file holds the server's life (listen, drain, close) and the routing up
 * to authentication; `POST /rpc` is answered by http-rpc.ts, the session GETs
 * by http-sessions.ts, replies and log lines by http-reply.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Notary } from '../receipt/index.js';
import type { Engine } from '../session/index.js';
import type { Authenticator, Principal } from './auth.js';
import { errInfo, HttpReplies, ms, rateLimited } from './http-reply.js';
import { serveRpc, type RpcRoute } from './http-rpc.js';
import { routeSession, type SessionRoutes } from './http-sessions.js';
import { createLogger, type Logger } from './log.js';
import { DEFAULT_LIMITS, type WireServerLimits } from './limits.js';
import { serverTimeoutOptions } from '../http/timeouts.js';
import { RateLimiter } from './rate-limit.js';
import { parseTarget } from './target.js';
import { WireService, type WireServiceOptions } from './service.js';
import { traceRequest } from '../telemetry/index.js';
import { PROMETHEUS_CONTENT_TYPE, type MetricsRenderer } from './metrics-http.js';
import { checkReadiness, type ReadyReport } from './ready.js';
import { isTilePath, serveTile, type TileRoutes } from './http-tiles.js';
import { serveSessionTile, sessionTilePath, type SessionTileRoutes } from './http-session-tiles.js';
import { SessionTrees } from '../receipt/session/trees.js';
import type { McpHttpRoute } from './mcp/http.js';

export { BUNDLE_RANGE_MAX } from './http-sessions.js';

/** Options of {@link createWireServer}. */
export interface WireServerOptions {
  /** The engine (use the root `createEngine` so intents are ruled on). */
  readonly engine: Engine;
  readonly auth: Authenticator;
  /** Structured logger (default: pino to stderr at `info`). */
  readonly logger?: Logger;
  readonly limits?: Partial<WireServerLimits>;
  /** Long-poll interval of `session/events` (ms). */
  readonly pollMs?: number;
  /** Signs checkpoints and receipts with the engine key (see {@link WireServiceOptions.notary}). */
  readonly notary?: Notary;
  /** Merkle tree cache for proofs (share the notary's). */
  readonly trees?: SessionTrees;
  /** Monotonic milliseconds for the rate limiter (default `performance.now`); tests inject one. */
  readonly clock?: () => number;
  /** Renders `GET /metrics` (Prometheus text, auditor tokens); without it the route is `not-found`. */
  readonly metrics?: MetricsRenderer;
  /** The checks of `GET /readyz` (default: {@link checkReadiness} of the engine's store). */
  readonly readiness?: () => Promise<ReadyReport>;
  /**
   * A static page served at `GET /` without a token (the grader's desk:
   * src/web), with its Content-Security-Policy header. The page holds no
   * data; everything it shows it fetches with the grader's own token.
   */
  readonly page?: { readonly html: string; readonly csp: string };
  /** The engine log's C2SP tlog-tiles read API, served without a token under `prefix` (src/server/http-tiles.ts). */
  readonly tiles?: TileRoutes;
}

/** Where a listening server is. */
export interface ListenAddress {
  readonly host: string;
  readonly port: number;
  readonly url: string;
}


/** An HTTP server speaking the wire; create with {@link createWireServer}. */
export class WireServer {
  /** The underlying node:http server. */
  readonly http: Server;
  /** The transport-free core (also used by `tally mcp`). */
  readonly service: WireService;
  readonly limits: WireServerLimits;
  private readonly auth: Authenticator;
  private readonly page: { readonly html: Buffer; readonly csp: string } | undefined;
  private readonly log: Logger;
  private readonly limiter: RateLimiter;
  private readonly shutdown = new AbortController();
  private inflight = 0;
  private idleWaiters: (() => void)[] = [];
  private closing: Promise<void> | undefined;
  private readonly replies: HttpReplies;
  private readonly rpcRoute: RpcRoute;
  private readonly sessionRoutes: SessionRoutes;
  private readonly sessionTiles: SessionTileRoutes;
  private readonly probes: Pick<WireServerOptions, 'metrics' | 'readiness'>;
  private readonly tiles: TileRoutes | undefined;
  /** The `/mcp` route, loaded on its first request (the MCP SDK is not loaded by servers that never see one). */
  private mcp: Promise<McpHttpRoute> | undefined;

  constructor(options: WireServerOptions) {
    this.probes = { readiness: options.readiness ?? (() => checkReadiness({ store: options.engine.store })), ...(options.metrics ? { metrics: options.metrics } : {}) };
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.auth = options.auth;
    this.page = options.page === undefined ? undefined : { html: Buffer.from(options.page.html, 'utf8'), csp: options.page.csp };
    this.tiles = options.tiles;
    this.log = options.logger ?? createLogger();
    this.limiter = new RateLimiter(this.limits.rate, options.clock);
    // One tree cache for proofs and the sessions' tiles (share the notary's when given).
    const trees = options.trees ?? new SessionTrees();
    this.service = new WireService(options.engine, {
      shutdown: this.shutdown.signal,
      ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
      ...(options.notary === undefined ? {} : { notary: options.notary }),
      trees,
    });
    this.replies = new HttpReplies(this.log, () => this.draining, this.limits.maxBodyBytes);
    this.rpcRoute = { service: this.service, replies: this.replies, limiter: this.limiter, limits: this.limits };
    this.sessionRoutes = { service: this.service, replies: this.replies, log: this.log, ...(options.tiles === undefined ? {} : { tiles: options.tiles }) };
    this.sessionTiles = { service: this.service, replies: this.replies, log: this.log, tiles: options.notary === undefined ? undefined : { engine: options.engine, notary: options.notary, trees } };
    this.http = createServer(
      serverTimeoutOptions(this.limits),
      (req, res) => void this.handle(req, res),
    );
  }

  /** Requests being handled right now. */
  get inFlight(): number {
    return this.inflight;
  }

  /** True once {@link close} was called. */
  get draining(): boolean {
    return this.shutdown.signal.aborted;
  }

  /**
   * Starts listening (port 0 picks a free port).
   *
   * @example
   * const { url } = await server.listen(0, '127.0.0.1');
   */
  listen(port: number, host = '127.0.0.1'): Promise<ListenAddress> {
    return new Promise((resolve, reject) => {
      const onError = (e: Error): void => reject(e);
      this.http.once('error', onError);
      this.http.listen(port, host, () => {
        this.http.off('error', onError);
        const a = this.http.address() as AddressInfo;
        const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
        resolve({ host: a.address, port: a.port, url: `http://${h}:${a.port}` });
      });
    });
  }

  /**
   * Graceful close: stops accepting connections, answers new requests on open
   * connections with 503, lets every in-flight request (appends included)
   * finish, then closes the connections. After `graceMs` the rest are cut.
   */
  close(graceMs = 10_000): Promise<void> {
    if (this.closing) return this.closing;
    this.shutdown.abort();
    this.closing = (async () => {
      await (await this.mcp)?.close();
      const closed = new Promise<void>((resolve) => this.http.close(() => resolve()));
      this.http.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.whenIdle(), new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
      this.http.closeIdleConnections();
      const cut = setTimeout(() => this.http.closeAllConnections(), 2_000);
      await closed;
      clearTimeout(cut);
      this.log.info({ event: 'closed', inFlight: this.inflight }, 'server closed');
    })();
    return this.closing;
  }

  /** Cuts every connection now (a second signal during a graceful close). */
  forceClose(): void {
    this.http.closeAllConnections();
  }

  private whenIdle(): Promise<void> {
    if (this.inflight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const t0 = performance.now();
    this.inflight++;
    res.once('close', () => {
      this.inflight--;
      if (this.inflight === 0) for (const w of this.idleWaiters.splice(0)) w();
    });
    try {
      await traceRequest(req.headers, req.method, (req.url ?? '/').split('?')[0]!, () => this.route(req, res, t0), () => res.statusCode);
    } catch (e) {
      this.log.error({ event: 'request-failed', err: errInfo(e) }, 'request failed');
      if (!res.headersSent) this.replies.sendError(req, res, { type: 'internal', message: 'internal error' });
      else res.destroy();
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse, t0: number): Promise<void> {
    const replies = this.replies;
    const target = parseTarget(req.url ?? '');
    if (!target) {
      // Before setPath: the plain {error} envelope, whatever the target spelled.
      return replies.refuse(req, res, t0, undefined, { type: 'malformed-target', message: 'the request target is not an origin-form path or an absolute http(s) URL' }, { connection: 'close' });
    }
    const path = target.path;
    replies.setPath(req, path);
    if (path === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
      replies.sendJson(res, this.draining ? 503 : 200, { ok: !this.draining });
      return;
    }
    if (path === '/readyz' && (req.method === 'GET' || req.method === 'HEAD')) return this.ready(res);
    if (path === '/' && this.page && (req.method === 'GET' || req.method === 'HEAD')) {
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-length': String(this.page.html.length),
        'content-security-policy': `${this.page.csp}; frame-ancestors 'none'`,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cross-origin-opener-policy': 'same-origin',
        ...replies.closeHeader(),
      });
      res.end(req.method === 'HEAD' ? undefined : this.page.html);
      this.log.info({ method: `${req.method} /`, status: 200, ms: ms(t0) }, 'page');
      return;
    }
    if (this.tiles && isTilePath(this.tiles, path)) {
      const status = await serveTile(this.tiles, req, res, path, replies.closeHeader());
      this.log.debug({ method: `${req.method} ${path}`, status, ms: ms(t0) }, 'tile');
      return;
    }
    if (this.draining) {
      return replies.refuse(req, res, t0, undefined, { type: 'unavailable', message: 'the server is shutting down; retry on another instance' }, { 'retry-after': '1' });
    }
    const principal = this.auth.authenticate(req.headers.authorization);
    if (!principal) {
      return replies.refuse(req, res, t0, undefined, { type: 'unauthorized', message: 'a valid bearer token is required (Authorization: Bearer <token>)' }, { 'www-authenticate': 'Bearer realm="tally"' });
    }
    const wait = this.limiter.take(principal.name, principal.rate);
    if (wait > 0) {
      return replies.refuse(req, res, t0, principal, rateLimited(wait), { 'retry-after': String(Math.ceil(wait / 1000)) });
    }
    if (path === '/rpc') {
      if (req.method !== 'POST') return replies.refuse(req, res, t0, principal, { type: 'method-not-allowed', message: 'use POST /rpc' }, { allow: 'POST' });
      return serveRpc(this.rpcRoute, req, res, t0, principal);
    }
    if (path === '/metrics') return this.metrics(req, res, t0, principal);
    // MCP over Streamable HTTP: the same tools as `tally mcp`, each session bound to its token.
    if (path === '/mcp') {
      this.mcp ??= import('./mcp/http.js').then((m) => new m.McpHttpRoute(this.service, this.limits.maxBodyBytes));
      await (await this.mcp).handle(req, res, principal);
      this.log.info({ method: `${req.method} /mcp`, status: res.statusCode, ms: ms(t0), principal: principal.name }, 'mcp');
      return;
    }
    if (path === '/verifier-key') {
      if (req.method !== 'GET') return replies.refuse(req, res, t0, principal, { type: 'method-not-allowed', message: 'use GET /verifier-key' }, { allow: 'GET' });
      const key = this.service.verifierKey;
      if (key === undefined) return replies.refuse(req, res, t0, principal, { type: 'not-found', message: 'this server signs no checkpoints (start it with an engine key: tally serve --key <file>)' });
      replies.sendText(res, key + '\n');
      this.log.info({ method: 'GET verifier-key', status: 200, ms: ms(t0), principal: principal.name }, 'read');
      return;
    }
    // A session's own tree as C2SP tlog-tiles: read like its bundle (src/server/http-session-tiles.ts).
    const tile = sessionTilePath(path);
    if (tile) return serveSessionTile(this.sessionTiles, req, res, t0, principal, tile);
    return routeSession(this.sessionRoutes, req, res, t0, principal, path, target.query);
  }

  /** `GET /readyz`: 200 when every check passes, else 503; the body names the failed checks (also 503 while draining). */
  private async ready(res: ServerResponse): Promise<void> {
    const r = await this.probes.readiness!();
    const report = this.draining ? { ...r, ok: false, draining: true } : r;
    this.replies.sendJson(res, report.ok ? 200 : 503, report);
  }

  /** `GET /metrics`: Prometheus text for auditor tokens. */
  private async metrics(req: IncomingMessage, res: ServerResponse, t0: number, principal: Principal): Promise<void> {
    const replies = this.replies;
    if (req.method !== 'GET') return replies.refuse(req, res, t0, principal, { type: 'method-not-allowed', message: 'use GET /metrics' }, { allow: 'GET' });
    if (principal.role !== 'auditor' && principal.role !== 'operator') return replies.refuse(req, res, t0, principal, { type: 'forbidden', message: 'GET /metrics needs an auditor token' });
    if (!this.probes.metrics) return replies.refuse(req, res, t0, principal, { type: 'not-found', message: 'this server exports no metrics' });
    const body = Buffer.from(await this.probes.metrics(), 'utf8');
    res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'content-length': String(body.length), 'cache-control': 'no-store', ...replies.closeHeader() });
    res.end(body);
  }
}

/**
 * Creates the HTTP server of the wire.
 *
 * @example
 * const server = createWireServer({ engine: createEngine({ store }), auth: new Authenticator(config) });
 * const { url } = await server.listen(0);
 * process.once('SIGTERM', () => void server.close());
 */
export function createWireServer(options: WireServerOptions): WireServer {
  return new WireServer(options);
}

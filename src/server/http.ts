/**
 * `tally serve`'s HTTP transport: JSON-RPC 2.0 at `POST /rpc` and plain GETs
 * for graders, behind bearer tokens, a per-token rate limit, a body-size and
 * a JSON-depth limit, header/request timeouts and a graceful close that lets
 * in-flight appends finish. See docs/WIRE.md for the reference.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Notary, SessionTrees } from '../receipt/index.js';
import type { Engine } from '../session/index.js';
import type { Authenticator, Principal } from './auth.js';
import { parseJsonBody } from './json.js';
import { createLogger, type Logger } from './log.js';
import { DEFAULT_LIMITS, type WireServerLimits } from './limits.js';
import { RateLimiter } from './rate-limit.js';
import { parseTarget } from './target.js';
import { handleRpc, rpcError, type RpcReply } from './rpc.js';
import { WireService, type CallOutcome, type ReadOutcome, type WireServiceOptions } from './service.js';
import { traceRequest } from '../telemetry/index.js';
import { PROMETHEUS_CONTENT_TYPE, type MetricsRenderer } from './metrics-http.js';
import { checkReadiness, type ReadyReport } from './ready.js';
import { httpErrorBody, wireErrorRow, type WireFailure } from './vocabulary.js';

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
}

/** Where a listening server is. */
export interface ListenAddress {
  readonly host: string;
  readonly port: number;
  readonly url: string;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } as const;
/** Most entries one `GET /sessions/:id/bundle?from=N` answers (the follower asks again for the rest). */
export const BUNDLE_RANGE_MAX = 10_000;

const SESSION_ROUTE = /^\/sessions\/([^/]{1,128})\/(describe|events|bundle|receipt|proof|checkpoint|turn-receipt|consistency)$/;

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
  /** The normalized path of each request being handled (its refusals take the route's envelope). */
  private readonly paths = new WeakMap<IncomingMessage, string>();
  private readonly probes: Pick<WireServerOptions, 'metrics' | 'readiness'>;

  constructor(options: WireServerOptions) {
    this.probes = { readiness: options.readiness ?? (() => checkReadiness({ store: options.engine.store })), ...(options.metrics ? { metrics: options.metrics } : {}) };
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.auth = options.auth;
    this.page = options.page === undefined ? undefined : { html: Buffer.from(options.page.html, 'utf8'), csp: options.page.csp };
    this.log = options.logger ?? createLogger();
    this.limiter = new RateLimiter(this.limits.rate, options.clock);
    this.service = new WireService(options.engine, {
      shutdown: this.shutdown.signal,
      ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
      ...(options.notary === undefined ? {} : { notary: options.notary }),
      ...(options.trees === undefined ? {} : { trees: options.trees }),
    });
    this.http = createServer(
      {
        headersTimeout: this.limits.headersTimeoutMs,
        requestTimeout: this.limits.requestTimeoutMs,
        keepAliveTimeout: this.limits.keepAliveTimeoutMs,
        // Node checks both timeouts on this interval (default 30 s, so a 10 s timeout fired after up to 40 s).
        connectionsCheckingInterval: checkingInterval(this.limits),
      },
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
      if (!res.headersSent) this.sendError(req, res, { type: 'internal', message: 'internal error' });
      else res.destroy();
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse, t0: number): Promise<void> {
    const target = parseTarget(req.url ?? '');
    if (!target) {
      this.drainBody(req);
      this.sendError(req, res, { type: 'malformed-target', message: 'the request target is not an origin-form path or an absolute http(s) URL' }, { connection: 'close' });
      this.access(req, t0, 400, undefined, 'malformed-target');
      return;
    }
    const path = target.path;
    this.paths.set(req, path);
    const query = target.query;
    if (path === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
      this.sendJson(req, res, this.draining ? 503 : 200, { ok: !this.draining });
      return;
    }
    if (path === '/readyz' && (req.method === 'GET' || req.method === 'HEAD')) return this.ready(req, res);
    if (path === '/' && this.page && (req.method === 'GET' || req.method === 'HEAD')) {
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-length': String(this.page.html.length),
        'content-security-policy': `${this.page.csp}; frame-ancestors 'none'`,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cross-origin-opener-policy': 'same-origin',
        ...(this.draining ? { connection: 'close' } : {}),
      });
      res.end(req.method === 'HEAD' ? undefined : this.page.html);
      this.log.info({ method: `${req.method} /`, status: 200, ms: ms(t0) }, 'page');
      return;
    }
    if (this.draining) {
      this.drainBody(req);
      this.sendError(req, res, { type: 'unavailable', message: 'the server is shutting down; retry on another instance' }, { 'retry-after': '1' });
      this.access(req, t0, 503, undefined, 'unavailable');
      return;
    }
    const principal = this.auth.authenticate(req.headers.authorization);
    if (!principal) {
      this.drainBody(req);
      this.sendError(req, res, { type: 'unauthorized', message: 'a valid bearer token is required (Authorization: Bearer <token>)' }, { 'www-authenticate': 'Bearer realm="tally"' });
      this.access(req, t0, 401, undefined, 'unauthorized');
      return;
    }
    const wait = this.limiter.take(principal.name, principal.rate);
    if (wait > 0) {
      this.drainBody(req);
      this.sendError(req, res, { type: 'rate-limited', message: `rate limit: retry in ${wait} ms`, data: { retryAfterMs: wait } }, { 'retry-after': String(Math.ceil(wait / 1000)) });
      this.access(req, t0, 429, principal, 'rate-limited');
      return;
    }
    if (path === '/rpc') {
      if (req.method !== 'POST') return this.refuse(req, res, t0, principal, { type: 'method-not-allowed', message: 'use POST /rpc' }, { allow: 'POST' });
      return this.rpc(req, res, t0, principal);
    }
    if (path === '/metrics') return this.metrics(req, res, t0, principal);
    if (path === '/verifier-key') {
      if (req.method !== 'GET') return this.refuse(req, res, t0, principal, { type: 'method-not-allowed', message: 'use GET /verifier-key' }, { allow: 'GET' });
      const key = this.service.verifierKey;
      if (key === undefined) return this.refuse(req, res, t0, principal, { type: 'not-found', message: 'this server signs no checkpoints (start it with an engine key: tally serve --key <file>)' });
      this.sendText(res, key + '\n');
      this.log.info({ method: 'GET verifier-key', status: 200, ms: ms(t0), principal: principal.name }, 'read');
      return;
    }
    const m = SESSION_ROUTE.exec(path);
    if (!m) return this.refuse(req, res, t0, principal, { type: 'not-found', message: `no route ${path.slice(0, 80)}` });
    if (req.method !== 'GET') return this.refuse(req, res, t0, principal, { type: 'method-not-allowed', message: `use GET ${path.slice(0, 80)}` }, { allow: 'GET' });
    const sessionId = m[1]!;
    const what = m[2]!;
    switch (what) {
      case 'bundle': {
        // ?from=N[&limit=M]: entries N… only (at most BUNDLE_RANGE_MAX), for a grader following a live day.
        const from = optionalInt(query.get('from'));
        const limit = optionalInt(query.get('limit'));
        if (from === null || limit === null || limit === 0 || (limit !== undefined && from === undefined)) {
          return this.refuse(req, res, t0, principal, { type: 'malformed-entry', message: `bundle takes ?from=<n> (and optionally &limit=<1..${BUNDLE_RANGE_MAX}>) as non-negative integers` });
        }
        return this.bundle(req, res, t0, principal, sessionId, from === undefined ? undefined : { from, limit: Math.min(limit ?? BUNDLE_RANGE_MAX, BUNDLE_RANGE_MAX) });
      }
      case 'events': {
        const params: Record<string, unknown> = { sessionId };
        for (const k of ['after', 'limit', 'wait']) {
          const v = query.get(k);
          if (v !== null) params[k] = /^-?[0-9]{1,16}$/.test(v) ? Number(v) : v;
        }
        const outcome = await this.service.call(principal, 'session/events', params);
        this.sendOutcome(req, res, t0, principal, `GET ${what}`, outcome);
        return;
      }
      case 'describe':
        return this.sendRead(req, res, t0, principal, what, sessionId, await this.service.describe(principal, sessionId));
      case 'receipt':
        return this.sendRead(req, res, t0, principal, what, sessionId, await this.service.receipt(principal, sessionId));
      case 'checkpoint': {
        const size = optionalInt(query.get('size'));
        if (size === null) return this.refuse(req, res, t0, principal, { type: 'malformed-entry', message: 'size must be a non-negative integer' });
        const out = await this.service.checkpoint(principal, sessionId, size);
        return this.sendRead(req, res, t0, principal, what, sessionId, out.ok ? { ok: true, value: out.value.signedCheckpoint } : out);
      }
      case 'turn-receipt': {
        const index = intParam(query.get('index'));
        const size = optionalInt(query.get('size'));
        if (index === undefined || size === null) return this.refuse(req, res, t0, principal, { type: 'malformed-entry', message: 'turn-receipt needs ?index=<n> (and optionally &size=<n>) as non-negative integers' });
        return this.sendRead(req, res, t0, principal, what, sessionId, await this.service.turnReceipt(principal, sessionId, index, size));
      }
      case 'consistency': {
        const from = intParam(query.get('from'));
        const to = optionalInt(query.get('to'));
        if (from === undefined || to === null) return this.refuse(req, res, t0, principal, { type: 'malformed-entry', message: 'consistency needs ?from=<n> (and optionally &to=<n>) as non-negative integers' });
        return this.sendRead(req, res, t0, principal, what, sessionId, await this.service.consistency(principal, sessionId, from, to));
      }
      default: {
        const index = intParam(query.get('index'));
        const size = query.get('size');
        const sizeN = size === null ? undefined : intParam(size);
        if (index === undefined || (size !== null && sizeN === undefined)) {
          return this.refuse(req, res, t0, principal, { type: 'malformed-entry', message: 'proof needs ?index=<n> (and optionally &size=<n>) as non-negative integers' });
        }
        return this.sendRead(req, res, t0, principal, what, sessionId, await this.service.proof(principal, sessionId, index, sizeN));
      }
    }
  }

  /** `GET /readyz`: 200 when every check passes, else 503; the body names the failed checks (also 503 while draining). */
  private async ready(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const r = await this.probes.readiness!();
    const report = this.draining ? { ...r, ok: false, draining: true } : r;
    this.sendJson(req, res, report.ok ? 200 : 503, report);
  }

  /** `GET /metrics`: Prometheus text for auditor tokens. */
  private async metrics(req: IncomingMessage, res: ServerResponse, t0: number, principal: Principal): Promise<void> {
    if (req.method !== 'GET') return this.refuse(req, res, t0, principal, { type: 'method-not-allowed', message: 'use GET /metrics' }, { allow: 'GET' });
    if (principal.role !== 'auditor' && principal.role !== 'operator') return this.refuse(req, res, t0, principal, { type: 'forbidden', message: 'GET /metrics needs an auditor token' });
    if (!this.probes.metrics) return this.refuse(req, res, t0, principal, { type: 'not-found', message: 'this server exports no metrics' });
    const body = Buffer.from(await this.probes.metrics(), 'utf8');
    res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'content-length': String(body.length), 'cache-control': 'no-store', ...(this.draining ? { connection: 'close' } : {}) });
    res.end(body);
  }

  private async rpc(req: IncomingMessage, res: ServerResponse, t0: number, principal: Principal): Promise<void> {
    const ct = req.headers['content-type'] ?? '';
    if (!/^application\/json(\s*;.*)?$/i.test(ct)) {
      return this.refuse(req, res, t0, principal, { type: 'unsupported-media-type', message: 'POST /rpc needs Content-Type: application/json' });
    }
    const body = await this.readBody(req);
    if (body === 'too-large') {
      return this.refuse(req, res, t0, principal, { type: 'payload-too-large', message: `the body is larger than ${this.limits.maxBodyBytes} bytes` });
    }
    if (body === 'aborted') {
      this.access(req, t0, 499, principal, 'aborted');
      return;
    }
    const parsed = parseJsonBody(body, this.limits.maxDepth);
    if (!parsed.ok) {
      const f: WireFailure = { type: parsed.type, message: parsed.message };
      this.sendJson(req, res, wireErrorRow(f.type).status, rpcError(f));
      this.access(req, t0, wireErrorRow(f.type).status, principal, f.type);
      return;
    }
    if (Array.isArray(parsed.value) && parsed.value.length > 1) {
      // A batch costs one bucket token per member.
      const extra = Math.min(parsed.value.length, this.limits.maxBatch) - 1;
      for (let i = 0; i < extra; i++) {
        const wait = this.limiter.take(principal.name, principal.rate);
        if (wait > 0) {
          const f: WireFailure = { type: 'rate-limited', message: `rate limit: retry in ${wait} ms`, data: { retryAfterMs: wait } };
          this.sendJson(req, res, 429, rpcError(f), { 'retry-after': String(Math.ceil(wait / 1000)) });
          this.access(req, t0, 429, principal, 'rate-limited');
          return;
        }
      }
    }
    const reply: RpcReply = await handleRpc(parsed.value, (method, params) => this.service.call(principal, method, params), this.limits.maxBatch);
    if (reply.body === undefined) {
      res.writeHead(reply.status, this.draining ? { connection: 'close' } : {});
      res.end();
    } else {
      this.sendJson(req, res, reply.status, reply.body);
    }
    for (const c of reply.calls) this.logCall(c.outcome, c.ms, principal);
    if (reply.calls.length === 0) this.access(req, t0, reply.status, principal, Array.isArray(reply.body) ? undefined : (reply.body as { error?: { data?: { type?: string } } }).error?.data?.type);
  }

  private async bundle(req: IncomingMessage, res: ServerResponse, t0: number, principal: Principal, sessionId: string, range?: { readonly from: number; readonly limit: number }): Promise<void> {
    const out = await this.service.bundle(principal, sessionId, range);
    if (!out.ok) return this.readFailure(req, res, t0, principal, 'bundle', sessionId, out);
    res.writeHead(200, { 'content-type': 'application/jsonl', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...(this.draining ? { connection: 'close' } : {}) });
    let lines = 0;
    try {
      for await (const line of out.value) {
        lines++;
        if (!res.write(line)) await new Promise<void>((r) => res.once('drain', r));
        if (res.destroyed) return;
      }
      res.end();
      this.log.info({ method: 'GET bundle', session: sessionId, status: 200, entries: lines, ...(range === undefined ? {} : { from: range.from }), ms: ms(t0), principal: principal.name }, 'read');
    } catch (e) {
      // Cut the stream: a truncated bundle fails verification, never passes as shorter.
      this.log.error({ method: 'GET bundle', session: sessionId, err: errInfo(e), entries: lines }, 'bundle stream failed');
      res.destroy();
    }
  }

  private sendRead(req: IncomingMessage, res: ServerResponse, t0: number, principal: Principal, what: string, sessionId: string, out: ReadOutcome<unknown>): void {
    if (!out.ok) return this.readFailure(req, res, t0, principal, what, sessionId, out);
    if (typeof out.value === 'string') this.sendText(res, out.value);
    else this.sendJson(req, res, 200, out.value);
    this.log.info({ method: `GET ${what}`, session: sessionId, status: 200, ms: ms(t0), principal: principal.name }, 'read');
  }

  private readFailure(req: IncomingMessage, res: ServerResponse, t0: number, principal: Principal, what: string, sessionId: string, out: { failure: WireFailure; error?: unknown }): void {
    const status = wireErrorRow(out.failure.type).status;
    this.sendError(req, res, out.failure);
    const line = { method: `GET ${what}`, session: sessionId.slice(0, 64), status, type: out.failure.type, ms: ms(t0), principal: principal.name, ...(out.error === undefined ? {} : { err: errInfo(out.error) }) };
    if (status >= 500) this.log.error(line, 'read failed');
    else this.log.info(line, 'read');
  }

  private sendOutcome(req: IncomingMessage, res: ServerResponse, t0: number, principal: Principal, what: string, outcome: CallOutcome): void {
    if (outcome.ok) this.sendJson(req, res, 200, outcome.result);
    else this.sendError(req, res, outcome.failure);
    this.logCall({ ...outcome, meta: { ...outcome.meta, method: what } }, ms(t0), principal);
  }

  private logCall(outcome: CallOutcome, latency: number, principal: Principal): void {
    const m = outcome.meta;
    const line: Record<string, unknown> = { method: m.method, principal: principal.name, ms: round(latency) };
    if (m.session) line['session'] = m.session;
    if (m.duplicate !== undefined) line['duplicate'] = m.duplicate;
    if (m.ruling !== undefined) line['ruling'] = m.ruling;
    if (outcome.ok) {
      line['status'] = 200;
      this.log.info(line, 'call');
      return;
    }
    line['status'] = wireErrorRow(outcome.failure.type).status;
    line['diagnostic'] = outcome.failure.type;
    if (m.error !== undefined) {
      line['err'] = errInfo(m.error);
      this.log.error(line, 'call failed');
    } else this.log.info(line, 'call');
  }

  private refuse(req: IncomingMessage, res: ServerResponse, t0: number, principal: Principal, f: WireFailure, headers: Record<string, string> = {}): void {
    this.drainBody(req);
    this.sendError(req, res, f, headers);
    this.access(req, t0, wireErrorRow(f.type).status, principal, f.type);
  }

  /** An error in the shape of the route: a JSON-RPC envelope on /rpc, `{error}` elsewhere. */
  private sendError(req: IncomingMessage, res: ServerResponse, f: WireFailure, headers: Record<string, string> = {}): void {
    const status = wireErrorRow(f.type).status;
    const isRpc = this.paths.get(req) === '/rpc';
    this.sendJson(req, res, status, isRpc ? rpcError(f) : httpErrorBody(f), headers);
  }

  private sendJson(_req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = Buffer.from(JSON.stringify(body));
    res.writeHead(status, { ...JSON_HEADERS, 'content-length': String(text.length), ...headers, ...(this.draining ? { connection: 'close' } : {}) });
    res.end(text);
  }

  private sendText(res: ServerResponse, text: string): void {
    const body = Buffer.from(text, 'utf8');
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(body.length), 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...(this.draining ? { connection: 'close' } : {}) });
    res.end(body);
  }

  private access(req: IncomingMessage, t0: number, status: number, principal: Principal | undefined, type: string | undefined): void {
    const line: Record<string, unknown> = { method: `${req.method} ${(req.url ?? '').split('?')[0]!.slice(0, 80)}`, status, ms: ms(t0) };
    if (principal) line['principal'] = principal.name;
    if (type) line['diagnostic'] = type;
    this.log.info(line, 'refused');
  }

  /** Discards a body we will not read (so the connection stays usable), cutting it beyond 16× the limit. */
  private drainBody(req: IncomingMessage): void {
    if (req.readableEnded || req.method === 'GET' || req.method === 'HEAD') return;
    let seen = 0;
    const cap = this.limits.maxBodyBytes * 16;
    req.on('data', (c: Buffer) => {
      seen += c.length;
      if (seen > cap) req.socket.destroy();
    });
    req.resume();
  }

  private readBody(req: IncomingMessage): Promise<Uint8Array | 'too-large' | 'aborted'> {
    const max = this.limits.maxBodyBytes;
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > max) return Promise.resolve('too-large');
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let total = 0;
      let settled = false;
      const settle = (v: Uint8Array | 'too-large' | 'aborted'): void => {
        if (settled) return;
        settled = true;
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('error', onAbort);
        req.off('aborted', onAbort);
        resolve(v);
      };
      const onData = (c: Buffer): void => {
        total += c.length;
        if (total > max) settle('too-large');
        else chunks.push(c);
      };
      const onEnd = (): void => settle(Buffer.concat(chunks, total));
      const onAbort = (): void => settle('aborted');
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('error', onAbort);
      req.on('aborted', onAbort);
    });
  }
}

/** How often Node checks the header and request timeouts: a quarter of the shorter one, from 10 ms to 1 s. */
function checkingInterval(l: WireServerLimits): number {
  const shortest = Math.min(...[l.headersTimeoutMs, l.requestTimeoutMs].filter((t) => t > 0));
  return Number.isFinite(shortest) ? Math.max(10, Math.min(1_000, Math.floor(shortest / 4))) : 1_000;
}

function intParam(v: string | null): number | undefined {
  if (v === null || !/^[0-9]{1,15}$/.test(v)) return undefined;
  return Number(v);
}

/** `undefined` when absent, `null` when malformed. */
function optionalInt(v: string | null): number | undefined | null {
  if (v === null) return undefined;
  return intParam(v) ?? null;
}

function ms(t0: number): number {
  return round(performance.now() - t0);
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

function errInfo(e: unknown): Record<string, unknown> {
  if (e instanceof Error) return { name: e.name, message: e.message.slice(0, 500), ...('code' in e && typeof e.code === 'string' ? { code: e.code } : {}) };
  return { message: String(e).slice(0, 200) };
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

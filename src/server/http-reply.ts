/**
 * How the HTTP transport answers and logs: JSON and text replies, errors in
 * the route's envelope (JSON-RPC on `/rpc`, `{error}` elsewhere), refusals
 * with their access-log line, read results and call outcomes. Every reply
 * asks the server to close the connection once it is draining.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from './auth.js';
import { drainBody } from '../http/body.js';
import type { Logger } from './log.js';
import { rpcError } from './rpc.js';
import type { CallOutcome, ReadOutcome } from './service.js';
import { httpErrorBody, wireErrorRow, type WireFailure } from './vocabulary.js';

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } as const;

/** The replies and log lines of one `WireServer`. */
export class HttpReplies {
  /** The normalized path of each request being handled (its refusals take the route's envelope). */
  private readonly paths = new WeakMap<IncomingMessage, string>();

  /**
   * @param log - where access and call lines go
   * @param draining - whether the server is closing (replies then carry `connection: close`)
   * @param maxBodyBytes - the body limit; a refused request's body is discarded up to 16× it
   */
  constructor(
    private readonly log: Logger,
    private readonly draining: () => boolean,
    private readonly maxBodyBytes: number,
  ) {}

  /** Records the normalized path of `req`, which decides the envelope of its errors. */
  setPath(req: IncomingMessage, path: string): void {
    this.paths.set(req, path);
  }

  /** `{ connection: 'close' }` while draining, else nothing. */
  closeHeader(): { connection?: 'close' } {
    return this.draining() ? { connection: 'close' } : {};
  }

  /** Discards the body of `req` (see {@link drainBody}). */
  drainBody(req: IncomingMessage): void {
    drainBody(req, this.maxBodyBytes);
  }

  /**
   * A refusal, the one way every route refuses a request before (or instead
   * of) a verb: the rest of the body is discarded (nothing to do once it was
   * read), the error sent in the route's envelope with its status from the
   * table, the access line logged (`principal` absent before authentication).
   */
  refuse(req: IncomingMessage, res: ServerResponse, t0: number, principal: Principal | undefined, f: WireFailure, headers: Record<string, string> = {}): void {
    this.drainBody(req);
    this.sendError(req, res, f, headers);
    this.access(req, t0, wireErrorRow(f.type).status, principal, f.type);
  }

  /** An error in the shape of the route: a JSON-RPC envelope on /rpc, `{error}` elsewhere. */
  sendError(req: IncomingMessage, res: ServerResponse, f: WireFailure, headers: Record<string, string> = {}): void {
    const status = wireErrorRow(f.type).status;
    const isRpc = this.paths.get(req) === '/rpc';
    this.sendJson(res, status, isRpc ? rpcError(f) : httpErrorBody(f), headers);
  }

  /** A JSON reply. */
  sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = Buffer.from(JSON.stringify(body));
    res.writeHead(status, { ...JSON_HEADERS, 'content-length': String(text.length), ...headers, ...this.closeHeader() });
    res.end(text);
  }

  /** A 200 plain-text reply. */
  sendText(res: ServerResponse, text: string): void {
    const body = Buffer.from(text, 'utf8');
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(body.length), 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...this.closeHeader() });
    res.end(body);
  }

  /** Answers a `GET` read: its value (text or JSON) or its failure. */
  sendRead(req: IncomingMessage, res: ServerResponse, t0: number, principal: Principal, what: string, sessionId: string, out: ReadOutcome<unknown>): void {
    if (!out.ok) return this.readFailure(req, res, t0, principal, what, sessionId, out);
    if (typeof out.value === 'string') this.sendText(res, out.value);
    else this.sendJson(res, 200, out.value);
    this.log.info({ method: `GET ${what}`, session: sessionId, status: 200, ms: ms(t0), principal: principal.name }, 'read');
  }

  /** Answers a failed read and logs it (as an error from status 500 up). */
  readFailure(req: IncomingMessage, res: ServerResponse, t0: number, principal: Principal, what: string, sessionId: string, out: { failure: WireFailure; error?: unknown }): void {
    const status = wireErrorRow(out.failure.type).status;
    this.sendError(req, res, out.failure);
    const line = { method: `GET ${what}`, session: sessionId.slice(0, 64), status, type: out.failure.type, ms: ms(t0), principal: principal.name, ...(out.error === undefined ? {} : { err: errInfo(out.error) }) };
    if (status >= 500) this.log.error(line, 'read failed');
    else this.log.info(line, 'read');
  }

  /** Answers a verb's outcome outside JSON-RPC (`GET …/events`) and logs the call. */
  sendOutcome(req: IncomingMessage, res: ServerResponse, t0: number, principal: Principal, what: string, outcome: CallOutcome): void {
    if (outcome.ok) this.sendJson(res, 200, outcome.result);
    else this.sendError(req, res, outcome.failure);
    this.logCall({ ...outcome, meta: { ...outcome.meta, method: what } }, ms(t0), principal);
  }

  /** The log line of one verb call. */
  logCall(outcome: CallOutcome, latency: number, principal: Principal): void {
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

  /** The access line of a refused request. */
  access(req: IncomingMessage, t0: number, status: number, principal: Principal | undefined, type: string | undefined): void {
    const line: Record<string, unknown> = { method: `${req.method} ${(req.url ?? '').split('?')[0]!.slice(0, 80)}`, status, ms: ms(t0) };
    if (principal) line['principal'] = principal.name;
    if (type) line['diagnostic'] = type;
    this.log.info(line, 'refused');
  }
}

/** The refusal of an empty rate-limit bucket, `wait` ms before a token is back (send it with `Retry-After`). */
export function rateLimited(wait: number): WireFailure {
  return { type: 'rate-limited', message: `rate limit: retry in ${wait} ms`, data: { retryAfterMs: wait } };
}

/** Milliseconds since `t0` (a `performance.now()` reading), to 0.01 ms. */
export function ms(t0: number): number {
  return round(performance.now() - t0);
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

/** What a log line may say about a thrown value: name, bounded message, and a string `code`. */
export function errInfo(e: unknown): Record<string, unknown> {
  if (e instanceof Error) return { name: e.name, message: e.message.slice(0, 500), ...('code' in e && typeof e.code === 'string' ? { code: e.code } : {}) };
  return { message: String(e).slice(0, 200) };
}

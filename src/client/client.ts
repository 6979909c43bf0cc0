/**
 * The wire client: typed methods for the six verbs over `tally serve`, with
 * retries that are safe because every verb is idempotent — a turn is
 * content-addressed (the same bytes for the same slot settle to the same
 * entry), a frame or a finalize with the same content is answered as a
 * duplicate, and the same spec opens the same session.
 *
 * Retried: network errors, timeouts and 5xx answers, with exponential backoff
 * and full jitter. Never retried: any 4xx, a 5xx whose wire error says
 * `retryable: false` (a corrupt store), a conflict or any other session
 * diagnostic. Session diagnostics come back as `{ ok: false, diagnostic,
 * message }` exactly like the engine's; every other refusal is thrown as a
 * {@link WireError}.
 */
import { SESSION_DIAGNOSTICS, isMember, parseStrictJson, toBase64, type FailureClass, type SessionDiagnostic, type SessionMessageKind } from '../protocol/index.js';
import type {
  DescribeResult,
  EventsResult,
  FrameInput,
  FrameResult,
  OpenResult,
  SessionEvent,
  TurnResult,
} from '../session/index.js';
import type { InclusionProofResult } from '../server/service.js';
import { isWireErrorType, wireErrorRow, type WireErrorType, type WireFailure } from '../server/vocabulary.js';
import { WireError } from './errors.js';
import type { ClientFinalizeResult, ClientReceipt } from './types.js';
import { DEFAULT_RETRY, backoffDelay, sleep, type RetryPolicy } from './retry.js';
import { fetchTransport, keepAliveTransport, type TransportResponse, type Transport } from './transport.js';

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** Base URL of `tally serve`, e.g. `http://127.0.0.1:8787`. */
  readonly url: string;
  /** Bearer token (sent only in the Authorization header, never in messages). */
  readonly token: string;
  readonly retry?: Partial<RetryPolicy>;
  /** Per-attempt timeout in ms (default 30 000; a long poll adds its `wait`). */
  readonly timeoutMs?: number;
  /**
   * A WHATWG fetch to send with instead of the default transport (node:http
   * with a keep-alive agent per client; `fetch` costs several times more per
   * request on loopback).
   */
  readonly fetch?: typeof fetch;
  /** Most open connections of the default transport (default 64). */
  readonly maxSockets?: number;
  /** Random source for the jitter (default `Math.random`). */
  readonly random?: () => number;
  /** Called before each retry (for logs and tests). */
  readonly onRetry?: (info: { readonly attempt: number; readonly delayMs: number; readonly reason: string }) => void;
}

/** Per-call options. */
export interface CallOptions {
  readonly signal?: AbortSignal;
}

/** A turn body as the client takes it: bytes, UTF-8 text, or a stand-down. */
export type ClientTurnBody =
  | { readonly kind: 'authored'; readonly bytes: Uint8Array; readonly hash?: string }
  | { readonly kind: 'authored'; readonly text: string; readonly hash?: string }
  | { readonly kind: 'stand-down'; readonly failureClass: FailureClass };

/** `turn` input of the client. */
export interface ClientTurnInput {
  readonly sessionId: string;
  readonly ordinal: number;
  readonly parentHash: string;
  readonly frameRoot: string;
  readonly body: ClientTurnBody;
  readonly claimHash?: string;
}

/** Options of `events`. */
export interface EventsOptions extends CallOptions {
  /** Cursor: entries with index > after (default -1: all). */
  readonly after?: number;
  readonly limit?: number;
  /** Long-poll up to this many ms for a new entry (max 30 000). */
  readonly wait?: number;
}

/** Options of `follow`. */
export interface FollowOptions extends EventsOptions {
  /** Pause between polls when the server does not long-poll (`wait: 0`), ms (default 250). */
  readonly pollMs?: number;
}

/** The raw outcome of one JSON-RPC call. */
export type WireCallOutcome =
  | { readonly ok: true; readonly result: Record<string, unknown> }
  | { readonly ok: false; readonly failure: WireFailure; /** HTTP status the refusal travelled with. */ readonly status: number };

/** A client of `tally serve`; create with {@link createClient}. */
export interface TallyClient {
  readonly url: string;
  /** One JSON-RPC call with retries; refusals come back as `failure` (throws only a `network`/`bad-response` {@link WireError}). */
  call(method: SessionMessageKind, params: Record<string, unknown>, options?: CallOptions): Promise<WireCallOutcome>;
  open(spec: Record<string, unknown>, options?: CallOptions): Promise<OpenResult>;
  frame(input: FrameInput, options?: CallOptions): Promise<FrameResult>;
  turn(input: ClientTurnInput, options?: CallOptions): Promise<TurnResult>;
  events(sessionId: string, options?: EventsOptions): Promise<EventsResult>;
  describe(sessionId: string, options?: CallOptions): Promise<DescribeResult>;
  finalize(sessionId: string, artifacts?: Record<string, unknown>, options?: CallOptions): Promise<ClientFinalizeResult>;
  /**
   * Every entry after `after`, in order, exactly once, across disconnects and
   * server restarts (it resumes from the last index it yielded); ends after
   * the seal. Non-retryable refusals are thrown; abort with `signal`.
   */
  follow(sessionId: string, options?: FollowOptions): AsyncGenerator<SessionEvent>;
  /** The session's bundle (JSONL) as byte chunks, streamed. */
  bundle(sessionId: string, options?: CallOptions): AsyncGenerator<Uint8Array>;
  /** The sealed receipt (throws `not-found` before the seal). */
  receipt(sessionId: string, options?: CallOptions): Promise<ClientReceipt>;
  /** The engine-signed checkpoint of the first `size` entries (default all), as C2SP note text (404 `not-found` without an engine key). */
  checkpoint(sessionId: string, size?: number, options?: CallOptions): Promise<string>;
  /** The single-turn receipt of entry `index` (C2SP tlog-proof text), against the checkpoint of `size` entries (default all). */
  turnReceipt(sessionId: string, index: number, size?: number, options?: CallOptions): Promise<string>;
  /** A consistency proof from size `from` to `to` (default all) with a fresh signed checkpoint at `to` (text). */
  consistency(sessionId: string, from: number, to?: number, options?: CallOptions): Promise<string>;
  /** The engine's verifier key as the server states it (pin one obtained out of band, not this). */
  verifierKey(options?: CallOptions): Promise<string>;
  /** RFC 6962 inclusion proof of entry `index` (in the first `size` entries; default all). */
  proof(sessionId: string, index: number, size?: number, options?: CallOptions): Promise<InclusionProofResult>;
}

function anySignal(signals: readonly (AbortSignal | undefined)[]): AbortSignal {
  const c = new AbortController();
  for (const s of signals) {
    if (!s) continue;
    if (s.aborted) {
      c.abort(s.reason);
      break;
    }
    s.addEventListener('abort', () => c.abort(s.reason), { once: true });
  }
  return c.signal;
}

function failureOf(status: number, body: unknown): WireFailure {
  const err = (body as { error?: { message?: unknown; data?: unknown; type?: unknown } } | undefined)?.error;
  if (err && typeof err === 'object') {
    const data = (typeof err.data === 'object' && err.data !== null ? err.data : err) as Record<string, unknown>;
    const type = typeof data['type'] === 'string' ? (data['type'] as WireErrorType) : status >= 500 ? 'internal' : 'invalid-request';
    const { type: _t, retryable: _r, code: _c, message: _m, ...rest } = data;
    // Kept only where it overrides the type's row (a corrupt store's `internal`), as the server's WireFailure carries it.
    const notRetryable = data['retryable'] === false && isWireErrorType(type) && wireErrorRow(type).retryable;
    return { type, message: typeof err.message === 'string' ? err.message : `HTTP ${status}`, ...(Object.keys(rest).length > 0 ? { data: rest } : {}), ...(notRetryable ? { retryable: false as const } : {}) };
  }
  return { type: status >= 500 ? 'internal' : 'invalid-request', message: `HTTP ${status} without a wire error body` };
}

/** The whole body of `res`. */
async function readAll(res: TransportResponse): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const c of res.chunks()) parts.push(c);
  return Buffer.concat(parts);
}

/** `res` with its body already read as `body`. */
function buffered(res: TransportResponse, body: Buffer): TransportResponse {
  return {
    status: res.status,
    header: (name) => res.header(name),
    text: () => Promise.resolve(body.toString('utf8')),
    discard: () => Promise.resolve(),
    async *chunks() {
      yield body;
    },
  };
}

/** True when `body` is a wire error (either envelope) that says `retryable: false`. */
function saysNotRetryable(body: Buffer): boolean {
  const r = parseStrictJson(body);
  if (!r.ok || typeof r.value !== 'object' || r.value === null) return false;
  const err = (r.value as { error?: { retryable?: unknown; data?: { retryable?: unknown } } }).error;
  return typeof err === 'object' && err !== null && (err.retryable === false || err.data?.retryable === false);
}

function isDiagnostic(t: string): t is SessionDiagnostic {
  return isMember(SESSION_DIAGNOSTICS, t);
}

class Client implements TallyClient {
  readonly url: string;
  private readonly token: string;
  private readonly policy: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly transport: Transport;
  private readonly random: () => number;
  private readonly onRetry: ClientOptions['onRetry'];
  private nextId = 1;

  constructor(o: ClientOptions) {
    let u: URL;
    try {
      u = new URL(o.url);
    } catch {
      throw new TypeError('createClient: url must be an absolute http(s) URL');
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TypeError('createClient: url must be http: or https:');
    if (typeof o.token !== 'string' || !/^[!-~]{1,512}$/.test(o.token)) throw new TypeError('createClient: token must be 1–512 printable ASCII characters');
    this.url = u.toString().replace(/\/+$/, '');
    this.token = o.token;
    this.policy = { ...DEFAULT_RETRY, ...o.retry };
    this.timeoutMs = o.timeoutMs ?? 30_000;
    this.transport = o.fetch ? fetchTransport(o.fetch) : keepAliveTransport(o.maxSockets === undefined ? {} : { maxSockets: o.maxSockets });
    this.random = o.random ?? Math.random;
    this.onRetry = o.onRetry;
  }

  /** Sends with retries on network errors and 5xx (unless its wire error says `retryable: false`); returns the last response (which may be a 5xx). */
  private async send(path: string, init: { method: 'GET' | 'POST'; body?: string }, options: CallOptions & { extraTimeoutMs?: number } = {}): Promise<{ res: TransportResponse; attempts: number }> {
    for (let attempt = 0; ; attempt++) {
      const signal = anySignal([options.signal, AbortSignal.timeout(this.timeoutMs + (options.extraTimeoutMs ?? 0))]);
      let reason: string;
      let retryAfterMs = 0;
      try {
        const res = await this.transport(this.url + path, {
          method: init.method,
          headers: { authorization: `Bearer ${this.token}`, accept: 'application/json', ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(init.body === undefined ? {} : { body: init.body }),
          signal,
        });
        if (res.status < 500 || attempt >= this.policy.retries) return { res, attempts: attempt + 1 };
        reason = `HTTP ${res.status}`;
        const ra = Number(res.header('retry-after'));
        if (Number.isFinite(ra) && ra > 0) retryAfterMs = Math.min(ra * 1000, this.policy.maxMs);
        // A 5xx whose wire error says a retry cannot help (a corrupt store) is the answer.
        const body = await readAll(res);
        if (saysNotRetryable(body)) return { res: buffered(res, body), attempts: attempt + 1 };
      } catch (e) {
        if (options.signal?.aborted) throw options.signal.reason;
        reason = (e as Error)?.name === 'TimeoutError' ? 'timeout' : `network: ${((e as Error)?.cause as Error | undefined)?.message ?? (e as Error)?.message ?? String(e)}`;
        if (attempt >= this.policy.retries) throw new WireError('network', `no answer from ${this.url} after ${attempt + 1} attempts (${reason})`, { attempts: attempt + 1, cause: e });
      }
      const delayMs = Math.max(retryAfterMs, backoffDelay(attempt, this.policy, this.random));
      this.onRetry?.({ attempt: attempt + 1, delayMs, reason });
      await sleep(delayMs, options.signal);
    }
  }

  private async json(res: TransportResponse, attempts: number): Promise<unknown> {
    // Raw bytes through the one strict parser: a duplicate key, a lone surrogate, a BOM or
    // invalid UTF-8 in a response is refused (never read last-wins or repaired).
    const r = parseStrictJson(await readAll(res));
    if (r.ok) return r.value;
    // A 5xx without a wire body comes from something in front of the server (a proxy, a balancer).
    if (res.status >= 500) throw new WireError('unavailable', `HTTP ${res.status} from ${this.url} after ${attempts} attempts`, { status: res.status, attempts });
    throw new WireError('bad-response', `HTTP ${res.status} from ${this.url} is not JSON in the one encoding (${r.code}): ${r.message}`, { status: res.status, attempts, data: { code: r.code } });
  }

  async call(method: SessionMessageKind, params: Record<string, unknown>, options: CallOptions & { extraTimeoutMs?: number } = {}): Promise<WireCallOutcome> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params });
    const { res, attempts } = await this.send('/rpc', { method: 'POST', body }, options);
    const doc = await this.json(res, attempts);
    const r = doc as { result?: unknown; error?: unknown };
    if (res.status === 200 && typeof r === 'object' && r !== null && typeof r.result === 'object' && r.result !== null) return { ok: true, result: r.result as Record<string, unknown> };
    if (typeof r === 'object' && r !== null && r.error !== undefined) return { ok: false, failure: failureOf(res.status, doc), status: res.status };
    throw new WireError('bad-response', `HTTP ${res.status} from ${this.url} is not a JSON-RPC response`, { status: res.status, attempts });
  }

  /** A verb's typed result: the result, a diagnostic rejection, or a thrown WireError. */
  private async verb<T>(method: SessionMessageKind, params: Record<string, unknown>, options: CallOptions & { extraTimeoutMs?: number } = {}): Promise<T> {
    const out = await this.call(method, params, options);
    if (out.ok) return { ok: true, ...out.result } as T;
    const f = out.failure;
    if (isDiagnostic(f.type)) return { ok: false, diagnostic: f.type, message: f.message } as T;
    throw new WireError(f.type, f.message, { status: out.status, ...(f.data === undefined ? {} : { data: f.data }) });
  }

  open(spec: Record<string, unknown>, options?: CallOptions): Promise<OpenResult> {
    return this.verb('session/open', { spec }, options);
  }

  frame(input: FrameInput, options?: CallOptions): Promise<FrameResult> {
    return this.verb('session/frame', { ...input }, options);
  }

  turn(input: ClientTurnInput, options?: CallOptions): Promise<TurnResult> {
    const b = input.body;
    const body =
      b.kind === 'stand-down'
        ? { kind: 'stand-down', failureClass: b.failureClass }
        : 'bytes' in b
          ? { kind: 'authored', bytes: toBase64(b.bytes), ...(b.hash === undefined ? {} : { hash: b.hash }) }
          : { kind: 'authored', text: b.text, ...(b.hash === undefined ? {} : { hash: b.hash }) };
    return this.verb('session/turn', { ...input, body }, options);
  }

  events(sessionId: string, options: EventsOptions = {}): Promise<EventsResult> {
    const params: Record<string, unknown> = { sessionId };
    if (options.after !== undefined) params['after'] = options.after;
    if (options.limit !== undefined) params['limit'] = options.limit;
    if (options.wait !== undefined) params['wait'] = options.wait;
    return this.verb('session/events', params, { ...(options.signal ? { signal: options.signal } : {}), extraTimeoutMs: options.wait ?? 0 });
  }

  describe(sessionId: string, options?: CallOptions): Promise<DescribeResult> {
    return this.verb('session/describe', { sessionId }, options);
  }

  finalize(sessionId: string, artifacts?: Record<string, unknown>, options?: CallOptions): Promise<ClientFinalizeResult> {
    return this.verb('session/finalize', artifacts === undefined ? { sessionId } : { sessionId, artifacts }, options);
  }

  async *follow(sessionId: string, options: FollowOptions = {}): AsyncGenerator<SessionEvent> {
    let cursor = options.after ?? -1;
    const wait = options.wait ?? 10_000;
    let failures = 0;
    for (;;) {
      options.signal?.throwIfAborted();
      let r: EventsResult;
      try {
        r = await this.events(sessionId, { after: cursor, wait, ...(options.limit === undefined ? {} : { limit: options.limit }), ...(options.signal ? { signal: options.signal } : {}) });
        failures = 0;
      } catch (e) {
        // The server is away (restarting, unreachable): keep the cursor and come back.
        if (e instanceof WireError && (e.type === 'network' || e.type === 'internal' || e.type === 'unavailable')) {
          await sleep(backoffDelay(failures++, this.policy, this.random), options.signal);
          continue;
        }
        throw e;
      }
      if (!r.ok) throw new WireError(r.diagnostic, r.message);
      for (const ev of r.events) {
        cursor = ev.index;
        yield ev;
      }
      if (r.phase === 'sealed' && !r.more) return;
      if (r.events.length === 0 && wait === 0) await sleep(options.pollMs ?? 250, options.signal);
    }
  }

  private async getJson<T>(path: string, options: CallOptions = {}): Promise<T> {
    const { res, attempts } = await this.send(path, { method: 'GET' }, options);
    const doc = await this.json(res, attempts);
    if (res.status === 200) return doc as T;
    const f = failureOf(res.status, doc);
    throw new WireError(f.type, f.message, { status: res.status, attempts, ...(f.data === undefined ? {} : { data: f.data }) });
  }

  async *bundle(sessionId: string, options: CallOptions = {}): AsyncGenerator<Uint8Array> {
    const { res, attempts } = await this.send(`/sessions/${encodeURIComponent(sessionId)}/bundle`, { method: 'GET' }, options);
    if (res.status !== 200) {
      const f = failureOf(res.status, await this.json(res, attempts));
      throw new WireError(f.type, f.message, { status: res.status, attempts });
    }
    for await (const chunk of res.chunks()) yield chunk;
  }

  receipt(sessionId: string, options?: CallOptions): Promise<ClientReceipt> {
    return this.getJson(`/sessions/${encodeURIComponent(sessionId)}/receipt`, options);
  }

  /** A text GET (200: the body as UTF-8, which must be valid); a refusal is thrown as a {@link WireError}. */
  private async getText(path: string, options: CallOptions = {}): Promise<string> {
    const { res, attempts } = await this.send(path, { method: 'GET' }, options);
    if (res.status !== 200) {
      const f = failureOf(res.status, await this.json(res, attempts));
      throw new WireError(f.type, f.message, { status: res.status, attempts, ...(f.data === undefined ? {} : { data: f.data }) });
    }
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(await readAll(res));
    } catch {
      throw new WireError('bad-response', `${path}: the answer is not UTF-8`, { status: res.status, attempts });
    }
  }

  checkpoint(sessionId: string, size?: number, options?: CallOptions): Promise<string> {
    return this.getText(`/sessions/${encodeURIComponent(sessionId)}/checkpoint${size === undefined ? '' : `?size=${size}`}`, options);
  }

  turnReceipt(sessionId: string, index: number, size?: number, options?: CallOptions): Promise<string> {
    return this.getText(`/sessions/${encodeURIComponent(sessionId)}/turn-receipt?index=${index}${size === undefined ? '' : `&size=${size}`}`, options);
  }

  consistency(sessionId: string, from: number, to?: number, options?: CallOptions): Promise<string> {
    return this.getText(`/sessions/${encodeURIComponent(sessionId)}/consistency?from=${from}${to === undefined ? '' : `&to=${to}`}`, options);
  }

  verifierKey(options?: CallOptions): Promise<string> {
    return this.getText('/verifier-key', options).then((t) => t.trim());
  }

  proof(sessionId: string, index: number, size?: number, options?: CallOptions): Promise<InclusionProofResult> {
    return this.getJson(`/sessions/${encodeURIComponent(sessionId)}/proof?index=${index}${size === undefined ? '' : `&size=${size}`}`, options);
  }
}

/**
 * Creates a client of `tally serve`.
 *
 * @example
 * const client = createClient({ url: 'http://127.0.0.1:8787', token: process.env.TALLY_TOKEN! });
 * const open = await client.open({ name: 'desk-1', day: '2026-11-30' });
 * if (!open.ok) throw new Error(open.message);
 * for await (const ev of client.follow(open.sessionId)) console.log(ev.index, ev.entry.kind);
 */
export function createClient(options: ClientOptions): TallyClient {
  return new Client(options);
}

/**
 * The client's HTTP transport. The default keeps connections alive (one
 * `http.Agent`/`https.Agent` with `keepAlive` per client), so a turn costs a
 * request on an open socket instead of a TCP handshake or a `fetch` (whose
 * WHATWG streams cost several times a node:http round trip on loopback).
 * A caller-supplied `fetch` is adapted to the same shape, so retries and
 * timeouts behave the same over both.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** One request of the transport. */
export interface TransportRequest {
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Aborting rejects the pending request (or ends the body) with `signal.reason`. */
  readonly signal: AbortSignal;
}

/** One answer of the transport; its body is read once, by one of the three readers. */
export interface TransportResponse {
  readonly status: number;
  header(name: string): string | null;
  text(): Promise<string>;
  /** Reads and drops the body (so a kept-alive socket can be reused). */
  discard(): Promise<void>;
  chunks(): AsyncIterable<Uint8Array>;
}

/** Sends one request; rejects on network errors and on abort (with the signal's reason). */
export type Transport = (url: string, request: TransportRequest) => Promise<TransportResponse>;

/** Options of {@link keepAliveTransport}. */
export interface KeepAliveOptions {
  /** Most sockets per origin (default 64). */
  readonly maxSockets?: number;
}

function nodeResponse(res: IncomingMessage, signal: AbortSignal): TransportResponse {
  const onAbort = (): void => {
    res.destroy(signal.reason as Error);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  res.once('close', () => signal.removeEventListener('abort', onAbort));
  // An error before a reader attached (an abort, a cut socket) must not be an uncaught 'error'.
  res.on('error', () => {});
  return {
    status: res.statusCode ?? 0,
    header(name) {
      const v = res.headers[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    },
    text() {
      return new Promise((resolve, reject) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.once('end', () => resolve(Buffer.concat(parts).toString('utf8')));
        res.once('error', () => reject(signal.aborted ? signal.reason : new Error('response body interrupted')));
        res.once('aborted', () => reject(new Error('response body interrupted')));
      });
    },
    discard() {
      return new Promise((resolve) => {
        res.once('end', resolve);
        res.once('close', resolve);
        res.resume();
      });
    },
    chunks() {
      return res as AsyncIterable<Uint8Array>;
    },
  };
}

/**
 * The default transport: node:http(s) with a keep-alive agent of its own.
 *
 * @example
 * const send = keepAliveTransport();
 * const res = await send('http://127.0.0.1:8787/healthz', { method: 'GET', headers: {}, signal: AbortSignal.timeout(1000) });
 */
export function keepAliveTransport(options: KeepAliveOptions = {}): Transport {
  const maxSockets = options.maxSockets ?? 64;
  const http = new HttpAgent({ keepAlive: true, maxSockets });
  const https = new HttpsAgent({ keepAlive: true, maxSockets });
  return (url, r) =>
    new Promise<TransportResponse>((resolve, reject) => {
      if (r.signal.aborted) return reject(r.signal.reason);
      const u = new URL(url);
      const secure = u.protocol === 'https:';
      const headers: Record<string, string> = { ...r.headers };
      if (r.body !== undefined) headers['content-length'] = String(Buffer.byteLength(r.body));
      const req = (secure ? httpsRequest : httpRequest)(u, { method: r.method, headers, agent: secure ? https : http });
      const onAbort = (): void => {
        req.destroy(r.signal.reason as Error);
      };
      r.signal.addEventListener('abort', onAbort, { once: true });
      req.once('response', (res) => {
        r.signal.removeEventListener('abort', onAbort);
        resolve(nodeResponse(res, r.signal));
      });
      req.once('error', (e) => {
        r.signal.removeEventListener('abort', onAbort);
        reject(r.signal.aborted ? r.signal.reason : e);
      });
      req.end(r.body);
    });
}

/**
 * Adapts a WHATWG `fetch` (a caller's, a test double's or the global one) to a {@link Transport}.
 *
 * @example
 * const send = fetchTransport(fetch);
 */
export function fetchTransport(fetchFn: typeof fetch): Transport {
  return async (url, r) => {
    const res = await fetchFn(url, { method: r.method, headers: r.headers, ...(r.body === undefined ? {} : { body: r.body }), signal: r.signal });
    return {
      status: res.status,
      header: (name) => res.headers.get(name),
      text: () => res.text(),
      discard: async () => {
        await res.arrayBuffer().catch(() => undefined);
      },
      async *chunks() {
        if (res.body) for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) yield c;
      },
    };
  };
}

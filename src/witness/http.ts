import { createServer, type Server, type ServerResponse } from 'node:http';
import { drainBody, readBody } from '../http/body.js';
import { serverTimeoutOptions, type HttpTimeouts } from '../http/timeouts.js';
import type { AddCheckpointResult, Witness } from './witness.js';

/** Content type of a 409 answer: the cosigned size, decimal, newline (C2SP tlog-witness). */
export const TLOG_SIZE_CONTENT_TYPE = 'text/x.tlog.size';
/** Largest `add-checkpoint` body accepted (63 proof lines and a checkpoint with 100 signatures fit easily). */
export const MAX_ADD_CHECKPOINT_BYTES = 64 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Options of {@link createWitnessHttpServer}. */
export interface WitnessHttpOptions {
  /** URL path prefix of the submission API (default: none, so the route is `/add-checkpoint`). */
  readonly prefix?: string;
  /** Called once per answered request (for logs). */
  readonly onRequest?: (event: { readonly status: number; readonly code?: string; readonly origin?: string; readonly size?: number }) => void;
  /** Slow-client limits (default: those of `tally serve`, src/http). */
  readonly timeouts?: Partial<HttpTimeouts>;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(body);
}

function answer(res: ServerResponse, r: AddCheckpointResult): void {
  if (r.ok) return send(res, 200, 'text/plain; charset=utf-8', r.lines);
  if (r.status === 409) return send(res, 409, TLOG_SIZE_CONTENT_TYPE, `${r.size}\n`);
  if (r.status === 429) res.setHeader('retry-after', String(r.retryAfter));
  send(res, r.status, 'text/plain; charset=utf-8', `${r.code}: ${r.message}\n`);
}

/**
 * The C2SP tlog-witness HTTP interface of a witness: `POST
 * <prefix>/add-checkpoint`. Answers 200 with cosignature lines, 409 with the
 * cosigned size (`text/x.tlog.size`), 400 / 403 / 404 / 422 with a one-line
 * reason; 413 for a body over 64 KiB, 405 for another method, 404 for another
 * path. `GET <prefix>/healthz` answers 200 `{"ok":true}` (a liveness probe,
 * not logged). `GET <prefix>/<SHA-256 hex of an origin>/checkpoint` answers
 * the latest checkpoint cosigned for it with this witness's cosignature
 * (C2SP tlog-witness monitor retrieval; the monitoring prefix is the
 * submission prefix), 404 when none. The witness persists before the answer is written.
 *
 * @example
 * const server = createWitnessHttpServer(witness);
 * server.listen(0, '127.0.0.1');
 */
export function createWitnessHttpServer(witness: Witness, options: WitnessHttpOptions = {}): Server {
  const route = `${options.prefix ?? ''}/add-checkpoint`;
  const log = options.onRequest ?? (() => {});
  return createServer(serverTimeoutOptions(options.timeouts), (req, res) => {
    void (async () => {
      const path = (req.url ?? '').split('?')[0];
      // A liveness probe (the docs wait on it): answered without a log line, so probes log no 404s.
      if (path === `${options.prefix ?? ''}/healthz` && (req.method === 'GET' || req.method === 'HEAD')) return send(res, 200, 'application/json', '{"ok":true}\n');
      // C2SP tlog-witness monitor retrieval: GET <prefix>/<origin hash>/checkpoint.
      const m = path === undefined ? null : /^\/([0-9a-f]{64})\/checkpoint$/.exec(path.slice((options.prefix ?? '').length));
      if (m && path!.startsWith(options.prefix ?? '')) {
        drainBody(req, MAX_ADD_CHECKPOINT_BYTES);
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          res.setHeader('allow', 'GET, HEAD');
          return send(res, 405, 'text/plain; charset=utf-8', 'use GET\n');
        }
        const cp = await witness.checkpointFor(m[1]!);
        log({ status: cp === undefined ? 404 : 200, code: 'checkpoint' });
        return cp === undefined ? send(res, 404, 'text/plain; charset=utf-8', 'no checkpoint cosigned for this origin\n') : send(res, 200, 'text/plain; charset=utf-8', cp);
      }
      if (path !== route) {
        drainBody(req, MAX_ADD_CHECKPOINT_BYTES);
        log({ status: 404, code: 'no-route' });
        return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
      }
      if (req.method !== 'POST') {
        drainBody(req, MAX_ADD_CHECKPOINT_BYTES);
        res.setHeader('allow', 'POST');
        log({ status: 405 });
        return send(res, 405, 'text/plain; charset=utf-8', 'use POST\n');
      }
      const raw = await readBody(req, MAX_ADD_CHECKPOINT_BYTES);
      if (raw === 'aborted') return;
      if (raw === 'too-large') {
        log({ status: 413 });
        res.setHeader('connection', 'close');
        return send(res, 413, 'text/plain; charset=utf-8', `body over ${MAX_ADD_CHECKPOINT_BYTES} bytes\n`);
      }
      let body: string;
      try {
        body = utf8.decode(raw);
      } catch {
        log({ status: 400, code: 'malformed-request' });
        return send(res, 400, 'text/plain; charset=utf-8', 'malformed-request: body is not UTF-8\n');
      }
      const r = await witness.addCheckpoint(body);
      log(r.ok ? { status: 200, origin: r.origin, size: r.size } : { status: r.status, code: r.code, ...(r.status === 409 ? { size: r.size } : {}) });
      answer(res, r);
    })().catch(() => {
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
      else res.destroy();
    });
  });
}

/**
 * `POST /rpc`: the content type checked, the body read under the size limit
 * and parsed under the depth limit, one rate-limit token taken per extra
 * batch member, then the JSON-RPC call(s) run on the `WireService`.
 * Runs after authentication and the first rate-limit token.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from './auth.js';
import { readBody } from '../http/body.js';
import { rateLimited, type HttpReplies } from './http-reply.js';
import { parseJsonBody } from './json.js';
import type { WireServerLimits } from './limits.js';
import type { RateLimiter } from './rate-limit.js';
import { handleRpc, type RpcReply } from './rpc.js';
import type { WireService } from './service.js';

/** What `POST /rpc` is answered with. */
export interface RpcRoute {
  readonly service: WireService;
  readonly replies: HttpReplies;
  readonly limiter: RateLimiter;
  readonly limits: WireServerLimits;
}

/** Answers one `POST /rpc` request. */
export async function serveRpc(route: RpcRoute, req: IncomingMessage, res: ServerResponse, t0: number, principal: Principal): Promise<void> {
  const { replies, limits } = route;
  const ct = req.headers['content-type'] ?? '';
  if (!/^application\/json(\s*;.*)?$/i.test(ct)) {
    return replies.refuse(req, res, t0, principal, { type: 'unsupported-media-type', message: 'POST /rpc needs Content-Type: application/json' });
  }
  const body = await readBody(req, limits.maxBodyBytes);
  if (body === 'too-large') {
    return replies.refuse(req, res, t0, principal, { type: 'payload-too-large', message: `the body is larger than ${limits.maxBodyBytes} bytes` });
  }
  if (body === 'aborted') {
    replies.access(req, t0, 499, principal, 'aborted');
    return;
  }
  const parsed = parseJsonBody(body, limits.maxDepth);
  if (!parsed.ok) {
    return replies.refuse(req, res, t0, principal, { type: parsed.type, message: parsed.message });
  }
  if (Array.isArray(parsed.value) && parsed.value.length > 1) {
    // A batch costs one bucket token per member.
    const extra = Math.min(parsed.value.length, limits.maxBatch) - 1;
    for (let i = 0; i < extra; i++) {
      const wait = route.limiter.take(principal.name, principal.rate);
      if (wait > 0) return replies.refuse(req, res, t0, principal, rateLimited(wait), { 'retry-after': String(Math.ceil(wait / 1000)) });
    }
  }
  const reply: RpcReply = await handleRpc(parsed.value, (method, params) => route.service.call(principal, method, params), limits.maxBatch);
  if (reply.body === undefined) {
    res.writeHead(reply.status, replies.closeHeader());
    res.end();
  } else {
    replies.sendJson(res, reply.status, reply.body);
  }
  for (const c of reply.calls) replies.logCall(c.outcome, c.ms, principal);
  if (reply.calls.length === 0) replies.access(req, t0, reply.status, principal, Array.isArray(reply.body) ? undefined : (reply.body as { error?: { data?: { type?: string } } }).error?.data?.type);
}

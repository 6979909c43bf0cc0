/**
 * Each session's own tree as a C2SP tlog-tiles read API (docs/WIRE.md,
 * docs/PROTOCOL.md §15.4.1), under the prefix `/sessions/<id>/tiles`:
 * `checkpoint` (the latest session checkpoint the engine key signed),
 * `tile/<L>/<N>[.p/<W>]` and `tile/entries/<N>[.p/<W>]`. A session's entries
 * are read like its bundle: after the bearer token and the rate limit, and an
 * agent token only for its own sessions. So the caching is `private` (a
 * shared cache MUST NOT keep one token's answer for another): full tiles
 * immutable for a year, partial ones a minute, the checkpoint two seconds.
 * An unknown session, a session never signed, a tile beyond the signed size
 * or a path not spelled as the spec allows is 404.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isDigestHex } from '../protocol/index.js';
import { readSessionTile, type SessionTilesOptions } from '../log/session-tiles.js';
import type { Principal } from './auth.js';
import { failureOfException } from './failures.js';
import { errInfo, ms, type HttpReplies } from './http-reply.js';
import type { Logger } from './log.js';
import type { WireService } from './service.js';

/** Cache-Control of a session's full tile or entry bundle. */
export const SESSION_IMMUTABLE = 'private, max-age=31536000, immutable';
/** Cache-Control of a session's partial tile or bundle. */
export const SESSION_PARTIAL = 'private, max-age=60';
/** Cache-Control of a session's checkpoint. */
export const SESSION_CHECKPOINT = 'private, max-age=2';

const ROUTE = /^\/sessions\/([^/]{1,128})\/tiles\/(checkpoint|tile\/.+)$/;

/** The session id and the path below its prefix, when `path` is under a session's tiles prefix. */
export function sessionTilePath(path: string): { readonly sessionId: string; readonly rest: string } | undefined {
  const m = ROUTE.exec(path);
  return m ? { sessionId: m[1]!, rest: m[2]! } : undefined;
}

/** What the session tiles are answered from; `tiles` absent when the server signs no checkpoints. */
export interface SessionTileRoutes {
  readonly service: WireService;
  readonly replies: HttpReplies;
  readonly log: Logger;
  readonly tiles: SessionTilesOptions | undefined;
}

/** Answers `GET|HEAD /sessions/<id>/tiles/<rest>` (after authentication and the rate limit). */
export async function serveSessionTile(routes: SessionTileRoutes, req: IncomingMessage, res: ServerResponse, t0: number, principal: Principal, at: { readonly sessionId: string; readonly rest: string }): Promise<void> {
  const { replies, service } = routes;
  const { sessionId, rest } = at;
  if (req.method !== 'GET' && req.method !== 'HEAD') return replies.refuse(req, res, t0, principal, { type: 'method-not-allowed', message: 'use GET' }, { allow: 'GET, HEAD' });
  if (!routes.tiles) return replies.refuse(req, res, t0, principal, { type: 'not-found', message: 'this server signs no checkpoints (start it with an engine key: tally serve --key <file>)' });
  if (!isDigestHex(sessionId)) return replies.refuse(req, res, t0, principal, { type: 'not-found', message: 'no such session (the id is 64 lowercase hex)' });
  try {
    const denied = await service.readAccess(principal, sessionId);
    if (denied) return replies.refuse(req, res, t0, principal, denied);
    const r = await readSessionTile(routes.tiles, sessionId, rest);
    if (!r.ok) return replies.refuse(req, res, t0, principal, { type: 'not-found', message: r.message });
    const { body, immutable } = r.resource;
    const checkpoint = rest === 'checkpoint';
    res.writeHead(200, {
      'content-type': checkpoint ? 'text/plain; charset=utf-8' : 'application/octet-stream',
      'content-length': String(body.length),
      'cache-control': checkpoint ? SESSION_CHECKPOINT : immutable ? SESSION_IMMUTABLE : SESSION_PARTIAL,
      'x-content-type-options': 'nosniff',
      ...replies.closeHeader(),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    routes.log.debug({ method: `${req.method} tiles/${rest.slice(0, 40)}`, session: sessionId, status: 200, ms: ms(t0), principal: principal.name }, 'tile');
  } catch (e) {
    routes.log.error({ method: `${req.method} tiles`, session: sessionId, err: errInfo(e) }, 'tile read failed');
    replies.sendError(req, res, failureOfException(e));
  }
}

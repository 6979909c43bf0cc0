/**
 * The engine log's C2SP tlog-tiles read API under one prefix, without a
 * token (a public log): `GET <prefix>/checkpoint` (text/plain, cached a few
 * seconds at most), `GET <prefix>/tile/<L>/<N>[.p/<W>]` and
 * `GET <prefix>/tile/entries/<N>[.p/<W>]` (application/octet-stream; a full
 * tile is immutable, cached a year; a partial one a minute). Paths spelled
 * any other way than the spec's are 404 (docs/PROTOCOL.md §15.4). With an
 * identity, `GET <prefix>/identity` answers the log's signed identity
 * document (§15.8; text/plain, cached a minute).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EngineLog, LogCheckpoint } from '../log/engine-log.js';
import { readTile } from '../log/tiles.js';

/** The engine log served, and where. */
export interface TileRoutes {
  readonly log: EngineLog;
  /** The URL path prefix, e.g. `/log` (no trailing slash). */
  readonly prefix: string;
  /** The checkpoint's note with the witnesses' cosignatures collected for it (docs/PROTOCOL.md §15.6); default: as signed. */
  readonly cosigned?: (checkpoint: LogCheckpoint) => Promise<string>;
  /** The log's signed identity document (docs/PROTOCOL.md §15.8), served at `<prefix>/identity`; absent: 404. */
  readonly identity?: string;
}

/** Cache-Control of a full tile or entry bundle: its bytes never change. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Cache-Control of a partial tile: the same bytes too, but superseded by the full tile. */
export const PARTIAL = 'public, max-age=60';
/** Cache-Control of the checkpoint: mutable, "SHOULD prevent caching beyond a few seconds". */
export const CHECKPOINT = 'public, max-age=2';

/** Whether `path` is under the routes' prefix. */
export function isTilePath(routes: TileRoutes, path: string): boolean {
  return path === `${routes.prefix}/checkpoint` || path === `${routes.prefix}/identity` || path.startsWith(`${routes.prefix}/tile/`);
}

/** Answers a request for `path` (under the prefix); `extra` headers (e.g. connection: close) go on every answer. */
export async function serveTile(routes: TileRoutes, req: IncomingMessage, res: ServerResponse, path: string, extra: Record<string, string>): Promise<number> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'use GET\n', { allow: 'GET, HEAD', ...extra });
  const rest = path.slice(routes.prefix.length + 1);
  if (rest === 'checkpoint') {
    const cp = await routes.log.publish();
    if (!cp) return plain(res, 404, 'the engine log has no checkpoint yet\n', extra);
    const body = Buffer.from(routes.cosigned ? await routes.cosigned(cp) : cp.signedCheckpoint, 'utf8');
    return send(req, res, 'text/plain; charset=utf-8', CHECKPOINT, body, extra);
  }
  if (rest === 'identity') {
    if (routes.identity === undefined) return plain(res, 404, 'no log identity is published (tally serve --log-identity)\n', extra);
    return send(req, res, 'text/plain; charset=utf-8', PARTIAL, Buffer.from(routes.identity, 'utf8'), extra);
  }
  const tile = await readTile(routes.log, rest);
  if (!tile) return plain(res, 404, 'no such tile\n', extra);
  return send(req, res, 'application/octet-stream', tile.immutable ? IMMUTABLE : PARTIAL, tile.body, extra);
}

function send(req: IncomingMessage, res: ServerResponse, type: string, cache: string, body: Uint8Array, extra: Record<string, string>): number {
  res.writeHead(200, { 'content-type': type, 'content-length': String(body.length), 'cache-control': cache, 'x-content-type-options': 'nosniff', 'access-control-allow-origin': '*', ...extra });
  res.end(req.method === 'HEAD' ? undefined : body);
  return 200;
}

function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string>): number {
  const body = Buffer.from(text, 'utf8');
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(body.length), 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...headers });
  res.end(body);
  return status;
}

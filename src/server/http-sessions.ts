/**
 * The grader's GETs of one session, `GET /sessions/:id/<what>`: their query
 * parameters checked, then answered from the `WireService` (the bundle
 * streamed as JSONL). Runs after authentication and the rate limit.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BUNDLE_RANGE_MAX, TallyError } from '../protocol/index.js';
import type { Principal } from './auth.js';
import { errInfo, ms, type HttpReplies } from './http-reply.js';
import type { Logger } from './log.js';
import type { ReadOutcome, WireService } from './service.js';
import type { TileRoutes } from './http-tiles.js';

/** Most entries one `GET /sessions/:id/bundle?from=N` answers (the follower asks again for the rest): the protocol's one constant. */
export { BUNDLE_RANGE_MAX };

const SESSION_ROUTE = /^\/sessions\/([^/]{1,128})\/(describe|events|bundle|receipt|proof|checkpoint|turn-receipt|consistency|log-proof)$/;

/** What the session routes answer with. */
export interface SessionRoutes {
  readonly service: WireService;
  readonly replies: HttpReplies;
  readonly log: Logger;
  /** The engine log (`tally serve --log-key`): `GET /sessions/:id/log-proof` answers the day's binding into it. */
  readonly tiles?: TileRoutes;
}

/** Answers `path` when it is a session route, else refuses it as `not-found`. */
export async function routeSession(routes: SessionRoutes, req: IncomingMessage, res: ServerResponse, t0: number, principal: Principal, path: string, query: URLSearchParams): Promise<void> {
  const { service, replies } = routes;
  const m = SESSION_ROUTE.exec(path);
  if (!m) return replies.refuse(req, res, t0, principal, { type: 'not-found', message: `no route ${path.slice(0, 80)}` });
  if (req.method !== 'GET') return replies.refuse(req, res, t0, principal, { type: 'method-not-allowed', message: `use GET ${path.slice(0, 80)}` }, { allow: 'GET' });
  const sessionId = m[1]!;
  const what = m[2]!;
  // One value per parameter: a repeated one is refused, never read as its first (or last) spelling.
  for (const k of new Set(query.keys())) {
    if (query.getAll(k).length > 1) return replies.refuse(req, res, t0, principal, { type: 'malformed-query', message: `the query parameter ${JSON.stringify(k.slice(0, 40))} is given more than once` });
  }
  switch (what) {
    case 'bundle': {
      // ?from=N[&limit=M]: entries N… only (at most BUNDLE_RANGE_MAX), for a grader following a live day.
      const from = optionalInt(query.get('from'));
      const limit = optionalInt(query.get('limit'));
      if (from === null || limit === null || limit === 0 || (limit !== undefined && from === undefined)) {
        return replies.refuse(req, res, t0, principal, { type: 'malformed-entry', message: `bundle takes ?from=<n> (and optionally &limit=<1..${BUNDLE_RANGE_MAX}>) as non-negative integers` });
      }
      return streamBundle(routes, req, res, t0, principal, sessionId, from === undefined ? undefined : { from, limit: Math.min(limit ?? BUNDLE_RANGE_MAX, BUNDLE_RANGE_MAX) });
    }
    case 'events': {
      const params: Record<string, unknown> = { sessionId };
      for (const k of ['after', 'limit', 'wait']) {
        const v = query.get(k);
        if (v !== null) params[k] = /^-?[0-9]{1,16}$/.test(v) ? Number(v) : v;
      }
      const outcome = await service.call(principal, 'session/events', params);
      replies.sendOutcome(req, res, t0, principal, `GET ${what}`, outcome);
      return;
    }
    case 'describe':
      return replies.sendRead(req, res, t0, principal, what, sessionId, await service.describe(principal, sessionId));
    case 'receipt':
      return replies.sendRead(req, res, t0, principal, what, sessionId, await service.receipt(principal, sessionId));
    case 'checkpoint': {
      const size = optionalInt(query.get('size'));
      if (size === null) return replies.refuse(req, res, t0, principal, { type: 'malformed-entry', message: 'size must be a non-negative integer' });
      const out = await service.checkpoint(principal, sessionId, size);
      return replies.sendRead(req, res, t0, principal, what, sessionId, out.ok ? { ok: true, value: out.value.signedCheckpoint } : out);
    }
    case 'log-proof': {
      const size = optionalInt(query.get('size'));
      if (size === null) return replies.refuse(req, res, t0, principal, { type: 'malformed-entry', message: 'size must be a non-negative integer' });
      return replies.sendRead(req, res, t0, principal, what, sessionId, await servedLogBinding(routes, principal, sessionId, size));
    }
    case 'turn-receipt': {
      const index = intParam(query.get('index'));
      const size = optionalInt(query.get('size'));
      if (index === undefined || size === null) return replies.refuse(req, res, t0, principal, { type: 'malformed-entry', message: 'turn-receipt needs ?index=<n> (and optionally &size=<n>) as non-negative integers' });
      return replies.sendRead(req, res, t0, principal, what, sessionId, await service.turnReceipt(principal, sessionId, index, size));
    }
    case 'consistency': {
      const from = intParam(query.get('from'));
      const to = optionalInt(query.get('to'));
      if (from === undefined || to === null) return replies.refuse(req, res, t0, principal, { type: 'malformed-entry', message: 'consistency needs ?from=<n> (and optionally &to=<n>) as non-negative integers' });
      return replies.sendRead(req, res, t0, principal, what, sessionId, await service.consistency(principal, sessionId, from, to));
    }
    default: {
      const index = intParam(query.get('index'));
      const size = query.get('size');
      const sizeN = size === null ? undefined : intParam(size);
      if (index === undefined || (size !== null && sizeN === undefined)) {
        return replies.refuse(req, res, t0, principal, { type: 'malformed-entry', message: 'proof needs ?index=<n> (and optionally &size=<n>) as non-negative integers' });
      }
      return replies.sendRead(req, res, t0, principal, what, sessionId, await service.proof(principal, sessionId, index, sizeN));
    }
  }
}

/** `GET /sessions/:id/bundle[?from=N&limit=M]`: the entries as JSONL, written with backpressure; a stream that fails is cut. */
async function streamBundle(routes: SessionRoutes, req: IncomingMessage, res: ServerResponse, t0: number, principal: Principal, sessionId: string, range?: { readonly from: number; readonly limit: number }): Promise<void> {
  const { replies, log } = routes;
  const out = await routes.service.bundle(principal, sessionId, range);
  if (!out.ok) return replies.readFailure(req, res, t0, principal, 'bundle', sessionId, out);
  res.writeHead(200, { 'content-type': 'application/jsonl', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...replies.closeHeader() });
  let lines = 0;
  try {
    for await (const line of out.value) {
      lines++;
      if (!res.write(line)) await new Promise<void>((r) => res.once('drain', r));
      if (res.destroyed) return;
    }
    res.end();
    log.info({ method: 'GET bundle', session: sessionId, status: 200, entries: lines, ...(range === undefined ? {} : { from: range.from }), ms: ms(t0), principal: principal.name }, 'read');
  } catch (e) {
    // Cut the stream: a truncated bundle fails verification, never passes as shorter.
    log.error({ method: 'GET bundle', session: sessionId, err: errInfo(e), entries: lines }, 'bundle stream failed');
    res.destroy();
  }
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

/**
 * `GET /sessions/:id/log-proof[?size=n]`: the log binding (docs/PROTOCOL.md
 * §15.5, a tlog-proof) of the session checkpoint `GET …/checkpoint?size=n`
 * answers, in a log checkpoint signed now (with the witnesses' cosignatures
 * when the server collects them) — what `tally export` writes as
 * log-proof.tlog-proof. 404 without an engine log, or when the log holds no
 * leaf for that checkpoint.
 */
async function servedLogBinding(routes: SessionRoutes, principal: Principal, sessionId: string, size: number | undefined): Promise<ReadOutcome<string>> {
  const tiles = routes.tiles;
  if (tiles === undefined) return { ok: false, failure: { type: 'not-found', message: 'this server keeps no engine log (tally serve --log-key)' } };
  const out = await routes.service.checkpoint(principal, sessionId, size);
  if (!out.ok) return out;
  const { signedCheckpoint, size: n, root } = out.value;
  const origin = signedCheckpoint.slice(0, signedCheckpoint.indexOf('\n'));
  const { logBinding } = await import('../log/binding.js');
  try {
    const cp = await tiles.log.checkpoint();
    const note = tiles.cosigned ? await tiles.cosigned(cp) : cp.signedCheckpoint;
    return { ok: true, value: await logBinding(tiles.log, { origin, size: n, root }, { ...cp, signedCheckpoint: note }) };
  } catch (e) {
    if (e instanceof TallyError && e.code === 'TALLY_LOG_NOT_LOGGED') return { ok: false, failure: { type: 'not-found', message: `${e.shortMessage} (size ${n})` } };
    throw e;
  }
}

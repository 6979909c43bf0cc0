/**
 * `tally serve --otel` as a user runs it (the built binary, a child process):
 * its spans reach a loopback OTLP/HTTP receiver (a node:http server here that
 * decodes the JSON payloads), continuing the trace of an incoming W3C
 * `traceparent`; `GET /metrics` answers auditor tokens (and anyone on
 * `--metrics-bind`); `GET /readyz` says which check failed; and no token,
 * key or authored byte ever reaches the exporter or the metrics.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toBase64 } from '../../src/protocol/index.js';
import { TOKENS, cleanup, get, newEngineKey, ok, rpc, startServer, tempDir, type ServerProc } from '../server/helpers.js';

interface OtlpSpan { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: { key: string; value: Record<string, unknown> }[] }
interface OtlpTraces { resourceSpans: { resource?: { attributes?: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[] }

/** A loopback OTLP/HTTP receiver: keeps every body posted to /v1/traces and /v1/metrics. */
async function receiver(): Promise<{ server: Server; url: string; traces: string[]; metrics: string[]; contentTypes: string[] }> {
  const traces: string[] = [];
  const metrics: string[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      contentTypes.push(String(req.headers['content-type']));
      if (req.url === '/v1/traces') traces.push(body);
      else if (req.url === '/v1/metrics') metrics.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, traces, metrics, contentTypes };
}

const attr = (s: OtlpSpan, key: string): unknown => {
  const v = s.attributes?.find((a) => a.key === key)?.value;
  return v === undefined ? undefined : (v['stringValue'] ?? (v['intValue'] === undefined ? v['boolValue'] : Number(v['intValue'])));
};

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const SECRET_TEXT = 'authored-SECRET-3f9a1c77-never-exported';
/** A 64-hex value shaped like a session id (it could be a key); sent as a session id it must not be exported. */
const HEX_SECRET = 'ab'.repeat(16) + '5ec7e75ec7e75ec7e75ec7e75ec7e75e';

describe('tally serve --otel', () => {
  let otlp: Awaited<ReturnType<typeof receiver>>;
  let srv: ServerProc;
  let metricsUrl: string;
  let sid: string;
  let turnIndex: number;

  beforeAll(async () => {
    otlp = await receiver();
    srv = await startServer({
      args: ['--otel', '--metrics-bind', '127.0.0.1:0'],
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_SERVICE_NAME: 'tally-under-test', OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_METRIC_EXPORT_INTERVAL: '200' },
    });
    const line = srv.stderr().split('\n').find((l) => l.includes('"metrics-listening"'));
    metricsUrl = (JSON.parse(line!) as { url: string }).url;
    sid = ok<{ sessionId: string }>(await rpc(srv.url, TOKENS.runtime, 'session/open', { spec: { name: 'otel', run: `${process.pid}` } })).sessionId;
    const f = ok<{ entryHash: string; frameRoot: string }>(await rpc(srv.url, TOKENS.runtime, 'session/frame', { sessionId: sid, ordinal: -1, time: 1_000 }));
    const res = await fetch(`${srv.url}/rpc`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKENS.runtime}`, 'content-type': 'application/json', traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/turn', params: { sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: toBase64(new TextEncoder().encode(SECRET_TEXT)) } } }),
    });
    turnIndex = ((await res.json()) as { result: { index: number } }).result.index;
    // Hostile values where identifiers belong: a token and a hex secret as session ids, a token in the path and query.
    await rpc(srv.url, TOKENS.runtime, 'session/describe', { sessionId: TOKENS.auditor });
    await rpc(srv.url, TOKENS.runtime, 'session/describe', { sessionId: HEX_SECRET });
    await get(srv.url, TOKENS.runtime, `/sessions/${TOKENS.beta}/describe?after=${TOKENS.alpha}`);
  }, 30_000);

  afterAll(async () => {
    await srv?.stop();
    otlp?.server.close();
    cleanup();
  });

  it('serves Prometheus text to auditor tokens, refuses other roles, and serves it without a token on --metrics-bind', async () => {
    const m = await get(srv.url, TOKENS.auditor, '/metrics');
    expect(m.status).toBe(200);
    expect(m.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(m.text).toMatch(/^tally_turns_total\{outcome="recorded",code="none"\} 1\b/m);
    expect(m.text).toMatch(/^tally_sessions_opened_total 1\b/m);
    expect(m.text).toMatch(/^tally_store_batch_size_count 2\b/m);
    expect((await get(srv.url, TOKENS.runtime, '/metrics')).status).toBe(403);
    expect((await get(srv.url, undefined, '/metrics')).status).toBe(401);
    const open = await fetch(`${metricsUrl}`);
    expect(open.status).toBe(200);
    expect(await open.text()).toMatch(/^tally_turns_total\{/m);
    expect((await fetch(metricsUrl.replace('/metrics', '/rpc'))).status).toBe(404);
    for (const secret of [TOKENS.runtime, TOKENS.auditor, TOKENS.alpha, TOKENS.beta, HEX_SECRET, SECRET_TEXT]) expect(m.text).not.toContain(secret);
  });

  it('answers GET /readyz with every check (no token needed)', async () => {
    const r = await get(srv.url, undefined, '/readyz');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toEqual({ ok: true, checks: { store: { state: 'ok' }, migrations: { state: 'ok' }, key: { state: 'skipped' }, replication: { state: 'skipped' }, continuity: { state: 'skipped' }, witnesses: { state: 'skipped' } }, failed: [] });
  });

  it('exports spans over OTLP/HTTP JSON that continue the caller’s traceparent, and no secret', async () => {
    const code = await srv.stop();
    expect(code).toBe(0);
    expect(otlp.traces.length).toBeGreaterThan(0);
    expect(otlp.contentTypes).toContain('application/json');
    const docs = otlp.traces.map((t) => JSON.parse(t) as OtlpTraces);
    const service = docs[0]!.resourceSpans[0]!.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue;
    expect(service).toBe('tally-under-test');
    const spans = docs.flatMap((d) => d.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
    const http = spans.find((s) => s.name === 'POST /rpc' && s.traceId === TRACE_ID);
    expect(http, 'the HTTP span joins the incoming trace').toBeDefined();
    expect(http!.parentSpanId).toBe(PARENT_ID);
    const turn = spans.find((s) => s.name === 'tally.turn' && s.traceId === TRACE_ID)!;
    expect(turn.parentSpanId).toBe(http!.spanId);
    expect(attr(turn, 'tally.session.id')).toBe(sid);
    expect(attr(turn, 'tally.entry.index')).toBe(turnIndex);
    expect(attr(turn, 'tally.duplicate')).toBe(false);
    const append = spans.find((s) => s.name === 'tally.store.append' && s.parentSpanId === turn.spanId)!;
    expect(attr(append, 'tally.store.batch_size')).toBe(1);
    const describes = spans.filter((s) => s.name === 'tally.describe');
    // The token-shaped ids are refused by the wire's schema before the engine; the hex one reaches it.
    expect(describes.map((s) => [attr(s, 'tally.diagnostic'), attr(s, 'tally.session.id')])).toEqual([['wrong-session', undefined]]);
    expect(spans.some((s) => s.name === 'GET /sessions/{id}/describe')).toBe(true);
    const everything = otlp.traces.join('\n') + otlp.metrics.join('\n');
    expect(otlp.metrics.length).toBeGreaterThan(0);
    for (const secret of [TOKENS.runtime, TOKENS.auditor, TOKENS.alpha, TOKENS.beta, HEX_SECRET, SECRET_TEXT, toBase64(new TextEncoder().encode(SECRET_TEXT))]) expect(everything).not.toContain(secret);
  }, 20_000);
});

describe('GET /readyz when a check fails', () => {
  it('is 503 and names the failed check (the engine key file went away)', async () => {
    const dir = tempDir('ready');
    const key = join(dir, 'engine.key');
    newEngineKey(key);
    const srv = await startServer({ dir, args: ['--key', key] });
    try {
      expect((await get(srv.url, undefined, '/readyz')).status).toBe(200);
      rmSync(key);
      const gone = await get(srv.url, undefined, '/readyz');
      expect(gone.status).toBe(503);
      const body = JSON.parse(gone.text) as { ok: boolean; failed: string[]; checks: Record<string, { state: string; reason?: string }> };
      expect(body).toMatchObject({ ok: false, failed: ['key'], checks: { store: { state: 'ok' }, migrations: { state: 'ok' }, key: { state: 'failed' } } });
      expect(body.checks['key']!.reason).toContain('ENOENT');
      expect(gone.text).not.toContain(dir);
    } finally {
      await srv.stop();
      cleanup();
    }
  }, 30_000);
});

/**
 * The wire under hostile input, on an in-process server (real HTTP on
 * loopback, real engine and store): malformed request targets, the JSON-RPC
 * envelope on every refusal of `/rpc` whatever spelling of the target reached
 * it, the bearer scheme in any case, header and body timeouts that fire
 * within a fraction of their setting, and many concurrent long-polls without
 * a process warning.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wireErrorRow } from '../../src/server/vocabulary.js';
import { TOKENS, cleanup, ok, rpc, startServer } from './helpers.js';
import { startInProcess, type InProcessServer } from './in-process.js';
import { stall } from '../helpers/stall.js';

const RT = TOKENS.runtime;

/** One raw HTTP/1.1 exchange: the bytes sent as written, the whole answer until the server closes. */
function raw(port: number, request: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    s.on('data', (c: Buffer) => (got += c.toString('latin1')));
    s.on('error', reject);
    s.on('close', () => {
      const at = got.indexOf('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0);
      let body = got.slice(at + 4);
      if (/transfer-encoding: chunked/i.test(got.slice(0, at))) body = dechunk(body);
      resolve({ status, headers: got.slice(0, at), body });
    });
    s.write(request);
  });
}

function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const nl = rest.indexOf('\r\n');
    const n = parseInt(rest.slice(0, nl), 16);
    if (!(n > 0)) return out;
    out += rest.slice(nl + 2, nl + 2 + n);
    rest = rest.slice(nl + 2 + n + 2);
  }
}

const rpcBody = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'session/describe', params: { sessionId: 'ab'.repeat(32) } });

function postRaw(target: string, headers: Record<string, string>, body = rpcBody): string {
  const lines = [`POST ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

describe('request targets and envelopes', () => {
  let srv: InProcessServer;
  beforeAll(async () => {
    srv = await startInProcess();
  });
  afterAll(() => srv.server.close(100));

  it('a malformed request target is 400 malformed-target before any auth, never a 500', async () => {
    for (const target of ['//[', 'http://[/', 'http://a:99999/', 'http://a:99999/rpc', '*', '/rpc#x', '/sessions/%zz/bundle', 'ftp://a/rpc']) {
      for (const auth of [{}, { Authorization: `Bearer ${RT}` }]) {
        const r = await raw(srv.port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${Object.entries(auth).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`);
        expect({ target, status: r.status }).toEqual({ target, status: 400 });
        expect(JSON.parse(r.body)).toMatchObject({ error: { type: 'malformed-target', code: wireErrorRow('malformed-target').code } });
      }
    }
    expect(srv.log.some((l) => l['status'] === 500 || l['level'] === 50)).toBe(false);
    // A well-formed path that merely contains odd characters is still routed (and, without a token, 401).
    expect((await raw(srv.port, 'GET //a/b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).status).toBe(401);
  });

  it('every refusal on /rpc is a JSON-RPC envelope, however the target spells /rpc', async () => {
    for (const target of ['/rpc', '/a/../rpc', '/./rpc', 'http://127.0.0.1/rpc', 'http://example.test/a/../rpc', '/rpc?x=1']) {
      const unauth = await raw(srv.port, postRaw(target, {}));
      expect({ target, status: unauth.status }).toEqual({ target, status: 401 });
      expect(JSON.parse(unauth.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32010, data: { type: 'unauthorized', retryable: false } } });
      const media = await raw(srv.port, postRaw(target, { Authorization: `Bearer ${RT}`, 'Content-Type': 'text/plain' }).replace('Content-Type: application/json\r\n', ''));
      expect(media.status).toBe(415);
      expect(JSON.parse(media.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32017, data: { type: 'unsupported-media-type' } } });
      const answered = await raw(srv.port, postRaw(target, { Authorization: `Bearer ${RT}` }));
      expect(answered.status).toBe(404);
      expect(JSON.parse(answered.body)).toMatchObject({ jsonrpc: '2.0', id: 9, error: { code: -32001, data: { type: 'wrong-session' } } });
    }
    const getRpc = await raw(srv.port, `GET /a/../rpc HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${RT}\r\n\r\n`);
    expect(getRpc.status).toBe(405);
    expect(JSON.parse(getRpc.body)).toMatchObject({ jsonrpc: '2.0', error: { data: { type: 'method-not-allowed' } } });
    // Other routes keep the plain {error} body.
    const plain = await raw(srv.port, `GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${RT}\r\n\r\n`);
    expect(JSON.parse(plain.body)).toMatchObject({ error: { type: 'not-found' } });
  });

  it('the Bearer scheme is case-insensitive (RFC 7235); the token is not', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      const r = await raw(srv.port, postRaw('/rpc', { Authorization: `${scheme} ${RT}` }));
      expect({ scheme, status: r.status }).toEqual({ scheme, status: 404 }); // authenticated: the unknown session answers
    }
    for (const header of [`bearer ${RT.toUpperCase()}`, `Bearer${RT}`, `Basic ${RT}`, `Bearer ${RT} x`]) {
      expect((await raw(srv.port, postRaw('/rpc', { Authorization: header }))).status).toBe(401);
    }
  });
});

describe('timeouts', () => {
  const headersTimeoutMs = 1_000;
  const requestTimeoutMs = 2_000;
  let srv: InProcessServer;
  beforeAll(async () => {
    srv = await startInProcess({ limits: { headersTimeoutMs, requestTimeoutMs } });
  });
  afterAll(() => srv.server.close(100));

  it('headers that never finish are cut after the headers timeout, well before twice it', async () => {
    const { order, got } = await stall(srv.port, 'POST /rpc HTTP/1.1\r\nHost: x\r\n', headersTimeoutMs);
    expect(order).toEqual(['setting', 'closed']);
    expect(got).toMatch(/^HTTP\/1\.1 408/);
  });

  it('a body that never finishes is cut after the request timeout, well before twice it', async () => {
    const head = `POST /rpc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${RT}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc"`;
    const { order, got } = await stall(srv.port, head, requestTimeoutMs);
    expect(order).toEqual(['setting', 'closed']);
    expect(got).toMatch(/^HTTP\/1\.1 408/);
  });
});

describe('long-polls', () => {
  it('many concurrent long-polls on one session raise no process warning, and all return when an entry lands', async () => {
    const srv = await startInProcess({ pollMs: 20 });
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      const call = async (method: string, params: unknown): Promise<Record<string, unknown>> => {
        const res = await fetch(`${srv.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${RT}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
        const body = (await res.json()) as { result?: Record<string, unknown> };
        if (!body.result) throw new Error(JSON.stringify(body));
        return body.result;
      };
      const { sessionId } = (await call('session/open', { spec: { name: 'polls' } })) as { sessionId: string };
      const n = 40;
      const polls = Array.from({ length: n }, () => call('session/events', { sessionId, after: 0, wait: 30_000 }));
      // Every poll is registered before the entry lands.
      while (srv.server.inFlight < n) await new Promise((r) => setImmediate(r));
      await call('session/frame', { sessionId, ordinal: -1, time: 1 });
      const got = await Promise.all(polls);
      for (const g of got) expect((g['events'] as { index: number }[]).map((e) => e.index)).toEqual([1]);
      await new Promise((r) => setImmediate(r));
      expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await srv.server.close(100);
    }
  });

  it('tally serve under 30 concurrent long-polls writes only JSON lines to stderr and only its listening line to stdout', async () => {
    const srv = await startServer({ db: 'memory:' });
    try {
      const sessionId = ok<{ sessionId: string }>(await rpc(srv.url, RT, 'session/open', { spec: { name: 'polls-cli' } })).sessionId;
      const polls = Array.from({ length: 30 }, () => rpc(srv.url, RT, 'session/events', { sessionId, after: 0, wait: 30_000 }));
      // Each poll's log line comes when it returns; the frame below releases them all at once.
      ok(await rpc(srv.url, RT, 'session/frame', { sessionId, ordinal: -1, time: 1 }));
      for (const p of await Promise.all(polls)) expect(ok<{ events: { index: number }[] }>(p).events.map((e) => e.index)).toEqual([1]);
      await srv.untilStderr((e) => e.split('\n').filter((l) => l.includes('"session/events"')).length >= 30);
    } finally {
      expect(await srv.stop()).toBe(0);
    }
    for (const line of srv.stderr().split('\n').filter((l) => l !== '')) expect(() => JSON.parse(line), line).not.toThrow();
    expect(srv.stdout()).toMatch(/^tally serve: listening on http:\/\/[^\n]+\n$/);
    cleanup();
  });
});

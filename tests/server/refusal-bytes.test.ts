/**
 * The exact wire bytes of every refusal that is answered before a verb runs
 * (a malformed target, a draining server, no token, an empty bucket, an
 * unparsable `/rpc` body, a batch over the bucket): status line, every header
 * in order (only `Date` blanked) and body, pinned so that routing them through
 * one reply helper cannot change a byte. Raw sockets on an in-process server
 * on an injected clock, so `retryAfterMs` does not depend on the machine.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS } from './helpers.js';
import { startInProcess, type InProcessServer } from './in-process.js';

const RT = TOKENS.runtime;

/** Sends `request` on a fresh socket and resolves with everything until the server closes it, `Date` blanked. */
function exchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    collect(s).then(resolve, reject);
    s.write(request);
  });
}

function collect(s: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    s.on('data', (c: Buffer) => (got += c.toString('latin1')));
    s.on('error', reject);
    s.on('close', () => resolve(got.replace(/\r\nDate: [^\r]*/i, '\r\nDate: -')));
  });
}

function post(body: string, headers: Record<string, string>): string {
  const lines = ['POST /rpc HTTP/1.1', 'Host: 127.0.0.1', 'Connection: close', 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

describe('refusal bytes', () => {
  let srv: InProcessServer;
  beforeAll(async () => {
    srv = await startInProcess({ clock: () => 0, limits: { rate: { perSecond: 1, burst: 2 } } });
  });
  afterAll(() => srv.server.close(100));

  it('a malformed target (before auth, plain envelope, connection closed)', async () => {
    expect(await exchange(srv.port, 'GET * HTTP/1.1\r\nHost: x\r\n\r\n')).toMatchInlineSnapshot(`
      "HTTP/1.1 400 Bad Request
      content-type: application/json; charset=utf-8
      cache-control: no-store
      x-content-type-options: nosniff
      content-length: 154
      connection: close
      Date: -

      {"error":{"code":-32019,"type":"malformed-target","message":"the request target is not an origin-form path or an absolute http(s) URL","retryable":false}}"
    `);
    expect(srv.log.at(-1)).toMatchObject({ msg: 'refused', method: 'GET *', status: 400, diagnostic: 'malformed-target' });
  });

  it('no token: plain envelope on a GET, JSON-RPC envelope on /rpc', async () => {
    expect(await exchange(srv.port, 'GET /sessions/x/describe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatchInlineSnapshot(`
      "HTTP/1.1 401 Unauthorized
      content-type: application/json; charset=utf-8
      cache-control: no-store
      x-content-type-options: nosniff
      content-length: 142
      www-authenticate: Bearer realm="tally"
      Date: -
      Connection: close

      {"error":{"code":-32010,"type":"unauthorized","message":"a valid bearer token is required (Authorization: Bearer <token>)","retryable":false}}"
    `);
    expect(await exchange(srv.port, post('{}', {}))).toMatchInlineSnapshot(`
      "HTTP/1.1 401 Unauthorized
      content-type: application/json; charset=utf-8
      cache-control: no-store
      x-content-type-options: nosniff
      content-length: 177
      www-authenticate: Bearer realm="tally"
      Date: -
      Connection: close

      {"jsonrpc":"2.0","id":null,"error":{"code":-32010,"message":"a valid bearer token is required (Authorization: Bearer <token>)","data":{"type":"unauthorized","retryable":false}}}"
    `);
    expect(srv.log.at(-1)).toMatchObject({ msg: 'refused', method: 'POST /rpc', status: 401, diagnostic: 'unauthorized' });
    expect(srv.log.at(-1)).not.toHaveProperty('principal');
  });

  it('an unparsable and a too-deep /rpc body', async () => {
    expect(await exchange(srv.port, post('{"a":', { Authorization: `Bearer ${TOKENS.alpha}` }))).toMatchInlineSnapshot(`
      "HTTP/1.1 400 Bad Request
      content-type: application/json; charset=utf-8
      cache-control: no-store
      x-content-type-options: nosniff
      content-length: 172
      Date: -
      Connection: close

      {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the body is not strict JSON (syntax): unexpected end of JSON","data":{"type":"parse-error","retryable":false}}}"
    `);
    expect(srv.log.at(-1)).toMatchObject({ msg: 'refused', method: 'POST /rpc', status: 400, principal: 'alpha', diagnostic: 'parse-error' });
    expect(await exchange(srv.port, post('['.repeat(100) + ']'.repeat(100), { Authorization: `Bearer ${TOKENS.alpha}` }))).toMatchInlineSnapshot(`
      "HTTP/1.1 400 Bad Request
      content-type: application/json; charset=utf-8
      cache-control: no-store
      x-content-type-options: nosniff
      content-length: 145
      Date: -
      Connection: close

      {"jsonrpc":"2.0","id":null,"error":{"code":-32016,"message":"the JSON nests deeper than 64 levels","data":{"type":"too-deep","retryable":false}}}"
    `);
  });

  it('an empty bucket: on the first token (GET and /rpc) and on a batch member', async () => {
    const call = { jsonrpc: '2.0', id: 1, method: 'session/describe', params: { sessionId: 'ab'.repeat(32) } };
    // Two tokens in the bucket: a batch of three takes the first at the door and is refused on its third member.
    expect(await exchange(srv.port, post(JSON.stringify([call, call, call]), { Authorization: `Bearer ${RT}` }))).toMatchInlineSnapshot(`
      "HTTP/1.1 429 Too Many Requests
      content-type: application/json; charset=utf-8
      cache-control: no-store
      x-content-type-options: nosniff
      content-length: 161
      retry-after: 1
      Date: -
      Connection: close

      {"jsonrpc":"2.0","id":null,"error":{"code":-32013,"message":"rate limit: retry in 1000 ms","data":{"retryAfterMs":1000,"type":"rate-limited","retryable":false}}}"
    `);
    expect(srv.log.at(-1)).toMatchObject({ msg: 'refused', method: 'POST /rpc', status: 429, principal: 'runtime', diagnostic: 'rate-limited' });
    expect(await exchange(srv.port, `GET /sessions/x/describe HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${RT}\r\n\r\n`)).toMatchInlineSnapshot(`
      "HTTP/1.1 429 Too Many Requests
      content-type: application/json; charset=utf-8
      cache-control: no-store
      x-content-type-options: nosniff
      content-length: 126
      retry-after: 1
      Date: -
      Connection: close

      {"error":{"retryAfterMs":1000,"code":-32013,"type":"rate-limited","message":"rate limit: retry in 1000 ms","retryable":false}}"
    `);
    expect(await exchange(srv.port, post('{}', { Authorization: `Bearer ${RT}` }))).toMatchInlineSnapshot(`
      "HTTP/1.1 429 Too Many Requests
      content-type: application/json; charset=utf-8
      cache-control: no-store
      x-content-type-options: nosniff
      content-length: 161
      retry-after: 1
      Date: -
      Connection: close

      {"jsonrpc":"2.0","id":null,"error":{"code":-32013,"message":"rate limit: retry in 1000 ms","data":{"retryAfterMs":1000,"type":"rate-limited","retryable":false}}}"
    `);
    expect(srv.log.at(-1)).toMatchObject({ msg: 'refused', method: 'POST /rpc', status: 429, principal: 'runtime', diagnostic: 'rate-limited' });
  });

  it('a draining server answers a request whose headers were still arriving with 503 unavailable', async () => {
    const own = await startInProcess();
    const s = connect(own.port, '127.0.0.1');
    await new Promise<void>((r) => s.once('connect', () => r()));
    const answer = collect(s);
    // Headers begun before the close keep the connection active (not idle), so the close does not cut it.
    s.write('GET /sessions/x/describe HTTP/1.1\r\nHost: x\r\n');
    await new Promise((r) => setTimeout(r, 50));
    const closed = own.server.close(2_000);
    s.write(`Authorization: Bearer ${RT}\r\n\r\n`);
    expect(await answer).toMatchInlineSnapshot(`
      "HTTP/1.1 503 Service Unavailable
      content-type: application/json; charset=utf-8
      cache-control: no-store
      x-content-type-options: nosniff
      content-length: 130
      retry-after: 1
      connection: close
      Date: -

      {"error":{"code":-32015,"type":"unavailable","message":"the server is shutting down; retry on another instance","retryable":true}}"
    `);
    await closed;
    expect(own.log.find((l) => l['msg'] === 'refused')).toMatchObject({ method: 'GET /sessions/x/describe', status: 503, diagnostic: 'unavailable' });
  });
});

/**
 * Issue #11, the client's side: a server response is read by the one strict
 * parser. A response naming a member twice (JSON.parse keeps the last) or
 * holding a lone-surrogate escape is a typed `bad-response` WireError, never
 * read last-wins. A loopback server that answers fixed bytes stands in for a
 * hostile or broken server.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';

let body = '';
let server: Server;
let url = '';
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const ok = '{"ok":true,"phase":"sealed","size":3,"nextOrdinal":2}';

describe('client: server responses in the one encoding', () => {
  it('a well-formed response is read', async () => {
    body = `{"jsonrpc":"2.0","id":1,"result":${ok}}`;
    await expect(createClient({ url, token: 'x' }).describe('ab'.repeat(32))).resolves.toMatchObject({ ok: true, size: 3 });
  });

  for (const [code, text] of [
    ['duplicate-key', `{"jsonrpc":"2.0","id":1,"result":{"ok":false,"diagnostic":"wrong-session","message":"m"},"result":${ok}}`],
    ['lone-surrogate', `{"jsonrpc":"2.0","id":1,"result":{"ok":true,"phase":"sealed\\ud800","size":3,"nextOrdinal":2}}`],
    ['bom', `\ufeff{"jsonrpc":"2.0","id":1,"result":${ok}}`],
  ] as const) {
    it(`${code}: a typed bad-response WireError, not read last-wins or repaired`, async () => {
      body = text;
      const e = await createClient({ url, token: 'x', retry: { retries: 0 } }).describe('ab'.repeat(32)).catch((x: unknown) => x);
      expect(e).toMatchObject({ name: 'WireError', type: 'bad-response', code: 'TALLY_WIRE_BAD_RESPONSE', data: { code } });
    });
  }
});

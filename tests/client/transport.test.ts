/**
 * The client's default transport keeps connections alive (many calls, one
 * socket), answers exactly as the fetch transport does against a live
 * `tally serve`, and keeps the retry semantics: a stalled server is a
 * `timeout` retried, then a network WireError.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WireError, createClient } from '../../src/client/index.js';
import { TOKENS, cleanup, startServer, type ServerProc } from '../server/helpers.js';

let srv: ServerProc;
beforeAll(async () => {
  srv = await startServer({ db: 'memory:' });
});
afterAll(async () => {
  expect(await srv.stop()).toBe(0);
  cleanup();
});

/** A real node:http JSON-RPC server answering every call with a describe-like result, counting TCP connections. */
async function counting(stall = false): Promise<{ url: string; server: Server; connections: () => number; requests: () => number }> {
  let connections = 0;
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => {
      if (stall) return;
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { sessionId: 'ab'.repeat(32), phase: 'open' } });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, connections: () => connections, requests: () => requests };
}

describe('default transport', () => {
  it('sends 30 sequential calls over one kept-alive connection, and 8 concurrent callers over at most 8', async () => {
    const s = await counting();
    try {
      const client = createClient({ url: s.url, token: TOKENS.runtime, retry: { retries: 0 } });
      for (let i = 0; i < 30; i++) expect((await client.describe('ab'.repeat(32))).ok).toBe(true);
      expect(s.requests()).toBe(30);
      expect(s.connections()).toBe(1);
      for (let round = 0; round < 5; round++) await Promise.all(Array.from({ length: 8 }, () => client.describe('ab'.repeat(32))));
      expect(s.requests()).toBe(70);
      expect(s.connections()).toBeLessThanOrEqual(8);
    } finally {
      s.server.closeAllConnections();
      await new Promise((r) => s.server.close(r));
    }
  });

  it('answers exactly as the fetch transport does (verbs, refusals, bundle bytes, receipt) against tally serve', async () => {
    const fast = createClient({ url: srv.url, token: TOKENS.runtime });
    const viaFetch = createClient({ url: srv.url, token: TOKENS.runtime, fetch });
    const open = await fast.open({ name: 'transport-equality' });
    if (!open.ok) throw new Error(open.message);
    const again = await viaFetch.open({ name: 'transport-equality' });
    expect(again.ok && again.sessionId).toBe(open.sessionId);
    for (let ord = -1; ord < 3; ord++) {
      const a = ord % 2 === 0 ? fast : viaFetch;
      const f = await a.frame({ sessionId: open.sessionId, ordinal: ord, time: 10 + ord });
      if (!f.ok) throw new Error(f.message);
      const input = { sessionId: open.sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: `{"i":${ord}}` } } as const;
      const t = await a.turn(input);
      expect(t.ok).toBe(true);
      // A repeat is the same content-addressed answer through either transport.
      const repeat = await fast.turn(input);
      expect(repeat.ok && repeat.entryHash).toBe(t.ok && t.entryHash);
      expect(await viaFetch.turn(input)).toEqual(repeat);
    }
    expect(await fast.describe(open.sessionId)).toEqual(await viaFetch.describe(open.sessionId));
    expect(await fast.events(open.sessionId)).toEqual(await viaFetch.events(open.sessionId));
    expect(await fast.describe('00'.repeat(32))).toEqual(await viaFetch.describe('00'.repeat(32)));
    const err = async (p: Promise<unknown>): Promise<unknown> => p.then(() => 'resolved', (e: WireError) => ({ type: e.type, message: e.message, status: e.status }));
    expect(await err(fast.receipt(open.sessionId))).toEqual(await err(viaFetch.receipt(open.sessionId)));
    const fin = await fast.finalize(open.sessionId);
    expect(fin.ok).toBe(true);
    expect(await fast.receipt(open.sessionId)).toEqual(await viaFetch.receipt(open.sessionId));
    const bytes = async (c: typeof fast): Promise<Buffer> => {
      const parts: Uint8Array[] = [];
      for await (const chunk of c.bundle(open.sessionId)) parts.push(chunk);
      return Buffer.concat(parts);
    };
    const b = await bytes(fast);
    expect(b.length).toBeGreaterThan(0);
    expect(b.equals(await bytes(viaFetch))).toBe(true);
    const bad = createClient({ url: srv.url, token: 'not-a-token', retry: { retries: 0 } });
    const badFetch = createClient({ url: srv.url, token: 'not-a-token', retry: { retries: 0 }, fetch });
    expect(await err(bad.describe(open.sessionId))).toEqual(await err(badFetch.describe(open.sessionId)));
  });

  it('a stalled server is a timeout, retried, then a network WireError (as over fetch)', async () => {
    const s = await counting(true);
    try {
      const reasons: string[] = [];
      const client = createClient({ url: s.url, token: TOKENS.runtime, timeoutMs: 150, retry: { retries: 1, baseMs: 1, maxMs: 1 }, onRetry: (i) => reasons.push(i.reason) });
      await expect(client.describe('ab'.repeat(32))).rejects.toMatchObject({ type: 'network', attempts: 2 });
      expect(reasons).toEqual(['timeout']);
      expect(s.requests()).toBe(2);
    } finally {
      s.server.closeAllConnections();
      await new Promise((r) => s.server.close(r));
    }
  });
});

/**
 * The client against a live `tally serve` on loopback: typed verbs, session
 * diagnostics as results, other refusals thrown and never retried, safe
 * retries through a real proxy that loses a reply or answers 503, and
 * `follow` resuming across a server restart without a gap or a repeat.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RETRY, WireError, backoffDelay, createClient } from '../../src/client/index.js';
import { verifyBundle } from '../../src/codec/index.js';
import type { SessionEvent } from '../../src/session/index.js';
import { TOKENS, cleanup, startServer, tempDir, type ServerProc } from '../server/helpers.js';

let srv: ServerProc;
beforeAll(async () => {
  srv = await startServer({ db: 'memory:' });
});
afterAll(async () => {
  expect(await srv.stop()).toBe(0);
  cleanup();
});

/** A loopback HTTP proxy that can answer 503 or lose the reply of forwarded requests. */
async function proxy(upstream: string): Promise<{ url: string; server: Server; forwarded: () => number; fail503: (n: number) => void; loseReplies: (n: number) => void }> {
  let forwarded = 0;
  let unavailable = 0;
  let lose = 0;
  const up = new URL(upstream);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (unavailable > 0) {
        unavailable--;
        res.writeHead(503, { 'content-type': 'text/html', 'retry-after': '0' });
        res.end('<h1>503 from the load balancer</h1>');
        return;
      }
      forwarded++;
      const up2 = request({ host: up.hostname, port: up.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
        const body: Buffer[] = [];
        r.on('data', (c: Buffer) => body.push(c));
        r.on('end', () => {
          if (lose > 0) {
            lose--;
            req.socket.destroy(); // the server did the work; the reply never arrives
            return;
          }
          res.writeHead(r.statusCode ?? 502, r.headers);
          res.end(Buffer.concat(body));
        });
      });
      up2.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    forwarded: () => forwarded,
    fail503: (n) => (unavailable = n),
    loseReplies: (n) => (lose = n),
  };
}

async function dayStart(client: ReturnType<typeof createClient>, name: string) {
  const o = await client.open({ name, run: `${process.pid}-${Math.random()}` });
  if (!o.ok) throw new Error(o.message);
  const f = await client.frame({ sessionId: o.sessionId, ordinal: -1, time: 1_000 });
  if (!f.ok) throw new Error(f.message);
  return { sid: o.sessionId, f };
}

describe('createClient', () => {
  it('typed verbs: results as the engine gives them; diagnostics as { ok: false } without a retry', async () => {
    let retries = 0;
    const client = createClient({ url: srv.url + '/', token: TOKENS.runtime, onRetry: () => retries++ });
    const { sid, f } = await dayStart(client, 'typed');
    const t = await client.turn({ sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: new Uint8Array([1, 2, 3]) } });
    expect(t).toMatchObject({ ok: true, ordinal: -1, index: 2, duplicate: false });
    const same = await client.turn({ sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: new Uint8Array([1, 2, 3]) } });
    expect(same).toEqual({ ...t, duplicate: true });
    const conflict = await client.turn({ sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: 'other' } });
    expect(conflict).toEqual({ ok: false, diagnostic: 'turn-conflict', message: expect.stringContaining('slot -1') });
    const f0 = await client.frame({ sessionId: sid, ordinal: 0, time: 2_000, data: { price: '97000' } });
    if (!f0.ok) throw new Error(f0.message);
    expect(await client.turn({ sessionId: sid, ordinal: 0, parentHash: f0.entryHash, frameRoot: f0.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } })).toMatchObject({ ok: true, index: 4 });
    expect(await client.describe(sid)).toMatchObject({ ok: true, phase: 'awaiting-frame', size: 5, nextOrdinal: 1 });
    expect(await client.describe('ab'.repeat(32))).toMatchObject({ ok: false, diagnostic: 'wrong-session' });
    expect(await client.frame({ sessionId: sid, ordinal: 1, time: -1 })).toMatchObject({ ok: false, diagnostic: 'malformed-entry' });
    const ev = await client.events(sid, { after: 0, limit: 2 });
    expect(ev).toMatchObject({ ok: true, next: 2, more: true });
    const fin = await client.finalize(sid, { pnl: '0' });
    if (!fin.ok) throw new Error(fin.message);
    expect(await client.finalize(sid, { pnl: '0' })).toEqual({ ...fin, duplicate: true });
    expect(await client.receipt(sid)).toEqual(fin.receipt);
    const chunks: Uint8Array[] = [];
    for await (const c of client.bundle(sid)) chunks.push(c);
    expect(await verifyBundle(chunks, { pin: { receiptRoot: fin.receipt.receiptRoot, size: fin.receipt.size } })).toMatchObject({ ok: true });
    expect(await client.proof(sid, 2)).toMatchObject({ index: 2, size: 6, root: fin.receipt.receiptRoot });
    expect(retries).toBe(0);
  });

  it('other refusals are thrown as WireError and never retried (401, 403, 404 not-found, 413)', async () => {
    const p = await proxy(srv.url);
    try {
      let retries = 0;
      const bad = createClient({ url: p.url, token: 'tly_not_a_configured_token_000000', onRetry: () => retries++ });
      const e401 = await bad.describe('ab'.repeat(32)).catch((e: unknown) => e);
      expect(e401).toBeInstanceOf(WireError);
      expect(e401).toMatchObject({ type: 'unauthorized', status: 401, code: 'TALLY_WIRE_UNAUTHORIZED', attempts: 1 });
      expect(String((e401 as Error).message)).not.toContain('tly_not_a_configured');
      const agent = createClient({ url: p.url, token: TOKENS.alpha, onRetry: () => retries++ });
      await expect(agent.open({ name: 'nope' })).rejects.toMatchObject({ type: 'forbidden', status: 403 });
      const rt = createClient({ url: p.url, token: TOKENS.runtime, onRetry: () => retries++ });
      const { sid } = await dayStart(rt, 'refusals');
      await expect(rt.receipt(sid)).rejects.toMatchObject({ type: 'not-found', status: 404 });
      await expect(rt.open({ name: 'big', pad: 'x'.repeat(3 * 1024 * 1024) })).rejects.toMatchObject({ type: 'payload-too-large', status: 413 });
      expect(retries).toBe(0);
      const before = p.forwarded();
      await rt.describe('ab'.repeat(32));
      expect(p.forwarded()).toBe(before + 1);
    } finally {
      p.server.close();
    }
  });

  it('a lost reply is retried and the turn lands once (duplicate: true on the retry); 503s are retried with backoff', async () => {
    const p = await proxy(srv.url);
    try {
      const reasons: string[] = [];
      const client = createClient({ url: p.url, token: TOKENS.runtime, retry: { baseMs: 5, maxMs: 20 }, onRetry: (i) => reasons.push(i.reason) });
      const { sid, f } = await dayStart(client, 'lost-reply');
      p.loseReplies(2);
      const before = p.forwarded();
      const t = await client.turn({ sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: 'said once' } });
      expect(p.forwarded() - before).toBe(3); // the server saw the turn three times…
      expect(t).toMatchObject({ ok: true, index: 2, duplicate: true });
      expect(reasons.length).toBe(2);
      expect(reasons.every((r) => r.startsWith('network'))).toBe(true);
      const ev = await client.events(sid);
      expect(ev.ok && ev.events.filter((e) => e.entry.kind === 'turn').length).toBe(1); // …and recorded it once
      p.fail503(3);
      reasons.length = 0;
      expect(await client.describe(sid)).toMatchObject({ ok: true, size: 3 });
      expect(reasons).toEqual(['HTTP 503', 'HTTP 503', 'HTTP 503']);
      // Past the retry budget the last 5xx is reported.
      p.fail503(10);
      const tight = createClient({ url: p.url, token: TOKENS.runtime, retry: { retries: 2, baseMs: 1, maxMs: 2 } });
      await expect(tight.describe(sid)).rejects.toMatchObject({ type: 'unavailable', status: 503, attempts: 3 });
      p.fail503(0);
    } finally {
      p.server.close();
    }
  });

  it('gives up on an unreachable server after the retry budget with a network WireError', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    let n = 0;
    const client = createClient({ url: `http://127.0.0.1:${port}`, token: TOKENS.runtime, retry: { retries: 3, baseMs: 1, maxMs: 5 }, onRetry: () => n++ });
    await expect(client.describe('ab'.repeat(32))).rejects.toMatchObject({ type: 'network', attempts: 4 });
    expect(n).toBe(3);
  });

  it('refuses a bad url or token at construction', () => {
    expect(() => createClient({ url: 'not a url', token: 'x' })).toThrow(TypeError);
    expect(() => createClient({ url: 'ftp://127.0.0.1', token: 'x' })).toThrow(TypeError);
    expect(() => createClient({ url: 'http://127.0.0.1', token: 'has space' })).toThrow(TypeError);
    expect(() => createClient({ url: 'http://127.0.0.1', token: 'line\nbreak' })).toThrow(TypeError);
  });

  it('backoff: full jitter within [0, min(max, base·2^attempt)] (seed 0x5eed)', () => {
    fc.assert(
      fc.property(fc.nat(64), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 100_000 }), (attempt, r, baseMs, maxMs) => {
        const d = backoffDelay(attempt, { retries: 5, baseMs, maxMs }, () => r);
        expect(Number.isInteger(d)).toBe(true);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(Math.min(maxMs, baseMs * 2 ** attempt));
      }),
      { seed: 0x5eed, numRuns: 300 },
    );
    expect(backoffDelay(3, DEFAULT_RETRY, () => 0.999999)).toBe(800);
    expect(backoffDelay(40, DEFAULT_RETRY, () => 0.999999)).toBe(5_000);
  });
});

describe('follow', () => {
  it('yields every entry exactly once, in order, across a server restart on the same database, and ends at the seal', async () => {
    const dir = tempDir('follow');
    const db = join(dir, 'tally.db');
    let a = await startServer({ db, dir });
    const port = a.port;
    const url = a.url;
    const rt = createClient({ url, token: TOKENS.runtime, retry: { baseMs: 20, maxMs: 200 } });
    const o = await rt.open({ name: 'follow' });
    if (!o.ok) throw new Error(o.message);
    const sid = o.sessionId;
    const seen: SessionEvent[] = [];
    const reader = createClient({ url, token: TOKENS.auditor, retry: { baseMs: 20, maxMs: 200 } });
    const following = (async () => {
      for await (const ev of reader.follow(sid, { wait: 2_000 })) seen.push(ev);
    })();
    const step = async (ord: number) => {
      const f = await rt.frame({ sessionId: sid, ordinal: ord, time: 10 + ord });
      if (!f.ok) throw new Error(f.message);
      const t = await rt.turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: `t${ord}` } });
      if (!t.ok) throw new Error(t.message);
    };
    await step(-1);
    await step(0);
    while (seen.length < 5) await new Promise((r) => setTimeout(r, 20));
    expect(await a.stop()).toBe(0);
    // The reader is now disconnected; the runtime comes back on a new process.
    a = await startServer({ db, dir, port });
    await step(1);
    await step(2);
    const fin = await rt.finalize(sid);
    if (!fin.ok) throw new Error(fin.message);
    await following;
    expect(seen.map((e) => e.index)).toEqual(Array.from({ length: fin.receipt.size }, (_, i) => i));
    expect(seen[seen.length - 1]!.entry.kind).toBe('finalize');
    expect(seen[seen.length - 1]!.hash).toBe(fin.receipt.head);
    expect(await a.stop()).toBe(0);
  });

  it('throws a non-retryable refusal (forbidden) and can be aborted', async () => {
    const rt = createClient({ url: srv.url, token: TOKENS.runtime });
    const o = await rt.open({ name: 'follow-forbidden' });
    if (!o.ok) throw new Error(o.message);
    const agent = createClient({ url: srv.url, token: TOKENS.alpha });
    await expect(agent.follow(o.sessionId).next()).rejects.toMatchObject({ type: 'forbidden' });
    const ctrl = new AbortController();
    const it = createClient({ url: srv.url, token: TOKENS.auditor }).follow(o.sessionId, { wait: 5_000, signal: ctrl.signal });
    expect((await it.next()).value).toMatchObject({ index: 0 });
    const pending = it.next();
    setTimeout(() => ctrl.abort(new Error('stop')), 100);
    await expect(pending).rejects.toThrow('stop');
  });
});

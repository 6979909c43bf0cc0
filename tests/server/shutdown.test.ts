/**
 * Graceful shutdown: on SIGTERM/SIGINT the server stops accepting, lets every
 * in-flight request finish (appends included), answers late requests on open
 * connections with 503, and exits 0. Afterwards a turn is in the database if
 * and only if its request was answered 200.
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TOKENS, cleanup, get, ok, rpc, startServer, tempDir } from './helpers.js';

const RT = TOKENS.runtime;
afterAll(cleanup);

interface FrameOk { entryHash: string; frameRoot: string }

/**
 * A JSON-RPC call over node:http that also says when its bytes were handed to
 * the kernel (`sent`): on loopback they are then in the server's socket buffer.
 */
function rpcWithSent(url: string, method: string, params: unknown): { sent: Promise<void>; answered: Promise<number> } {
  let onSent!: () => void;
  const sent = new Promise<void>((r) => (onSent = r));
  const answered = new Promise<number>((resolve, reject) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
    const req = request(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${RT}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body, onSent);
  });
  return { sent, answered };
}

describe('graceful shutdown', () => {
  it('SIGTERM during a burst of appends: exits 0, every answered turn is durable and every unanswered one is absent', async () => {
    const dir = tempDir('shutdown');
    const db = join(dir, 'tally.db');
    // The grace (10 s) is shorter than the poll's wait (30 s): a poll that were not cut short by the
    // shutdown would be cut with its connection after the grace, never answered 200.
    const srv = await startServer({ db, dir, args: ['--rate', '100000', '--burst', '100000', '--grace', '10000'] });
    const N = 40;
    const slots: { sid: string; f: FrameOk }[] = [];
    for (let i = 0; i < N; i++) {
      const sid = ok<{ sessionId: string }>(await rpc(srv.url, RT, 'session/open', { spec: { name: `sd-${i}` } })).sessionId;
      slots.push({ sid, f: ok<FrameOk>(await rpc(srv.url, RT, 'session/frame', { sessionId: sid, ordinal: -1, time: 1 })) });
    }
    // A long poll that is certainly in flight when the signal arrives: its bytes were in the server's
    // socket buffer before a later request was even connected, and that later request was answered.
    const poll = rpcWithSent(srv.url, 'session/events', { sessionId: slots[0]!.sid, after: 1, wait: 30_000 });
    await poll.sent;
    expect((await get(srv.url, undefined, '/healthz')).status).toBe(200);
    const answers = slots.map(({ sid, f }) =>
      rpc(srv.url, RT, 'session/turn', { sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: `answer ${sid}` } }).then(
        (r) => r.status,
        () => 'connection-error' as const,
      ),
    );
    await Promise.race(answers);
    srv.proc.kill('SIGTERM');
    const statuses = await Promise.all(answers);
    const polled = await poll.answered;
    expect(await srv.exited).toBe(0);
    // The long poll was answered: cut short by the shutdown (after its 30 s wait it would have been cut at the 10 s grace).
    expect(polled).toBe(200);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    for (const s of statuses) expect([200, 503, 'connection-error']).toContain(s);
    const log = srv.stderr();
    expect(log).toMatch(/"event":"shutdown","signal":"SIGTERM","inFlight":[1-9]/);
    expect(log).toContain('"event":"stopped"');

    // Restart on the same database: answered ⇔ recorded.
    const again = await startServer({ db, dir });
    try {
      for (let i = 0; i < N; i++) {
        const d = ok<{ size: number; phase: string }>(await rpc(again.url, RT, 'session/describe', { sessionId: slots[i]!.sid }));
        if (statuses[i] === 200) expect(d).toMatchObject({ size: 3, phase: 'awaiting-frame' });
        else expect(d).toMatchObject({ size: 2, phase: 'pending' });
      }
    } finally {
      expect(await again.stop('SIGINT')).toBe(0);
    }
  });

  it('SIGINT on an idle server exits 0 without waiting for the grace', async () => {
    // A grace far beyond the test's timeout: an idle server that waited for it would fail the test by hanging.
    const srv = await startServer({ db: 'memory:', args: ['--grace', '3600000'] });
    expect(await srv.stop('SIGINT')).toBe(0);
    expect(srv.stderr()).toMatch(/"event":"shutdown","signal":"SIGINT","inFlight":0/);
    expect(srv.stderr()).toContain('"event":"stopped"');
  });
});

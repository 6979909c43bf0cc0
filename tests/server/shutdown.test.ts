/**
 * Graceful shutdown: on SIGTERM/SIGINT the server stops accepting, lets every
 * in-flight request finish (appends included), answers late requests on open
 * connections with 503, and exits 0. Afterwards a turn is in the database if
 * and only if its request was answered 200.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TOKENS, cleanup, ok, rpc, startServer, tempDir } from './helpers.js';

const RT = TOKENS.runtime;
afterAll(cleanup);

interface FrameOk { entryHash: string; frameRoot: string }

describe('graceful shutdown', () => {
  it('SIGTERM during a burst of appends: exits 0, every answered turn is durable and every unanswered one is absent', async () => {
    const dir = tempDir('shutdown');
    const db = join(dir, 'tally.db');
    const srv = await startServer({ db, dir, args: ['--rate', '100000', '--burst', '100000'] });
    const N = 40;
    const slots: { sid: string; f: FrameOk }[] = [];
    for (let i = 0; i < N; i++) {
      const sid = ok<{ sessionId: string }>(await rpc(srv.url, RT, 'session/open', { spec: { name: `sd-${i}` } })).sessionId;
      slots.push({ sid, f: ok<FrameOk>(await rpc(srv.url, RT, 'session/frame', { sessionId: sid, ordinal: -1, time: 1 })) });
    }
    // A long poll that is certainly in flight when the signal arrives.
    const poll = rpc(srv.url, RT, 'session/events', { sessionId: slots[0]!.sid, after: 1, wait: 20_000 });
    await new Promise((r) => setTimeout(r, 200));
    const t0 = performance.now();
    const answers = slots.map(({ sid, f }) =>
      rpc(srv.url, RT, 'session/turn', { sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: `answer ${sid}` } }).then(
        (r) => r.status,
        () => 'connection-error' as const,
      ),
    );
    await Promise.race(answers);
    srv.proc.kill('SIGTERM');
    const statuses = await Promise.all(answers);
    const polled = await poll;
    expect(await srv.exited).toBe(0);
    // The long poll was answered (cut short by the shutdown, not by its 20 s wait).
    expect(polled.status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(15_000);
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

  it('SIGINT on an idle server exits 0 at once', async () => {
    const srv = await startServer({ db: 'memory:' });
    const t0 = performance.now();
    expect(await srv.stop('SIGINT')).toBe(0);
    expect(performance.now() - t0).toBeLessThan(3_000);
  });
});

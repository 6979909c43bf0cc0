/**
 * The grader's GETs take each query parameter once, naming a position the
 * session has (issue #34): `?from=1&from=2` was read as its first value and
 * `from=13` on a 12-entry sealed day was a 200 with an empty body. Both are
 * now 400 `malformed-query`; `from` = size stays the follower's empty answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wireErrorRow } from '../../src/server/vocabulary.js';
import { TOKENS, get, liveSession, ok, rpc } from './helpers.js';
import { startInProcess, type InProcessServer } from './in-process.js';

let srv: InProcessServer;
let sid = '';
let size = 0;
beforeAll(async () => {
  srv = await startInProcess();
  const live = await liveSession(srv.url, 'query-params');
  for (let i = 0; i < 5; i++) await live.step();
  sid = live.sid;
  size = ok<{ receipt: { size: number } }>(await rpc(srv.url, TOKENS.runtime, 'session/finalize', { sessionId: sid })).receipt.size;
});
afterAll(() => srv.server.close(100));

const malformedQuery = { error: { type: 'malformed-query', code: wireErrorRow('malformed-query').code } };

describe('query parameters of the session GETs', () => {
  it('a repeated parameter is 400 malformed-query on every route, whichever values it repeats', async () => {
    const paths = [`bundle?from=1&from=2`, `bundle?from=1&from=1`, `bundle?from=0&limit=1&limit=2`, `consistency?from=2&from=3`, `proof?index=1&index=2`, `checkpoint?size=3&size=3`, `turn-receipt?index=1&size=4&size=5`, `events?after=0&after=1`];
    for (const p of paths) {
      const r = await get(srv.url, TOKENS.auditor, `/sessions/${sid}/${p}`);
      expect(r.status, p).toBe(400);
      expect(JSON.parse(r.text), p).toMatchObject(malformedQuery);
    }
  });

  it('a bundle from beyond the sealed day is 400 malformed-query; from = size is the empty answer; from = size-1 the last line', async () => {
    expect(size).toBe(12);
    for (const from of [size + 1, size + 100, 999_999_999]) {
      const r = await get(srv.url, TOKENS.auditor, `/sessions/${sid}/bundle?from=${from}`);
      expect(r.status, String(from)).toBe(400);
      expect(JSON.parse(r.text)).toMatchObject(malformedQuery);
      expect(r.text).toContain(`beyond the session's ${size} entries`);
    }
    const caughtUp = await get(srv.url, TOKENS.auditor, `/sessions/${sid}/bundle?from=${size}`);
    expect(caughtUp).toMatchObject({ status: 200, text: '' });
    const whole = (await get(srv.url, TOKENS.auditor, `/sessions/${sid}/bundle`)).text.split('\n');
    expect((await get(srv.url, TOKENS.auditor, `/sessions/${sid}/bundle?from=${size - 1}`)).text).toBe(`${whole[size - 1]}\n`);
  });

  it('a live day: from beyond its head is refused too (a follower never has more than the head)', async () => {
    const live = await liveSession(srv.url, 'query-params-live');
    await live.step();
    expect((await get(srv.url, TOKENS.auditor, `/sessions/${live.sid}/bundle?from=3`)).status).toBe(200);
    expect((await get(srv.url, TOKENS.auditor, `/sessions/${live.sid}/bundle?from=4`)).status).toBe(400);
  });
});

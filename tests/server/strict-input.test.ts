/**
 * Issue #11 on the wire: JSON from outside is read by the one strict parser,
 * and a lone surrogate is refused, never stored as U+FFFD — so "a\ud800",
 * "a\udfff" and "a\ufffd" can no longer be answered as the same turn.
 * In-process through the service (as MCP reaches it: arguments already
 * parsed) and over HTTP against the built `tally serve`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { OPERATOR } from '../../src/server/auth.js';
import { WireService } from '../../src/server/service.js';
import { TOKENS, cleanup, ok, post, rpc, startServer, type ServerProc } from './helpers.js';

const RT = TOKENS.runtime;

describe('lone surrogates in body.text (service, as MCP calls it)', () => {
  it('"a\\ud800" and "a\\udfff" are malformed-entry and write nothing; "a\\ufffd" is its own turn', async () => {
    const service = new WireService(createEngine());
    const open = await service.call(OPERATOR, 'session/open', { spec: { name: 'surrogates' } });
    if (!open.ok) throw new Error(open.failure.message);
    const sessionId = open.result['sessionId'] as string;
    const f = await service.call(OPERATOR, 'session/frame', { sessionId, ordinal: -1, time: 1 });
    if (!f.ok) throw new Error(f.failure.message);
    const slot = { sessionId, ordinal: -1, parentHash: f.result['entryHash'], frameRoot: f.result['frameRoot'] };
    for (const text of ['a\ud800', 'a\udfff', '\udc00a', 'a\ud800\ud800']) {
      const r = await service.call(OPERATOR, 'session/turn', { ...slot, body: { kind: 'authored', text } });
      expect(r).toMatchObject({ ok: false, failure: { type: 'malformed-entry' } });
      expect(r.ok || r.failure.message).toContain('lone-surrogate');
    }
    const d = await service.call(OPERATOR, 'session/describe', { sessionId });
    expect(d.ok && d.result['size']).toBe(2); // genesis and the frame: nothing else written
    const t = await service.call(OPERATOR, 'session/turn', { ...slot, body: { kind: 'authored', text: 'a\ufffd' } });
    expect(t).toMatchObject({ ok: true, result: { duplicate: false } });
    // A pair is one character, not a lone surrogate.
    expect(await service.call(OPERATOR, 'session/frame', { sessionId, ordinal: 0, time: 2, data: { s: '\u{1f600}' } })).toMatchObject({ ok: true });
  });
});

describe('strict JSON bodies over HTTP', () => {
  let srv: ServerProc;
  beforeAll(async () => {
    srv = await startServer();
  });
  afterAll(async () => {
    await srv.stop();
    cleanup();
  });

  it('a duplicate key, a BOM or an escaped lone surrogate is a parse error and writes nothing', async () => {
    const sid = ok<{ sessionId: string }>(await rpc(srv.url, RT, 'session/open', { spec: { name: 'strict-http', run: `${process.pid}` } })).sessionId;
    const f = ok<{ entryHash: string; frameRoot: string }>(await rpc(srv.url, RT, 'session/frame', { sessionId: sid, ordinal: -1, time: 1 }));
    const slot = { sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot };
    const body = (text: string) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/turn', params: { ...slot, body: { kind: 'authored', text } } });
    const cases: Array<[string, string | Uint8Array]> = [
      ['lone-surrogate', body('a\ud800')], // JSON.stringify writes the escape "\ud800"
      ['lone-surrogate', body('a\udfff')],
      ['duplicate-key', body('x').replace('"method":"session/turn"', '"method":"session/describe","method":"session/turn"')],
      ['bom', new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(body('x'))])],
    ];
    for (const [reason, raw] of cases) {
      const r = await post(srv.url, RT, raw);
      expect(r.status, reason).toBe(400);
      expect(r.body).toMatchObject({ error: { code: -32700, data: { type: 'parse-error' } } });
      expect(JSON.stringify(r.body)).toContain(reason);
    }
    const d = ok<{ size: number }>(await rpc(srv.url, RT, 'session/describe', { sessionId: sid }));
    expect(d.size).toBe(2);
    expect(ok(await rpc(srv.url, RT, 'session/turn', { ...slot, body: { kind: 'authored', text: 'a\ufffd' } }))).toMatchObject({ duplicate: false });
  });
});

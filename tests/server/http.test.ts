/**
 * `tally serve` as a user meets it: a child process on loopback, raw
 * JSON-RPC 2.0 over HTTP, every verb, every session diagnostic with its code
 * and status, malformed and oversize bodies, and the grader GETs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBundle } from '../../src/codec/index.js';
import { verifyInclusion } from '../../src/merkle/index.js';
import { fromHex, toBase64 } from '../../src/protocol/index.js';
import { WIRE_ERRORS, wireErrorRow, type WireErrorType } from '../../src/server/vocabulary.js';
import { TOKENS, cleanup, get, ok, post, rpc, startServer, type RpcBody, type ServerProc } from './helpers.js';

const RT = TOKENS.runtime;
const enc = new TextEncoder();
let srv: ServerProc;

beforeAll(async () => {
  srv = await startServer({ args: ['--max-body', '65536', '--max-depth', '16'] });
});
afterAll(async () => {
  expect(await srv.stop()).toBe(0);
  cleanup();
});

interface FrameOk { sessionId: string; ordinal: number; index: number; entryHash: string; frameRoot: string; duplicate: boolean }
interface TurnOk { sessionId: string; ordinal: number; index: number; entryHash: string; duplicate: boolean; ruling?: Record<string, unknown> }

async function open(name: string, extra: Record<string, unknown> = {}): Promise<string> {
  return ok<{ sessionId: string }>(await rpc(srv.url, RT, 'session/open', { spec: { name, run: `${process.pid}-${Math.random()}`, ...extra } })).sessionId;
}

async function frame(sessionId: string, ordinal: number, data?: unknown): Promise<FrameOk> {
  return ok<FrameOk>(await rpc(srv.url, RT, 'session/frame', { sessionId, ordinal, time: 1_000 + (ordinal + 1) * 60_000, ...(data === undefined ? {} : { data }) }));
}

function expectRefusal(r: { status: number; body: RpcBody }, type: WireErrorType): void {
  const row = wireErrorRow(type);
  expect({ status: r.status, code: r.body.error?.code, type: r.body.error?.data.type, retryable: r.body.error?.data.retryable }).toEqual({ status: row.status, code: row.code, type, retryable: row.retryable });
  expect(r.body.jsonrpc).toBe('2.0');
  expect(typeof r.body.error?.message).toBe('string');
}

describe('tally serve: the six verbs over JSON-RPC', () => {
  it('runs a day from open to seal; the bundle verifies pinned to the receipt; every GET agrees', async () => {
    const spec = { name: 'wire-day', day: '2026-11-30', run: String(process.pid) };
    const first = ok<{ sessionId: string; created: boolean }>(await rpc(srv.url, RT, 'session/open', { spec }));
    expect(first.created).toBe(true);
    const again = ok<{ sessionId: string; created: boolean }>(await rpc(srv.url, RT, 'session/open', { spec }));
    expect(again).toEqual({ sessionId: first.sessionId, created: false });
    const sid = first.sessionId;

    const f0 = await frame(sid, -1, { hello: 'world' });
    expect(f0).toMatchObject({ sessionId: sid, ordinal: -1, index: 1, duplicate: false });
    const t0 = ok<TurnOk>(await rpc(srv.url, RT, 'session/turn', { sessionId: sid, ordinal: -1, parentHash: f0.entryHash, frameRoot: f0.frameRoot, body: { kind: 'authored', text: 'ready' } }));
    expect(t0).toMatchObject({ ordinal: -1, index: 2, duplicate: false });
    const f1 = await frame(sid, 0);
    const t1 = ok<TurnOk>(await rpc(srv.url, RT, 'session/turn', { sessionId: sid, ordinal: 0, parentHash: f1.entryHash, frameRoot: f1.frameRoot, body: { kind: 'authored', bytes: toBase64(new Uint8Array([0, 255, 1, 254])) } }));
    expect(t1.index).toBe(4);
    const f2 = await frame(sid, 1);
    const t2 = ok<TurnOk>(await rpc(srv.url, RT, 'session/turn', { sessionId: sid, ordinal: 1, parentHash: f2.entryHash, frameRoot: f2.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } }));
    expect(t2.index).toBe(6);

    const all = ok<{ events: { index: number; entry: { kind: string } }[]; next: number; more: boolean; phase: string }>(await rpc(srv.url, RT, 'session/events', { sessionId: sid }));
    expect(all.events.map((e) => e.entry.kind)).toEqual(['genesis', 'frame', 'turn', 'frame', 'turn', 'frame', 'turn']);
    expect(all).toMatchObject({ next: 6, more: false, phase: 'awaiting-frame' });
    const page = ok<{ events: { index: number }[]; next: number; more: boolean }>(await rpc(srv.url, RT, 'session/events', { sessionId: sid, after: 2, limit: 2 }));
    expect(page.events.map((e) => e.index)).toEqual([3, 4]);
    expect(page).toMatchObject({ next: 4, more: true });

    const d = ok<{ phase: string; size: number; nextOrdinal: number; counts: Record<string, number> }>(await rpc(srv.url, RT, 'session/describe', { sessionId: sid }));
    expect(d).toMatchObject({ phase: 'awaiting-frame', size: 7, nextOrdinal: 2, counts: { frames: 3, turns: 3, authored: 2, standDowns: 1 } });

    const beforeSeal = await get(srv.url, RT, `/sessions/${sid}/receipt`);
    expect(beforeSeal.status).toBe(404);
    expect(JSON.parse(beforeSeal.text).error.type).toBe('not-found');

    const fin = ok<{ receipt: { sessionId: string; size: number; receiptRoot: string; head: string }; duplicate: boolean }>(await rpc(srv.url, RT, 'session/finalize', { sessionId: sid, artifacts: { note: 'done' } }));
    expect(fin.duplicate).toBe(false);
    expect(fin.receipt.size).toBe(8);
    const fin2 = ok<typeof fin>(await rpc(srv.url, RT, 'session/finalize', { sessionId: sid, artifacts: { note: 'done' } }));
    expect(fin2).toEqual({ ...fin, duplicate: true });

    const bundle = await get(srv.url, RT, `/sessions/${sid}/bundle`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toBe('application/jsonl');
    const v = await verifyBundle([enc.encode(bundle.text)], { pin: { sessionId: sid, size: fin.receipt.size, receiptRoot: fin.receipt.receiptRoot } });
    expect(v).toMatchObject({ ok: true, size: 8, sealed: true, head: fin.receipt.head });

    const receipt = await get(srv.url, RT, `/sessions/${sid}/receipt`);
    expect(JSON.parse(receipt.text)).toEqual(fin.receipt);
    const described = await get(srv.url, RT, `/sessions/${sid}/describe`);
    expect(JSON.parse(described.text)).toEqual(ok(await rpc(srv.url, RT, 'session/describe', { sessionId: sid })));
    const evs = await get(srv.url, RT, `/sessions/${sid}/events?after=5`);
    expect(JSON.parse(evs.text).events.map((e: { index: number }) => e.index)).toEqual([6, 7]);

    // Every entry's inclusion proof verifies against the receipt root.
    const lines = bundle.text.trimEnd().split('\n');
    for (let i = 0; i < lines.length; i++) {
      const p = JSON.parse((await get(srv.url, RT, `/sessions/${sid}/proof?index=${i}`)).text) as { leafHash: string; root: string; size: number; proof: string[] };
      expect(p.root).toBe(fin.receipt.receiptRoot);
      expect(verifyInclusion(fromHex(p.leafHash), i, p.size, p.proof.map(fromHex), fromHex(p.root))).toEqual({ ok: true });
    }
    // A proof in an earlier tree, and out-of-range indexes.
    const early = JSON.parse((await get(srv.url, RT, `/sessions/${sid}/proof?index=2&size=5`)).text) as { leafHash: string; root: string; proof: string[] };
    expect(verifyInclusion(fromHex(early.leafHash), 2, 5, early.proof.map(fromHex), fromHex(early.root))).toEqual({ ok: true });
    expect((await get(srv.url, RT, `/sessions/${sid}/proof?index=8`)).status).toBe(404);
    expect((await get(srv.url, RT, `/sessions/${sid}/proof?index=x`)).status).toBe(422);
    // This server has no engine key: the signed reads say so.
    for (const path of [`/sessions/${sid}/checkpoint`, `/sessions/${sid}/turn-receipt?index=1`, `/sessions/${sid}/consistency?from=2`, '/verifier-key']) {
      const r = await get(srv.url, RT, path);
      expect(r.status).toBe(404);
      expect(JSON.parse(r.text).error).toMatchObject({ type: 'not-found', message: expect.stringContaining('--key') });
    }
  });

  it('a retried identical turn returns the same result as the first (only `duplicate` says it was a retry); text and base64 of the same bytes are the same turn', async () => {
    const sid = await open('retry');
    const f = await frame(sid, -1);
    const params = { sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: 'the answer — ünïcødé' } };
    const first = ok<TurnOk>(await rpc(srv.url, RT, 'session/turn', params));
    const again = ok<TurnOk>(await rpc(srv.url, RT, 'session/turn', params));
    const asBytes = ok<TurnOk>(await rpc(srv.url, RT, 'session/turn', { ...params, body: { kind: 'authored', bytes: toBase64(enc.encode('the answer — ünïcødé')) } }));
    expect(first.duplicate).toBe(false);
    expect(again).toEqual({ ...first, duplicate: true });
    expect(asBytes).toEqual({ ...first, duplicate: true });
    // A retried frame is answered the same way.
    const fAgain = ok<FrameOk>(await rpc(srv.url, RT, 'session/frame', { sessionId: sid, ordinal: -1, time: 1_000 }));
    expect(fAgain).toEqual({ ...f, duplicate: true });
  });

  it('every session diagnostic comes back as error.data.type with its documented code and HTTP status', async () => {
    const sid = await open('diagnostics');
    const f = await frame(sid, -1);
    const slot = { sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot };
    const unknown = 'ab'.repeat(32);

    expectRefusal(await rpc(srv.url, RT, 'session/describe', { sessionId: unknown }), 'wrong-session');
    expectRefusal(await rpc(srv.url, RT, 'session/frame', { sessionId: unknown, ordinal: -1, time: 1 }), 'wrong-session');
    // A frame while one is pending.
    expectRefusal(await rpc(srv.url, RT, 'session/frame', { sessionId: sid, ordinal: 0, time: 70_000 }), 'not-pending');
    // A turn answering another frame than the one delivered.
    expectRefusal(await rpc(srv.url, RT, 'session/turn', { ...slot, frameRoot: 'cd'.repeat(32), body: { kind: 'authored', text: 'x' } }), 'stale-frame');
    // A turn that does not continue the chain.
    expectRefusal(await rpc(srv.url, RT, 'session/turn', { ...slot, parentHash: 'ef'.repeat(32), body: { kind: 'authored', text: 'x' } }), 'broken-chain');
    ok(await rpc(srv.url, RT, 'session/turn', { ...slot, body: { kind: 'authored', text: 'first' } }));
    // The filled slot with other bytes: 409 and nothing written.
    const conflict = await rpc(srv.url, RT, 'session/turn', { ...slot, body: { kind: 'authored', text: 'second' } });
    expectRefusal(conflict, 'turn-conflict');
    // No frame pending now.
    expectRefusal(await rpc(srv.url, RT, 'session/turn', { ...slot, ordinal: 0, body: { kind: 'authored', text: 'x' } }), 'not-pending');
    // A frame with the wrong ordinal.
    expectRefusal(await rpc(srv.url, RT, 'session/frame', { sessionId: sid, ordinal: 3, time: 70_000 }), 'broken-chain');
    // Malformed: base64 that is not the one spelling, text and bytes together, a negative time, a mismatched declared hash, a non-canonical float.
    const f0 = await frame(sid, 0);
    const slot0 = { sessionId: sid, ordinal: 0, parentHash: f0.entryHash, frameRoot: f0.frameRoot };
    for (const body of [
      { kind: 'authored', bytes: 'QQ=' },
      { kind: 'authored', bytes: 'QR==' },
      { kind: 'authored', text: 'a', bytes: 'YQ==' },
      { kind: 'authored' },
      { kind: 'authored', text: 'a', hash: '00'.repeat(32) },
      { kind: 'stand-down', failureClass: 'bored' },
      { kind: 'other' },
    ]) {
      const r = await rpc(srv.url, RT, 'session/turn', { ...slot0, body });
      expectRefusal(r, 'malformed-entry');
    }
    expectRefusal(await rpc(srv.url, RT, 'session/frame', { sessionId: sid, ordinal: 1, time: -5 }), 'malformed-entry');
    expectRefusal(await rpc(srv.url, RT, 'session/frame', { sessionId: sid, ordinal: 1, time: 5, data: { x: 1.5 } }), 'malformed-entry');
    expectRefusal(await rpc(srv.url, RT, 'session/turn', { ...slot0, body: { kind: 'authored', text: 'a' }, extra: 1 }), 'malformed-entry');
    const issues = (await rpc(srv.url, RT, 'session/turn', { ...slot0, ordinal: 'zero', body: { kind: 'authored', text: 'a' } })).body.error?.data['issues'];
    expect(issues).toEqual([{ path: 'ordinal', message: expect.any(String) }]);
    ok(await rpc(srv.url, RT, 'session/turn', { ...slot0, body: { kind: 'stand-down', failureClass: 'provider' } }));
    ok(await rpc(srv.url, RT, 'session/finalize', { sessionId: sid }));
    expectRefusal(await rpc(srv.url, RT, 'session/frame', { sessionId: sid, ordinal: 1, time: 200_000 }), 'sealed');
    expectRefusal(await rpc(srv.url, RT, 'session/finalize', { sessionId: sid, artifacts: { other: true } }), 'sealed');

    // Nothing the refusals carried was written.
    const ev = ok<{ events: { entry: { kind: string } }[] }>(await rpc(srv.url, RT, 'session/events', { sessionId: sid }));
    expect(ev.events.map((e) => e.entry.kind)).toEqual(['genesis', 'frame', 'turn', 'frame', 'turn', 'finalize']);
    const bundle = await get(srv.url, RT, `/sessions/${sid}/bundle`);
    expect(bundle.text).not.toContain(toBase64(enc.encode('second')));

    // The plain endpoints map the same types to the same statuses.
    const g = await get(srv.url, RT, `/sessions/${unknown}/describe`);
    expect(g.status).toBe(404);
    expect(JSON.parse(g.text).error).toMatchObject({ type: 'wrong-session', code: -32001 });
    expect((await get(srv.url, RT, `/sessions/not-hex/bundle`)).status).toBe(422);
    expect((await get(srv.url, RT, `/sessions/${unknown}/bundle`)).status).toBe(404);
  });

  it('refuses broken envelopes with the JSON-RPC codes: parse error, invalid request, unknown method, params not an object', async () => {
    const parse = await post(srv.url, RT, '{"jsonrpc":"2.0",');
    expect(parse.status).toBe(400);
    expect(parse.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700, data: { type: 'parse-error' } } });
    const badUtf8 = await post(srv.url, RT, new Uint8Array([0x7b, 0xff, 0x7d]));
    expect(badUtf8.body).toMatchObject({ error: { code: -32700 } });
    for (const doc of [{ method: 'session/describe', id: 1 }, { jsonrpc: '1.0', method: 'session/describe', id: 1 }, { jsonrpc: '2.0', id: 1 }, { jsonrpc: '2.0', method: 'session/describe', id: {} }, 7, 'x', null]) {
      const r = await post(srv.url, RT, JSON.stringify(doc));
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: { code: -32600, data: { type: 'invalid-request' } } });
    }
    const unknownMethod = await rpc(srv.url, RT, 'session/advance', {});
    expect(unknownMethod.status).toBe(404);
    expect(unknownMethod.body.error).toMatchObject({ code: -32601, data: { type: 'method-not-found' } });
    const arr = await rpc(srv.url, RT, 'session/describe', ['x']);
    expect(arr.status).toBe(400);
    expect(arr.body.error).toMatchObject({ code: -32602, data: { type: 'invalid-params' } });
    // The id is echoed on errors.
    const echoed = await post(srv.url, RT, JSON.stringify({ jsonrpc: '2.0', id: 'abc', method: 'session/nope' }));
    expect((echoed.body as RpcBody).id).toBe('abc');
  });

  it('limits: 413 for an oversize body, 400 too-deep for deep JSON, 415 without JSON content type, 405 and 404 for wrong routes', async () => {
    const big = await post(srv.url, RT, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/open', params: { spec: { name: 'big', pad: 'x'.repeat(70_000) } } }));
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ error: { code: -32012, data: { type: 'payload-too-large' } } });
    // The connection and the server are still fine.
    expect((await rpc(srv.url, RT, 'session/describe', { sessionId: 'ab'.repeat(32) })).status).toBe(404);
    const deep = await post(srv.url, RT, `{"jsonrpc":"2.0","id":1,"method":"session/open","params":{"spec":{"name":"d","x":${'['.repeat(20)}${']'.repeat(20)}}}}`);
    expect(deep.status).toBe(400);
    expect(deep.body).toMatchObject({ error: { code: -32016, data: { type: 'too-deep' } } });
    const shallowEnough = await post(srv.url, RT, `{"jsonrpc":"2.0","id":1,"method":"session/open","params":{"spec":{"name":"d","x":"${'['.repeat(40)}"}}}`);
    expect(shallowEnough.status).toBe(200);
    const text = await post(srv.url, RT, '{}', 'text/plain');
    expect(text.status).toBe(415);
    expect(text.body).toMatchObject({ error: { code: -32017, data: { type: 'unsupported-media-type' } } });
    const getRpc = await get(srv.url, RT, '/rpc');
    expect(getRpc.status).toBe(405);
    expect(getRpc.headers.get('allow')).toBe('POST');
    expect(JSON.parse((await get(srv.url, RT, '/nothing')).text).error).toMatchObject({ type: 'not-found', code: -32014 });
    expect((await fetch(`${srv.url}/sessions/${'ab'.repeat(32)}/bundle`, { method: 'DELETE', headers: { authorization: `Bearer ${RT}` } })).status).toBe(405);
  });

  it('batches run in order (a frame and its answer together); notifications get no response', async () => {
    const sid = await open('batch');
    const f = await frame(sid, -1);
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'session/turn', params: { sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: 'a' } } },
      { jsonrpc: '2.0', id: 2, method: 'session/frame', params: { sessionId: sid, ordinal: 0, time: 70_000 } },
      { jsonrpc: '2.0', method: 'session/describe', params: { sessionId: sid } },
      { jsonrpc: '2.0', id: 3, method: 'session/frame', params: { sessionId: sid, ordinal: 0, time: 70_001 } },
      { jsonrpc: '2.0', id: 4, method: 'nope' },
    ];
    const r = await post(srv.url, RT, JSON.stringify(batch));
    expect(r.status).toBe(200);
    const out = r.body as RpcBody[];
    expect(out.map((x) => x.id)).toEqual([1, 2, 3, 4]);
    expect(out[0]!.result).toMatchObject({ index: 2 });
    expect(out[1]!.result).toMatchObject({ index: 3, ordinal: 0 });
    expect(out[2]!.error?.data.type).toBe('turn-conflict');
    expect(out[3]!.error?.data.type).toBe('method-not-found');
    expect((await post(srv.url, RT, '[]')).status).toBe(400);
    expect((await post(srv.url, RT, JSON.stringify(Array.from({ length: 40 }, () => batch[2])))).status).toBe(400);
    // A notification writes but answers nothing.
    const note = await post(srv.url, RT, JSON.stringify({ jsonrpc: '2.0', method: 'session/turn', params: { sessionId: sid, ordinal: 0, parentHash: (out[1]!.result as { entryHash: string }).entryHash, frameRoot: (out[1]!.result as { frameRoot: string }).frameRoot, body: { kind: 'authored', text: 'b' } } }));
    expect(note.status).toBe(204);
    expect(ok<{ size: number }>(await rpc(srv.url, RT, 'session/describe', { sessionId: sid })).size).toBe(5);
  });

  it('the error table: codes unique, application codes outside the reserved range, statuses as documented', () => {
    const codes = WIRE_ERRORS.map((r) => r.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const r of WIRE_ERRORS) {
      const jsonRpcStandard = [-32700, -32600, -32601, -32602, -32603].includes(r.code);
      if (!jsonRpcStandard) expect(r.code <= -32001 && r.code >= -32099).toBe(true);
    }
    expect(wireErrorRow('turn-conflict').status).toBe(409);
    expect(wireErrorRow('unauthorized').status).toBe(401);
    expect(wireErrorRow('forbidden').status).toBe(403);
    expect(wireErrorRow('payload-too-large').status).toBe(413);
    expect(wireErrorRow('rate-limited').status).toBe(429);
  });

  it('logs JSON lines with method, session, diagnostic and latency, and never a token or authored bytes', async () => {
    const sid = await open('logs');
    const f = await frame(sid, -1);
    const secret = 'authored-secret-text-7d1e';
    ok(await rpc(srv.url, RT, 'session/turn', { sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: secret } }));
    await rpc(srv.url, RT, 'session/turn', { sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: toBase64(enc.encode(secret + '!')) } });
    await rpc(srv.url, 'tly_wrong_token_000000000000000000', 'session/describe', { sessionId: sid });
    // A call's log line is written after its answer is sent: wait for the last one (the 401), not for a while.
    await srv.untilStderr((e) => /"status":401,[^\n]*"diagnostic":"unauthorized"/.test(e.slice(e.indexOf(sid))));
    const log = srv.stderr();
    for (const t of Object.values(TOKENS)) expect(log).not.toContain(t);
    expect(log).not.toContain('tly_wrong_token');
    expect(log).not.toContain(secret);
    expect(log).not.toContain(toBase64(enc.encode(secret)));
    expect(log).not.toContain(toBase64(enc.encode(secret + '!')));
    const lines = log.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const turns = lines.filter((l) => l['method'] === 'session/turn' && l['session'] === sid);
    expect(turns.length).toBe(2);
    expect(turns[0]).toMatchObject({ status: 200, principal: 'runtime', duplicate: false });
    expect(typeof turns[0]!['ms']).toBe('number');
    expect(turns[1]).toMatchObject({ status: 409, diagnostic: 'turn-conflict' });
    expect(lines.some((l) => l['status'] === 401 && l['diagnostic'] === 'unauthorized')).toBe(true);
  });
});

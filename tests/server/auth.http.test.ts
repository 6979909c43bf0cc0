/**
 * Authentication and authorization on a live `tally serve`: nothing without a
 * token, each role limited to its verbs, agent tokens limited to their own
 * sessions and intents, per-token rate limits — and an intent rejection is a
 * recorded result, not an error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/server/auth.js';
import { privateKeyToAccount } from 'viem/accounts';
import { carry, frameTime, iso, openIntent, signed, spec as intentSpec, KEY_BETA, KEY_STRANGER } from '../rules/fixtures.js';
import { TOKENS, authDoc, cleanup, get, ok, post, rpc, startServer, type ServerProc } from './helpers.js';

/** Desk B's agent token: its agent is also called alpha, but its key is Anvil #2. */
const DESK_B_ALPHA = 'tly_test_desk_b_alpha_0123456789abcdef0123';
const STRANGER = privateKeyToAccount(KEY_STRANGER).address;
import { startInProcess } from './in-process.js';

const RT = TOKENS.runtime;
const dec = new TextDecoder();
let srv: ServerProc;
let agentSid: string; // spec.agents = {alpha, beta}
let betaSid: string; // spec.agents = {beta}
let plainSid: string; // no spec.agents
const run = `${process.pid}-${Date.now()}`;
let nonce = 0;
const freshNonce = () => `${run}-${nonce++}`;

interface FrameOk { entryHash: string; frameRoot: string; ordinal: number }

async function frameAt(sid: string, ordinal: number): Promise<FrameOk> {
  return ok<FrameOk>(await rpc(srv.url, RT, 'session/frame', { sessionId: sid, ordinal, time: frameTime(ordinal) }));
}

function turnParams(sid: string, f: FrameOk, body: Record<string, unknown>) {
  return { sessionId: sid, ordinal: f.ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body };
}

const intentText = async (over: Record<string, unknown>, ordinal: number, key?: `0x${string}`) =>
  dec.decode(carry(await signed(openIntent({ nonce: freshNonce(), ttl: iso(frameTime(ordinal) + 60_000), ...over }), key)));

beforeAll(async () => {
  srv = await startServer({ db: 'memory:', auth: authDoc([{ name: 'desk-b-alpha', role: 'agent', agents: ['alpha'], signer: STRANGER, sha256: hashToken(DESK_B_ALPHA) }]) });
  agentSid = ok<{ sessionId: string }>(await rpc(srv.url, RT, 'session/open', { spec: intentSpec(`agents-${run}`) })).sessionId;
  betaSid = ok<{ sessionId: string }>(await rpc(srv.url, RT, 'session/open', { spec: { ...intentSpec(`beta-${run}`), agents: { beta: intentSpec().agents.beta } } })).sessionId;
  plainSid = ok<{ sessionId: string }>(await rpc(srv.url, RT, 'session/open', { spec: { name: `plain-${run}` } })).sessionId;
});
afterAll(async () => {
  expect(await srv.stop()).toBe(0);
  cleanup();
});

describe('authentication', () => {
  it('nothing is readable or writable without a valid token (401 with WWW-Authenticate); /healthz tells only liveness', async () => {
    const wrongs = [undefined, '', 'Bearer', RT.slice(0, -1), RT + 'x', RT.slice(0, -1) + (RT.endsWith('9') ? '8' : '9'), hashToken(RT)];
    for (const t of wrongs) {
      const r = await rpc(srv.url, t, 'session/describe', { sessionId: plainSid });
      expect(r.status).toBe(401);
      expect(r.body.error).toMatchObject({ code: -32010, data: { type: 'unauthorized' } });
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    // A non-Bearer scheme and trailing junk are refused too (the scheme's case is not: RFC 7235, see hostile.test.ts).
    for (const header of [`Basic ${RT}`, `Bearer  ${RT} extra`, `bearer ${RT.toUpperCase()}`]) {
      const res = await fetch(`${srv.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: header }, body: '{}' });
      expect(res.status).toBe(401);
    }
    for (const path of ['describe', 'events', 'bundle', 'receipt', 'proof?index=0']) {
      const r = await get(srv.url, undefined, `/sessions/${plainSid}/${path}`);
      expect(r.status).toBe(401);
      expect(JSON.parse(r.text).error.type).toBe('unauthorized');
    }
    expect((await get(srv.url, undefined, '/nothing')).status).toBe(401);
    const health = await get(srv.url, undefined, '/healthz');
    expect({ status: health.status, body: JSON.parse(health.text) }).toEqual({ status: 200, body: { ok: true } });
  });
});

describe('authorization by role', () => {
  it('an auditor reads everything and writes nothing', async () => {
    const A = TOKENS.auditor;
    for (const [m, p] of [
      ['session/open', { spec: { name: 'audit-open' } }],
      ['session/frame', { sessionId: plainSid, ordinal: -1, time: 1 }],
      ['session/finalize', { sessionId: plainSid }],
      ['session/turn', { sessionId: plainSid, ordinal: -1, parentHash: 'ab'.repeat(32), frameRoot: 'ab'.repeat(32), body: { kind: 'authored', text: 'x' } }],
    ] as const) {
      const r = await rpc(srv.url, A, m, p);
      expect(r.status).toBe(403);
      expect(r.body.error).toMatchObject({ code: -32011, data: { type: 'forbidden' } });
    }
    for (const sid of [agentSid, betaSid, plainSid]) {
      ok(await rpc(srv.url, A, 'session/describe', { sessionId: sid }));
      ok(await rpc(srv.url, A, 'session/events', { sessionId: sid }));
      expect((await get(srv.url, A, `/sessions/${sid}/bundle`)).status).toBe(200);
    }
  });

  it("an agent token answers only in its agents' sessions, only with its own intents, and never opens, frames, stands down or seals", async () => {
    const ALPHA = TOKENS.alpha;
    for (const [m, p] of [
      ['session/open', { spec: { name: 'agent-open' } }],
      ['session/frame', { sessionId: agentSid, ordinal: -1, time: frameTime(-1) }],
      ['session/finalize', { sessionId: agentSid }],
    ] as const) {
      expect((await rpc(srv.url, ALPHA, m, p)).status).toBe(403);
    }
    const f = await frameAt(agentSid, -1);
    // Another agent's intent: 403, nothing written.
    const betaIntent = await intentText({ agent_id: 'beta' }, -1, KEY_BETA);
    const stolen = await rpc(srv.url, ALPHA, 'session/turn', turnParams(agentSid, f, { kind: 'authored', text: betaIntent }));
    expect(stolen.status).toBe(403);
    expect(stolen.body.error?.message).toContain('agent_id');
    // A stand-down is the runtime's.
    expect((await rpc(srv.url, ALPHA, 'session/turn', turnParams(agentSid, f, { kind: 'stand-down', failureClass: 'timeout' }))).status).toBe(403);
    // The runtime may not author in a session that names its agents.
    expect((await rpc(srv.url, RT, 'session/turn', turnParams(agentSid, f, { kind: 'authored', text: 'runtime voice' }))).status).toBe(403);
    expect(ok<{ size: number }>(await rpc(srv.url, RT, 'session/describe', { sessionId: agentSid })).size).toBe(2);
    // Its own intent: recorded and admitted.
    const mine = ok<{ ruling: { intent: Record<string, unknown> } }>(await rpc(srv.url, ALPHA, 'session/turn', turnParams(agentSid, f, { kind: 'authored', text: await intentText({}, -1) })));
    expect(mine.ruling.intent).toMatchObject({ admitted: true, agent_id: 'alpha' });
    // Beta may write its own intent in the same session.
    const f0 = await frameAt(agentSid, 0);
    const betaOwn = ok<{ ruling: { intent: Record<string, unknown> } }>(await rpc(srv.url, TOKENS.beta, 'session/turn', turnParams(agentSid, f0, { kind: 'authored', text: await intentText({ agent_id: 'beta' }, 0, KEY_BETA) })));
    expect(betaOwn.ruling.intent).toMatchObject({ admitted: true, agent_id: 'beta' });
    // Reads: own sessions only; an unknown session looks the same as someone else's.
    ok(await rpc(srv.url, ALPHA, 'session/describe', { sessionId: agentSid }));
    ok(await rpc(srv.url, ALPHA, 'session/events', { sessionId: agentSid }));
    for (const sid of [betaSid, plainSid, 'ab'.repeat(32)]) {
      const r = await rpc(srv.url, ALPHA, 'session/describe', { sessionId: sid });
      expect(r.status).toBe(403);
      expect((await rpc(srv.url, ALPHA, 'session/events', { sessionId: sid })).status).toBe(403);
      for (const path of ['describe', 'events', 'bundle', 'receipt', 'proof?index=0']) expect((await get(srv.url, ALPHA, `/sessions/${sid}/${path}`)).status).toBe(403);
    }
    const forbiddenTurn = await rpc(srv.url, ALPHA, 'session/turn', { sessionId: betaSid, ordinal: -1, parentHash: 'ab'.repeat(32), frameRoot: 'ab'.repeat(32), body: { kind: 'authored', text: 'hi' } });
    expect(forbiddenTurn.status).toBe(403);
  });

  it('an intent that fails validation is recorded with its ruling and returned as a result (HTTP 200), not as an error', async () => {
    const f = await frameAt(agentSid, 1);
    const expired = await intentText({ ttl: iso(frameTime(1) - 1) }, 1);
    const r = await rpc(srv.url, TOKENS.alpha, 'session/turn', turnParams(agentSid, f, { kind: 'authored', text: expired }));
    expect(r.status).toBe(200);
    expect(ok<{ ruling: { intent: Record<string, unknown> } }>(r).ruling.intent).toMatchObject({ admitted: false, stage: 'ttl', code: 'expired' });
    // Its retry returns the same ruling.
    const again = ok<{ ruling: unknown; duplicate: boolean }>(await rpc(srv.url, TOKENS.alpha, 'session/turn', turnParams(agentSid, f, { kind: 'authored', text: expired })));
    expect(again).toEqual({ ...ok(r), duplicate: true });
  });

  it('the runtime authors turns in sessions without agents, and stands down anywhere', async () => {
    const f = await frameAt(plainSid, -1);
    ok(await rpc(srv.url, RT, 'session/turn', turnParams(plainSid, f, { kind: 'authored', text: 'plain answer' })));
    const g = await frameAt(betaSid, -1);
    ok(await rpc(srv.url, RT, 'session/turn', turnParams(betaSid, g, { kind: 'stand-down', failureClass: 'provider' })));
  });
});

describe('agent tokens are bound to a key, not a name', () => {
  it("desk B's token for its own alpha may not write desk A's alpha turns (403, nothing written), and may write its own desk's", async () => {
    const deskA = ok<{ sessionId: string }>(await rpc(srv.url, RT, 'session/open', { spec: intentSpec(`desk-a-${run}`) })).sessionId; // alpha = Anvil #0
    const deskB = ok<{ sessionId: string }>(await rpc(srv.url, RT, 'session/open', { spec: { ...intentSpec(`desk-b-${run}`), agents: { alpha: STRANGER } } })).sessionId;
    const fa = await frameAt(deskA, -1);
    // The OPEN turn of desk A, written with desk B's alpha token: plain text and a stranger-signed intent alike.
    for (const text of ['plan: nothing', await intentText({}, -1, KEY_STRANGER)]) {
      const r = await rpc(srv.url, DESK_B_ALPHA, 'session/turn', turnParams(deskA, fa, { kind: 'authored', text }));
      expect(r.status).toBe(403);
      expect(r.body.error).toMatchObject({ code: -32011, data: { type: 'forbidden' } });
    }
    for (const path of ['describe', 'events', 'bundle']) expect((await get(srv.url, DESK_B_ALPHA, `/sessions/${deskA}/${path}`)).status).toBe(403);
    expect((await rpc(srv.url, DESK_B_ALPHA, 'session/describe', { sessionId: deskA })).status).toBe(403);
    expect(ok<{ size: number }>(await rpc(srv.url, RT, 'session/describe', { sessionId: deskA })).size).toBe(2);
    // Desk A's real alpha is not turn-conflicted: its OPEN turn is recorded.
    const mine = ok<{ ruling: { intent: Record<string, unknown> } }>(await rpc(srv.url, TOKENS.alpha, 'session/turn', turnParams(deskA, fa, { kind: 'authored', text: await intentText({}, -1) })));
    expect(mine.ruling.intent).toMatchObject({ admitted: true, agent_id: 'alpha' });
    // And the other way round: desk A's alpha token is a stranger in desk B; desk B's own token is at home there.
    const fb = await frameAt(deskB, -1);
    expect((await rpc(srv.url, TOKENS.alpha, 'session/turn', turnParams(deskB, fb, { kind: 'authored', text: await intentText({}, -1) }))).status).toBe(403);
    const theirs = ok<{ ruling: { intent: Record<string, unknown> } }>(await rpc(srv.url, DESK_B_ALPHA, 'session/turn', turnParams(deskB, fb, { kind: 'authored', text: await intentText({}, -1, KEY_STRANGER) })));
    expect(theirs.ruling.intent).toMatchObject({ admitted: true, agent_id: 'alpha', signer: STRANGER });
  });
});

describe('rate limiting', () => {
  // In-process, on an injected clock: the bucket refills only when the test moves time, so a slow
  // machine cannot refill it between two requests, and the refill needs no sleep.
  it('a token over its bucket gets 429 with Retry-After and data.retryAfterMs; other tokens are unaffected; a batch costs one per call', async () => {
    let now = 0;
    const limited = await startInProcess({
      clock: () => now,
      limits: { rate: { perSecond: 1, burst: 3 } },
      auth: authDoc([{ name: 'slow', role: 'auditor', sha256: hashToken('tly_slow_token_0123456789abcdef'), rate: { perSecond: 1, burst: 1 } }]),
    });
    try {
      const sid = ok<{ sessionId: string }>(await rpc(limited.url, RT, 'session/open', { spec: { name: 'rl' } })).sessionId;
      ok(await rpc(limited.url, RT, 'session/describe', { sessionId: sid }));
      ok(await rpc(limited.url, RT, 'session/describe', { sessionId: sid }));
      const r = await rpc(limited.url, RT, 'session/describe', { sessionId: sid });
      expect(r.status).toBe(429);
      expect(r.body.error).toMatchObject({ code: -32013, data: { type: 'rate-limited', retryAfterMs: 1000 } });
      expect(r.headers.get('retry-after')).toBe('1');
      expect((await get(limited.url, RT, `/sessions/${sid}/describe`)).status).toBe(429);
      // Another token has its own bucket; a per-token override applies.
      ok(await rpc(limited.url, TOKENS.auditor, 'session/describe', { sessionId: sid }));
      ok(await rpc(limited.url, 'tly_slow_token_0123456789abcdef', 'session/describe', { sessionId: sid }));
      expect((await rpc(limited.url, 'tly_slow_token_0123456789abcdef', 'session/describe', { sessionId: sid })).status).toBe(429);
      // Three calls in one batch need three tokens: the auditor has 2 left.
      const call = { jsonrpc: '2.0', id: 1, method: 'session/describe', params: { sessionId: sid } };
      expect((await post(limited.url, TOKENS.auditor, JSON.stringify([call, call, call]))).status).toBe(429);
      // The bucket refills with time, exactly at the wait it named: not 1 ms before.
      now += 999;
      expect((await rpc(limited.url, RT, 'session/describe', { sessionId: sid })).status).toBe(429);
      now += 1;
      ok(await rpc(limited.url, RT, 'session/describe', { sessionId: sid }));
      expect((await rpc(limited.url, RT, 'session/describe', { sessionId: sid })).status).toBe(429);
    } finally {
      await limited.server.close(100);
    }
  });
});

/**
 * Telemetry never carries a secret: tokens (valid, invalid, in the header,
 * the path, the query or the tracestate of a forged but well-formed
 * traceparent, whose trace is continued), the engine's private key,
 * authored bytes (raw or base64) and error messages are sent through a real
 * server, engine, notary and judge wrapper under a registered SDK, and then
 * searched for in every exported span and metric. The attribute gate itself
 * is attacked with hostile values.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { demoEngineKey } from '../../src/demo/index.js';
import { toBase64 } from '../../src/protocol/index.js';
import { createNotary } from '../../src/receipt/index.js';
import { Authenticator, generateToken, hashToken } from '../../src/server/auth.js';
import { createWireServer } from '../../src/server/http.js';
import { createLogger } from '../../src/server/log.js';
import { ATTR, allowed, safeAttributes, traceJudge } from '../../src/telemetry/index.js';
import { installSdk } from './helpers.js';

/** The demo engine key's private seed (RFC 8032 test 1), as hex: 64 hex digits, shaped like a session id. */
const KEY_SEED_HEX = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const MARK = 'SECRET-c0ffee-authored';
/**
 * A forged but well-formed W3C traceparent (version 00, 32-hex trace id,
 * 16-hex parent id, sampled): the server span continues it (the ids are the
 * caller's, not secrets), while its `tracestate` carries the caller's token.
 */
const FORGED_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const FORGED_PARENT = '00f067aa0ba902b7';
const FORGED_TRACEPARENT = `00-${FORGED_TRACE}-${FORGED_PARENT}-01`;

describe('no secret reaches telemetry', async () => {
  const sdk = installSdk();
  afterAll(() => sdk.shutdown());
  const token = generateToken();
  const stranger = generateToken();
  const engine = createEngine();
  const notary = createNotary({ key: demoEngineKey() });
  const server = createWireServer({
    engine,
    notary,
    auth: new Authenticator({ tokens: [{ name: 'ops', role: 'runtime', sha256: hashToken(token) }] }),
    logger: createLogger({ level: 'silent' }),
  });
  const { url } = await server.listen(0);
  afterAll(() => server.close(100));
  const call = (method: string, params: unknown, headers: Record<string, string> = {}, bearer = token) =>
    fetch(`${url}/rpc`, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) }).then((r) => r.json() as Promise<{ result?: Record<string, unknown> }>);
  const authored = new TextEncoder().encode(`${MARK} ${token}`);

  const open = await call('session/open', { spec: { name: `desk ${MARK}`, note: token } });
  const sid = open.result!['sessionId'] as string;
  const f = (await call('session/frame', { sessionId: sid, ordinal: -1, time: 1_000, data: { secret: MARK } })).result!;
  await call('session/turn', { sessionId: sid, ordinal: -1, parentHash: f['entryHash'], frameRoot: f['frameRoot'], body: { kind: 'authored', bytes: toBase64(authored) } }, { traceparent: FORGED_TRACEPARENT, tracestate: `k=${token}` });
  await call('session/describe', { sessionId: KEY_SEED_HEX });
  await call('session/describe', { sessionId: token });
  await call('session/describe', { sessionId: sid }, {}, stranger);
  await fetch(`${url}/sessions/${KEY_SEED_HEX}/describe?token=${token}`, { headers: { authorization: `Bearer ${token}` } });
  await fetch(`${url}/sessions/${sid}/checkpoint`, { headers: { authorization: `Bearer ${token}` } });
  await call('session/finalize', { sessionId: sid, artifacts: { note: MARK } });
  await fetch(`${url}/sessions/${sid}/receipt`, { headers: { authorization: `Bearer ${token}` } });
  // A judge that fails with a secret in its message, its failure word and its exception.
  await traceJudge('judge-model-1', async () => ({ ok: false as const, failure: `leak ${MARK}`, message: MARK }));
  await traceJudge('judge-model-1', async () => Promise.reject(new Error(`${MARK} ${token}`))).catch(() => undefined);
  await traceJudge(`model ${token}`, async () => ({ ok: true as const }));

  it('exported something for every call (the scan below is not vacuous)', () => {
    const names = sdk.spans().map((s) => s.name);
    for (const n of ['tally.open', 'tally.frame', 'tally.turn', 'tally.describe', 'tally.finalize', 'tally.checkpoint.sign', 'tally.referee.judge', 'POST /rpc', 'GET /sessions/{id}/describe']) expect(names).toContain(n);
  });

  it('finds no token, key, authored byte or error message in any span or metric', async () => {
    const spans = JSON.stringify(
      // Trace states serialized as the OTLP exporter sends them (`traceState`), parents included.
      sdk.spans().map((s) => ({ name: s.name, attributes: s.attributes, status: s.status, events: s.events, links: s.links, resource: s.resource.attributes, trace: s.spanContext(), state: s.spanContext().traceState?.serialize(), parent: s.parentSpanContext, parentState: s.parentSpanContext?.traceState?.serialize() })),
    );
    const everything = spans + (await sdk.allMetricsJson());
    const secrets = [token, stranger, hashToken(token), KEY_SEED_HEX, toBase64(Buffer.from(KEY_SEED_HEX, 'hex')), MARK, toBase64(authored), token.slice(0, 16)];
    for (const s of secrets) expect(everything, s).not.toContain(s);
  });

  it('continues the well-formed forged traceparent, so the tracestate scan above is not vacuous', () => {
    expect(FORGED_TRACEPARENT).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const http = sdk.spans().filter((s) => s.spanContext().traceId === FORGED_TRACE);
    expect(http.map((s) => s.name)).toContain('POST /rpc');
    const server = http.find((s) => s.name === 'POST /rpc')!;
    expect(server.parentSpanContext?.spanId).toBe(FORGED_PARENT);
    expect(http.map((s) => s.name)).toContain('tally.turn');
    for (const s of http) expect(s.spanContext().traceState?.serialize() ?? '', s.name).toBe('');
  });

  it('keeps the identifiers that are not secret', () => {
    const turn = sdk.spans().find((s) => s.name === 'tally.turn')!;
    expect(turn.attributes[ATTR.session]).toBe(sid);
    const judge = sdk.spans().filter((s) => s.name === 'tally.referee.judge');
    expect(judge.map((s) => s.attributes[ATTR.model])).toEqual(['judge-model-1', 'judge-model-1', 'other']);
    expect(judge.map((s) => s.attributes[ATTR.failure])).toEqual(['error', 'error', undefined]);
  });
});

describe('the attribute gate', () => {
  const hostile: unknown[] = [
    undefined, null, NaN, Infinity, -2, 1.5, 2 ** 60, 10n, '', ' ', 'a'.repeat(65), 'has space', 'line\nbreak', 'ünïcødé', '"quoted"', 'AB'.repeat(32), 'ab'.repeat(31),
    generateToken(), generateToken().toLowerCase(), KEY_SEED_HEX.toUpperCase(), `${KEY_SEED_HEX}0`,
    {}, [], ['admitted'], { toString: () => 'admitted' }, new Proxy({}, { get: () => 'admitted' }), Symbol('x'), () => 'admitted', new String('admitted'), new Uint8Array(32),
  ];

  it.each(Object.values(ATTR))('drops every hostile value for %s', (key) => {
    hostile.forEach((v, i) => expect(allowed(key, v), `${key} ← hostile[${i}]`).toBe(false));
  });

  it('drops unknown keys whatever their value, and keeps well-shaped values', () => {
    expect(safeAttributes({ 'tally.token': 'abc', authorization: 'Bearer x', [ATTR.session]: 'ab'.repeat(32), [ATTR.ordinal]: -1, [ATTR.duplicate]: true, [ATTR.ruling]: 'replayed_nonce', [ATTR.route]: '/sessions/{id}/proof' })).toEqual({
      [ATTR.session]: 'ab'.repeat(32),
      [ATTR.ordinal]: -1,
      [ATTR.duplicate]: true,
      [ATTR.ruling]: 'replayed_nonce',
      [ATTR.route]: '/sessions/{id}/proof',
    });
  });
});

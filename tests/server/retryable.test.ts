/**
 * `retryable` says whether the same request may succeed later. A store that
 * is corrupt (`TALLY_STORE_CORRUPT`) answers the same however often it is
 * asked, so its `internal` refusal says `retryable: false`; a transient I/O
 * failure (`TALLY_STORE_IO`) stays `unavailable`, retryable; any other
 * `internal` keeps the table's `retryable: true`. Checked on the wire (both
 * envelopes), through an intent seam, over MCP, and on the client, which
 * does not retry an answer that says a retry cannot help.
 */
import { Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WireError, createClient } from '../../src/client/index.js';
import { createEngine } from '../../src/engine.js';
import { TallyError } from '../../src/protocol/index.js';
import { Authenticator, OPERATOR, parseAuthConfig } from '../../src/server/auth.js';
import { failureOfException } from '../../src/server/failures.js';
import { createWireServer, type WireServer } from '../../src/server/http.js';
import { createLogger } from '../../src/server/log.js';
import { createMcpServer, localBackend } from '../../src/server/mcp/index.js';
import { WireService } from '../../src/server/service.js';
import { httpErrorBody, isRetryable, rpcErrorObject, WIRE_ERRORS } from '../../src/server/vocabulary.js';
import { MemoryStore } from '../../src/store/index.js';
import { TOKENS, authDoc, get, ok, rpc } from './helpers.js';

/** A memory store whose head reads fail, once armed, with the error `fault()` makes (fault injection). */
class FaultyStore extends MemoryStore {
  fault: (() => unknown) | undefined;
  override async loadHead(sessionId: string): ReturnType<MemoryStore['loadHead']> {
    if (this.fault) throw this.fault();
    return super.loadHead(sessionId);
  }
}

const RT = TOKENS.runtime;
const CASES = [
  { code: 'TALLY_STORE_CORRUPT', status: 500, type: 'internal', retryable: false },
  { code: 'TALLY_STORE_IO', status: 503, type: 'unavailable', retryable: true },
  { code: 'TALLY_STORE_MIGRATION', status: 500, type: 'internal', retryable: true },
] as const;

describe('retryable on the wire', () => {
  const store = new FaultyStore();
  let server: WireServer;
  let url: string;
  let sid: string;
  beforeAll(async () => {
    const cfg = parseAuthConfig(authDoc());
    if (!cfg.ok) throw new Error(cfg.problem);
    const quiet = new Writable({ write: (_c, _e, done) => done() });
    server = createWireServer({ engine: createEngine({ store }), auth: new Authenticator(cfg.config), logger: createLogger({ destination: quiet }) });
    url = (await server.listen(0, '127.0.0.1')).url;
    sid = ok<{ sessionId: string }>(await rpc(url, RT, 'session/open', { spec: { name: 'retryable' } })).sessionId;
  });
  afterAll(() => server.close(100));

  for (const c of CASES) {
    it(`${c.code}: ${c.status} ${c.type}, retryable ${c.retryable}, in both envelopes`, async () => {
      store.fault = () => new TallyError(c.code, `injected ${c.code}`);
      try {
        const r = await rpc(url, RT, 'session/describe', { sessionId: sid });
        expect({ status: r.status, type: r.body.error?.data.type, retryable: r.body.error?.data.retryable }).toEqual({ status: c.status, type: c.type, retryable: c.retryable });
        const g = await get(url, RT, `/sessions/${sid}/describe`);
        const body = JSON.parse(g.text) as { error: { type: string; retryable: boolean } };
        expect({ status: g.status, type: body.error.type, retryable: body.error.retryable }).toEqual({ status: c.status, type: c.type, retryable: c.retryable });
      } finally {
        store.fault = undefined;
      }
    });
  }

  it('the client retries a transient failure but not a corrupt store', async () => {
    const retries: string[] = [];
    const client = createClient({ url, token: RT, retry: { retries: 3, baseMs: 1, maxMs: 2 }, onRetry: (i) => retries.push(i.reason) });
    try {
      store.fault = () => new TallyError('TALLY_STORE_CORRUPT', 'injected');
      await expect(client.describe(sid)).rejects.toMatchObject({ type: 'internal', status: 500 });
      expect(retries).toEqual([]);
      const raw = await client.call('session/describe', { sessionId: sid });
      expect(raw).toMatchObject({ ok: false, status: 500, failure: { type: 'internal', retryable: false } });
      expect(retries).toEqual([]);
      store.fault = () => new TallyError('TALLY_STORE_IO', 'injected');
      await expect(client.describe(sid)).rejects.toBeInstanceOf(WireError);
      expect(retries).toEqual(['HTTP 503', 'HTTP 503', 'HTTP 503']);
      retries.length = 0;
      store.fault = () => new TallyError('TALLY_STORE_MIGRATION', 'injected');
      await expect(client.describe(sid)).rejects.toMatchObject({ type: 'internal', status: 500 });
      expect(retries).toEqual(['HTTP 500', 'HTTP 500', 'HTTP 500']);
    } finally {
      store.fault = undefined;
    }
  });
});

describe('retryable over MCP', () => {
  it('a corrupt store is not retryable and its advice says so; a transient one is retryable', async () => {
    const store = new FaultyStore();
    const service = new WireService(createEngine({ store }));
    const open = await service.call(OPERATOR, 'session/open', { spec: { name: 'mcp-retryable' } });
    if (!open.ok) throw new Error(open.failure.message);
    const [a, b] = InMemoryTransport.createLinkedPair();
    const mcp = createMcpServer(localBackend(service));
    await mcp.connect(a);
    const client = new Client({ name: 'retryable-test', version: '1.0.0' });
    await client.connect(b);
    try {
      const describeError = async (): Promise<Record<string, unknown>> => {
        const r = (await client.callTool({ name: 'session_describe', arguments: { sessionId: open.result['sessionId'] } })) as { isError?: boolean; structuredContent?: { error: Record<string, unknown> } };
        expect(r.isError).toBe(true);
        return r.structuredContent!.error;
      };
      store.fault = () => new TallyError('TALLY_STORE_CORRUPT', 'injected');
      expect(await describeError()).toMatchObject({ type: 'internal', retryable: false, advice: expect.stringMatching(/will not help/) });
      store.fault = () => new TallyError('TALLY_STORE_MIGRATION', 'injected');
      expect(await describeError()).toMatchObject({ type: 'internal', retryable: true, advice: expect.stringMatching(/call again/) });
      store.fault = () => new TallyError('TALLY_STORE_IO', 'injected');
      expect(await describeError()).toMatchObject({ type: 'unavailable', retryable: true });
    } finally {
      await client.close();
    }
  });
});

describe('failureOfException', () => {
  it('marks not retryable only what a retry cannot change (a corrupt store, a signing refusal, no signing log), also beneath an intent seam', () => {
    const corrupt = new TallyError('TALLY_STORE_CORRUPT', 'x');
    expect(failureOfException(corrupt)).toEqual({ type: 'internal', message: 'store error (TALLY_STORE_CORRUPT)', retryable: false });
    expect(isRetryable(failureOfException(new TallyError('TALLY_INTENT_SEAM_FAILED', 'lookup', { cause: corrupt })))).toBe(false);
    expect(failureOfException(new TallyError('TALLY_SIGN_EQUIVOCATION', 'x'))).toEqual({
      type: 'internal',
      message: 'the engine refuses to sign (TALLY_SIGN_EQUIVOCATION): its store no longer holds the history it signed',
      retryable: false,
    });
    expect(failureOfException(new TallyError('TALLY_SIGN_INCONSISTENT', 'x'))).toMatchObject({ type: 'internal', retryable: false });
    expect(failureOfException(new TallyError('TALLY_SIGN_WITNESS_CONFLICT', 'x'))).toEqual({
      type: 'internal',
      message: 'the engine refuses to sign (TALLY_SIGN_WITNESS_CONFLICT): a witness cosigned a history its store no longer holds',
      retryable: false,
    });
    expect(failureOfException(new TallyError('TALLY_SIGN_TIMELINE_CHANGED', 'x'))).toEqual({
      type: 'internal',
      message: 'the engine refuses to sign (TALLY_SIGN_TIMELINE_CHANGED): its store is on another database or timeline than the history it signed; an operator must acknowledge it',
      retryable: false,
    });
    expect(failureOfException(new TallyError('TALLY_SIGN_NO_LOG', 'x'))).toEqual({ type: 'internal', message: 'the engine cannot sign (TALLY_SIGN_NO_LOG): its store keeps no signing log', retryable: false });
    for (const code of ['TALLY_STORE_IO', 'TALLY_STORE_BUSY', 'TALLY_STORE_CLOSED', 'TALLY_SIGN_CONTENDED', 'TALLY_STORE_MIGRATION', 'TALLY_SIGN_MISUSE']) {
      const f = failureOfException(new TallyError(code, 'x'));
      expect(f, code).not.toHaveProperty('retryable');
      expect(isRetryable(f), code).toBe(true);
    }
    expect(isRetryable(failureOfException(new Error('bug')))).toBe(true);
  });

  it('a failure without its own flag answers its row in both envelopes', () => {
    // Pinned literally (the loop below reads the same table the envelopes read).
    expect(rpcErrorObject({ type: 'internal', message: 'm' }).data['retryable']).toBe(true);
    expect(rpcErrorObject({ type: 'unavailable', message: 'm' }).data['retryable']).toBe(true);
    expect(httpErrorBody({ type: 'rate-limited', message: 'm' }).error['retryable']).toBe(false);
    for (const row of WIRE_ERRORS) {
      expect(rpcErrorObject({ type: row.type, message: 'm' }).data['retryable']).toBe(row.retryable);
      expect(httpErrorBody({ type: row.type, message: 'm' }).error['retryable']).toBe(row.retryable);
    }
  });
});

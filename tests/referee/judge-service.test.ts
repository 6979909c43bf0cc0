/**
 * `tally judge serve`'s service under hostile clients (issue #34), on a real
 * HTTP server on loopback: it signs only the one encoding of a Tally judge
 * request (the canonical bytes the referee sends), refusing every other
 * spelling with a typed 400; a body over 256 KiB is answered 413, never
 * reset; and slow clients are cut on the same timeouts as `tally serve`.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { recoverMessageAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeRequestBytes, sha256Hex, verdictMessage, type JudgeRequestInput } from '../../src/referee/bytes.js';
import { MAX_JUDGE_REQUEST_BYTES, VERDICT_SIGNATURE_HEADER, createJudgeService } from '../../src/referee/judge-service.js';
import { LOCAL_JUDGE_MODEL } from '../../src/referee/index.js';
import { stall } from '../helpers/stall.js';

const KEY = `0x${'0b'.repeat(32)}` as const;
const SIGNER = privateKeyToAccount(KEY).address;
const headersTimeoutMs = 600;
const requestTimeoutMs = 1_200;

let server: Server;
let url = '';
let port = 0;
beforeAll(async () => {
  server = createJudgeService({ key: KEY, model: { kind: 'local' }, timeouts: { headersTimeoutMs, requestTimeoutMs } });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
  url = `http://127.0.0.1:${port}/v1/chat/completions`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const input: JudgeRequestInput = {
  model: LOCAL_JUDGE_MODEL,
  rules: ['Only long positions.'],
  action: `TALLY_ACTION_V1|desk|${'ab'.repeat(32)}|open|ETH-USD|1|${'cd'.repeat(32)}`,
  intent: { action: 'open', market: 'ETH-USD', side: 'long', size: '1' },
  context: 'trend up',
};
const good = judgeRequestBytes(input);
const text = new TextDecoder().decode(good);
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

async function ask(body: Uint8Array | string): Promise<{ status: number; body: { error?: { code?: string; type?: string } }; signature: string | null; raw: Uint8Array }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const raw = new Uint8Array(await r.arrayBuffer());
  let parsed: { error?: { code?: string } } = {};
  try {
    parsed = JSON.parse(new TextDecoder().decode(raw)) as typeof parsed;
  } catch {
    // a signed completion is JSON too; anything else stays {}
  }
  return { status: r.status, body: parsed, signature: r.headers.get(VERDICT_SIGNATURE_HEADER), raw };
}

/** The user message rewritten, the outer body left canonical (so only the inner text is off). */
function withUser(mutate: (user: string) => string): string {
  const v = JSON.parse(text) as { messages: { content: string }[] };
  const user = v.messages[1]!.content;
  return text.replace(JSON.stringify(user).slice(1, -1), JSON.stringify(mutate(user)).slice(1, -1));
}

describe('tally judge serve: one encoding', () => {
  it("signs the referee's canonical request bytes (the control: every refusal below is a spelling of it)", async () => {
    const r = await ask(good);
    expect(r.status).toBe(200);
    const message = verdictMessage(LOCAL_JUDGE_MODEL, sha256Hex(good), sha256Hex(r.raw));
    expect(await recoverMessageAddress({ message, signature: r.signature as `0x${string}` })).toBe(SIGNER);
  });

  const cases: Array<[string, string, Uint8Array | string]> = [
    ['a BOM before the body', 'bom', new Uint8Array([0xef, 0xbb, 0xbf, ...good])],
    ['a duplicate member in the body', 'duplicate-key', text.replace('{"messages":', `{"model":"${LOCAL_JUDGE_MODEL}","messages":`)],
    ['a duplicate member in the user message', 'duplicate-key', withUser((u) => u.replace('{"action":', '{"action":"x","action":'))],
    ['a lone surrogate (\\ud800) in the body', 'lone-surrogate', text.replace('Only long positions.', 'Only long\\ud800 positions.')],
    ['a lone surrogate in the user message', 'lone-surrogate', withUser((u) => u.replace('trend up', 'trend\\ud800 up'))],
    ['1e999999 for a number', 'not-canonical', text.replace('"temperature":0', '"temperature":1e999999')],
    ['1e999999 inside the intent', 'not-canonical', withUser((u) => u.replace('"size":"1"', '"size":1e999999'))],
    ['a "__proto__" member in the body', 'proto-member', text.replace('"stream":false', '"__proto__":{"x":1},"stream":false')],
    ['a "__proto__" member in the intent', 'proto-member', withUser((u) => u.replace('"action":"open"', '"__proto__":"open","action":"open"'))],
    ['the same request with whitespace', 'not-canonical', JSON.stringify(JSON.parse(text), null, 1)],
    ['members out of order', 'not-canonical', JSON.stringify({ temperature: 0, ...(JSON.parse(text) as object) })],
    ['trailing data', 'trailing-data', `${text} {}`],
    ['invalid UTF-8', 'invalid-utf8', new Uint8Array([...good.slice(0, 20), 0xff, ...good.slice(20)])],
    ['not a Tally judge request', 'not-judge-request', '{"messages":[],"model":"gpt-4o"}'],
  ];
  it.each(cases)('%s is a typed 400 (%s), unsigned', async (_what, code, body) => {
    const r = await ask(typeof body === 'string' ? enc(body) : body);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: { code, type: 'invalid_request_error' } });
    expect(r.signature).toBeNull();
  });

  it('a body over 256 KiB is answered 413 (declared or chunked), not reset', async () => {
    const big = new Uint8Array(MAX_JUDGE_REQUEST_BYTES + 1).fill(0x20);
    const declared = await ask(big);
    expect(declared).toMatchObject({ status: 413, body: { error: { code: 'payload-too-large' } }, signature: null });
    // No content-length: the limit is found while reading.
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 5; i++) c.enqueue(new Uint8Array(64 * 1024).fill(0x20));
        c.close();
      },
    });
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit);
    expect(r.status).toBe(413);
    expect(await r.json()).toMatchObject({ error: { code: 'payload-too-large' } });
    // Exactly the limit is read and judged (here: refused as not JSON, so 400, not 413).
    expect((await ask(new Uint8Array(MAX_JUDGE_REQUEST_BYTES).fill(0x20))).status).toBe(400);
  });
});

describe('tally judge serve: slow clients (the limits of tally serve)', () => {
  it('headers that never finish are cut after the headers timeout, well before twice it', async () => {
    const { order, got } = await stall(port, 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n', headersTimeoutMs);
    expect(order).toEqual(['setting', 'closed']);
    expect(got).toMatch(/^HTTP\/1\.1 408/);
  });

  it('a body that never finishes is cut after the request timeout, well before twice it', async () => {
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model"`;
    const { order, got } = await stall(port, head, requestTimeoutMs);
    expect(order).toEqual(['setting', 'closed']);
    expect(got).toMatch(/^HTTP\/1\.1 408/);
  });
});

/**
 * The OpenAI-compatible adapter against a real HTTP server on loopback that
 * answers like such an endpoint — well, malformed, slowly, failing — through
 * a real session.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAiJudge, sha256Hex, signText, verdictMessage, type OpenAiJudgeOptions } from '../../src/referee/index.js';
import { carry, frameTime, iso, openIntent, signed } from '../rules/fixtures.js';
import { Desk, KEY_JUDGE, judgeAccount, judgedMandate, refereeSpec, ruling } from './fixtures.js';

type Mode = 'allow' | 'deny' | 'malformed' | 'fenced' | 'status500' | 'slow' | 'slow-body' | 'oversize' | 'header-sign' | 'no-header';

let server: Server;
let base = '';
let closedPort = 0;
const received: Array<{ body: Buffer; auth: string | undefined; path: string | undefined }> = [];
const timers = new Set<NodeJS.Timeout>();

function completion(content: string): string {
  return JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1_700_000_000, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } });
}

function actionOf(body: Buffer): string {
  const req = JSON.parse(body.toString('utf8')) as { messages: Array<{ content: string }> };
  return (JSON.parse(req.messages[1]!.content) as { action: string }).action;
}

async function handle(mode: Mode, res: ServerResponse, body: Buffer): Promise<void> {
  const action = actionOf(body);
  const send = (text: string, headers: Record<string, string> = {}) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    res.end(text);
  };
  switch (mode) {
    case 'allow':
      return send(completion(JSON.stringify({ reason: 'Long BTC within every rule.', verdict: 'ALLOW', action })));
    case 'deny':
      return send(completion(JSON.stringify({ reason: 'The context cites a rumor.', verdict: 'DENY', action })));
    case 'malformed':
      return send(completion('Sure! ALLOW'));
    case 'fenced':
      return send(completion('```json\n' + JSON.stringify({ reason: 'ok', verdict: 'ALLOW', action }) + '\n```'));
    case 'status500':
      res.writeHead(500, { 'content-type': 'application/json' });
      return void res.end('{"error":{"message":"upstream overloaded"}}');
    case 'slow': {
      const t = setTimeout(() => send(completion(JSON.stringify({ reason: 'late', verdict: 'ALLOW', action }))), 2_000);
      timers.add(t);
      return;
    }
    case 'slow-body': {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"choices":[');
      const t = setTimeout(() => res.end(']}'), 2_000);
      timers.add(t);
      return;
    }
    case 'oversize':
      return send(completion(JSON.stringify({ reason: 'x'.repeat(20_000), verdict: 'ALLOW', action })));
    case 'header-sign': {
      // A TEE gateway: it signs model:sha256(request):sha256(response) and returns the signature in a header.
      const text = completion(JSON.stringify({ reason: 'Signed by the gateway.', verdict: 'ALLOW', action }));
      const signature = await signText(KEY_JUDGE, verdictMessage('gw-model', sha256Hex(body), sha256Hex(Buffer.from(text))));
      return send(text, { 'x-verdict-signature': signature });
    }
    case 'no-header':
      return send(completion(JSON.stringify({ reason: 'unsigned', verdict: 'ALLOW', action })));
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({ body, auth: req.headers.authorization, path: req.url });
      const mode = (req.url ?? '').split('/')[1] as Mode;
      void handle(mode, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // A port that was just released: nothing listens there.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});

afterAll(async () => {
  for (const t of timers) clearTimeout(t);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

let n = 1;
/** Only the modes that answer late get a short timeout: a prompt answer must not lose a race with a loaded machine. */
const slowModes = new Set<string>(['slow', 'slow-body']);
async function judgeOnce(mode: Mode | 'closed-port', over: Partial<OpenAiJudgeOptions> = {}, context = 'BTC trend up') {
  const baseUrl = mode === 'closed-port' ? `http://127.0.0.1:${closedPort}/v1` : `${base}/${mode}/v1`;
  const judge = createOpenAiJudge({ baseUrl, model: 'gw-model', apiKey: 'test-key', signature: { key: KEY_JUDGE }, timeoutMs: slowModes.has(mode) ? 300 : 30_000, ...over });
  const desk = await Desk.open(refereeSpec(`openai-${mode}-${n}`, judgedMandate()), { judge });
  const intent = await signed(openIntent({ nonce: `o${n++}`, ttl: iso(frameTime(-1) + 1_800_000) }));
  return ruling(await desk.answer(carry(intent, context)));
}

describe('OpenAI-compatible judge adapter (loopback HTTP)', () => {
  it('sends the exact request bytes (temperature 0, no streaming, bearer key) and keeps the exact response bytes', async () => {
    const before = received.length;
    const r = await judgeOnce('allow');
    expect(r.verdict).toMatchObject({ admitted: true, decision: 'ALLOW', model: 'gw-model', signer: judgeAccount.address.toLowerCase(), source: 'judged' });
    // The adapter, holding the operator's key, signed the model's reply: the ruling says so.
    expect(r.verdict!.signed_by).toBe('operator');
    expect(r.ticket).toMatchObject({ id: 1 });
    const got = received[before]!;
    expect(got.path).toBe('/allow/v1/chat/completions');
    expect(got.auth).toBe('Bearer test-key');
    expect(sha256Hex(got.body)).toBe(r.verdict!.request_sha256);
    expect(JSON.parse(got.body.toString('utf8'))).toMatchObject({ model: 'gw-model', temperature: 0, stream: false });
    const response = Buffer.from(r.verdict!.response!, 'base64').toString('utf8');
    expect(response).toContain('"usage"'); // the whole provider body, not just the content
  });

  it('a DENY is judge_denied with the model reason', async () => {
    expect((await judgeOnce('deny')).verdict).toMatchObject({ admitted: false, code: 'judge_denied', message: 'The context cites a rumor.' });
  });

  it.each<[Mode, string]>([
    ['malformed', 'not JSON'],
    ['fenced', 'not JSON'],
  ])('a %s answer is judge_unparsable (DENY), signed and recorded', async (mode, message) => {
    const r = await judgeOnce(mode);
    expect(r.verdict).toMatchObject({ admitted: false, code: 'judge_unparsable', source: 'judged' });
    expect(r.verdict!.message).toContain(message);
    expect(r.verdict!.response).toBeTypeOf('string');
  });

  it.each<[Mode | 'closed-port', string, RegExp]>([
    ['status500', 'http_status', /HTTP 500/],
    ['slow', 'timeout', /300 ms/],
    ['slow-body', 'timeout', /300 ms/],
    ['oversize', 'oversize', /16384 bytes/],
    ['closed-port', 'network', /request failed/],
    ['no-header', 'no_signature', /x-verdict-signature/],
  ])('%s → judge_unavailable (%s), a DENY with its class recorded', async (mode, failure, message) => {
    // Only the stalling modes get a short timeout (their answer is 2 s away, the timer is in this same
    // process, so it fires first in any load); every other call may take as long as a loaded machine needs.
    const over = mode === 'no-header' ? { signature: { header: 'x-verdict-signature' } } : mode === 'slow' || mode === 'slow-body' ? { timeoutMs: 300 } : {};
    const r = await judgeOnce(mode, over);
    expect(r.verdict).toMatchObject({ admitted: false, code: 'judge_unavailable', failure, source: 'judged', model: 'gw-model' });
    expect(r.verdict!.message).toMatch(message);
    expect(r.ticket).toBeUndefined();
  });

  it('a signature returned by the endpoint itself (header) is accepted when the mandate trusts its signer', async () => {
    const r = await judgeOnce('header-sign', { signature: { header: 'x-verdict-signature' } });
    expect(r.verdict).toMatchObject({ admitted: true, signer: judgeAccount.address.toLowerCase() });
    expect(r.verdict!.signed_by).toBeUndefined();
  });

  it('rejects bad configuration as misuse', () => {
    expect(() => createOpenAiJudge({ baseUrl: 'ftp://x', model: 'm', signature: { key: KEY_JUDGE } })).toThrow(/http/);
    expect(() => createOpenAiJudge({ baseUrl: base, model: 'has space', signature: { key: KEY_JUDGE } })).toThrow(/model/);
    expect(() => createOpenAiJudge({ baseUrl: base, model: 'm', signature: { key: '0x12' } })).toThrow(/signer/);
    expect(() => createOpenAiJudge({ baseUrl: base, model: 'm', signature: { header: 'bad header' } })).toThrow(/header/);
    expect(() => createOpenAiJudge({ baseUrl: base, model: 'm', signature: { key: KEY_JUDGE }, maxResponseBytes: 1 << 20 })).toThrow(/maxResponseBytes/);
  });
});

/**
 * `tally mcp` as an MCP host meets it: the SDK's own client spawns the built
 * binary over stdio. Tools and annotations, a whole day through the tools,
 * refusals and schema failures as `isError` results with structured content,
 * an intent rejection as a recorded result, `verify`, a stdout that carries
 * nothing but MCP messages, and the remote mode against a live `tally serve`.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBundle } from '../../src/codec/index.js';
import { runDay } from '../helpers/day.js';
import { relink } from '../helpers/relink.js';
import { carry, frameTime, iso, openIntent, signed, spec as intentSpec } from '../rules/fixtures.js';
import { TALLY, TOKENS, SIGNERS, authDoc, cleanup, startServer, tempDir } from '../server/helpers.js';
import { hashToken } from '../../src/server/auth.js';

interface ToolResult {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
}

async function connect(args: string[], env: Record<string, string> = {}): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [TALLY, 'mcp', ...args], env: { PATH: process.env['PATH'] ?? '', ...env }, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  const client = new Client({ name: 'tally-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => err };
}

let local: { client: Client; stderr: () => string };
const call = async (name: string, args: Record<string, unknown>, c: Client = local.client): Promise<ToolResult> => (await c.callTool({ name, arguments: args })) as ToolResult;
const sc = <T = Record<string, unknown>>(r: ToolResult): T => r.structuredContent as T;

beforeAll(async () => {
  local = await connect(['--db', join(tempDir('mcp'), 'tally.db')]);
});
afterAll(async () => {
  await local.client.close();
  cleanup();
});

describe('tally mcp (stdio)', () => {
  it('lists the six verbs and verify with input schemas, annotations and retry guidance', async () => {
    const { tools } = await local.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['session_open', 'session_frame', 'session_turn', 'session_events', 'session_describe', 'session_finalize', 'verify']);
    const by = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const n of ['session_turn', 'session_finalize', 'session_open', 'session_frame']) expect(by[n]!.annotations).toMatchObject({ idempotentHint: true, readOnlyHint: false, destructiveHint: false });
    for (const n of ['session_events', 'session_describe', 'verify']) expect(by[n]!.annotations).toMatchObject({ readOnlyHint: true });
    expect(by['session_turn']!.inputSchema).toMatchObject({ type: 'object', required: ['sessionId', 'ordinal', 'parentHash', 'frameRoot', 'body'], additionalProperties: false });
    expect(by['session_turn']!.description).toMatch(/SAME sessionId, ordinal, parentHash, frameRoot and the SAME body bytes/);
    expect(by['session_turn']!.description).toMatch(/NEVER change the content of a retry/);
    for (const t of tools) expect(t.description!.length).toBeGreaterThan(80);
    expect(local.client.getInstructions()).toMatch(/safe to retry/);
  });

  it('runs a day through the tools; retries are duplicates; refusals are isError results with error.type and code', async () => {
    const open = await call('session_open', { spec: { name: 'mcp-day', run: String(process.pid) } });
    expect(open.isError).toBeFalsy();
    const sid = sc<{ sessionId: string }>(open).sessionId;
    expect(open.content[0]!.text).toContain(sid);
    const f = sc<{ entryHash: string; frameRoot: string }>(await call('session_frame', { sessionId: sid, ordinal: -1, time: 1_000, data: { price: '97000' } }));
    const turn = { sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: 'hold' } };
    const t1 = await call('session_turn', turn);
    expect(sc(t1)).toMatchObject({ index: 2, duplicate: false });
    const t2 = await call('session_turn', turn);
    expect(sc(t2)).toEqual({ ...sc(t1), duplicate: true });
    expect(t2.content[0]!.text).toContain('duplicate');
    const conflict = await call('session_turn', { ...turn, body: { kind: 'authored', text: 'buy' } });
    expect(conflict.isError).toBe(true);
    expect(sc(conflict)).toEqual({ error: { type: 'turn-conflict', code: -32003, retryable: false, message: expect.any(String), advice: expect.stringContaining('Do not retry with other bytes') } });
    const wrong = await call('session_describe', { sessionId: 'ab'.repeat(32) });
    expect(wrong.isError).toBe(true);
    expect(sc(wrong)).toMatchObject({ error: { type: 'wrong-session', code: -32001 } });
    const d = await call('session_describe', { sessionId: sid });
    expect(sc(d)).toMatchObject({ phase: 'awaiting-frame', size: 3, nextOrdinal: 0 });
    const ev = await call('session_events', { sessionId: sid, after: 0 });
    expect(sc<{ events: unknown[]; next: number }>(ev)).toMatchObject({ next: 2 });
    const fin = await call('session_finalize', { sessionId: sid, artifacts: { note: 'done' } });
    const receipt = sc<{ receipt: { receiptRoot: string; size: number } }>(fin).receipt;
    expect(receipt.size).toBe(4);
    expect(sc(await call('session_finalize', { sessionId: sid, artifacts: { note: 'other' } }))).toMatchObject({ error: { type: 'sealed' } });
    // verify: pinned to the receipt it is valid; pinned to another root it is not.
    const v = await call('verify', { sessionId: sid, receiptRoot: receipt.receiptRoot, size: receipt.size });
    expect(v.isError).toBeFalsy();
    expect(sc(v)).toMatchObject({ valid: true, size: 4, sealed: true, receiptRoot: receipt.receiptRoot });
    const bad = await call('verify', { sessionId: sid, receiptRoot: 'cd'.repeat(32) });
    expect(sc(bad)).toMatchObject({ valid: false, code: 'pin-mismatch' });
    expect(bad.content[0]!.text).toMatch(/^INVALID/);
  });

  it('verify takes a bundle as text: valid as made, invalid after any one-character change', async () => {
    const { bundle, receipt } = await runDay({ wakes: 3 });
    const text = new TextDecoder().decode(bundle);
    expect(sc(await call('verify', { bundle: text, receiptRoot: receipt!.receiptRoot }))).toMatchObject({ valid: true, receiptRoot: receipt!.receiptRoot });
    for (const at of [10, Math.floor(text.length / 2), text.length - 5]) {
      const c = text[at] === 'a' ? 'b' : 'a';
      const mutated = text.slice(0, at) + c + text.slice(at + 1);
      const r = await call('verify', { bundle: mutated });
      expect(r.isError).toBeFalsy();
      expect(sc(r)).toMatchObject({ valid: false });
    }
    expect(sc(await call('verify', { bundle: text.slice(0, -1) }))).toMatchObject({ valid: false, code: 'missing-newline' });
  });

  it('verify refuses a re-linked bundle with a BOM on its genesis line, and bundle text with a lone surrogate (issue #11)', async () => {
    const { lines } = await runDay({ wakes: 2 });
    const forged = new TextDecoder('utf-8', { ignoreBOM: true }).decode(encodeBundle(relink(lines, 0, Uint8Array.from([0xef, 0xbb, 0xbf, ...lines[0]!]))));
    expect(forged.startsWith('\uFEFF')).toBe(true);
    expect(sc(await call('verify', { bundle: forged }))).toMatchObject({ valid: false, index: 0, code: 'not-json' });
    const text = new TextDecoder().decode(encodeBundle(lines));
    // Refused at the transport (the one strict parser): a -32700 parse error for this call, nothing runs.
    await expect(call('verify', { bundle: text.replace('"name":"test-day"', '"name":"test-day\ud800"') })).rejects.toMatchObject({ code: -32700, message: expect.stringContaining('lone-surrogate') });
  });

  it('arguments that fail the schema come back as isError with structured issues, never as protocol errors', async () => {
    const r = await call('session_turn', { sessionId: 'nothex', ordinal: 'one', body: { kind: 'authored', text: 'x', bytes: 'eA==' } });
    expect(r.isError).toBe(true);
    const e = sc<{ error: { type: string; code: number; issues: { path: string; message: string }[] } }>(r).error;
    expect(e).toMatchObject({ type: 'malformed-entry', code: -32007 });
    expect(e.issues.map((i) => i.path)).toEqual(expect.arrayContaining(['sessionId', 'ordinal', 'parentHash', 'frameRoot']));
    expect(sc(await call('verify', { sessionId: 'ab'.repeat(32), bundle: 'x' }))).toMatchObject({ error: { type: 'malformed-entry' } });
    expect(sc(await call('session_events', { sessionId: 'ab'.repeat(32), extra: 1 }))).toMatchObject({ error: { type: 'malformed-entry' } });
    // Only an unknown tool is a protocol error.
    await expect(local.client.callTool({ name: 'session_advance', arguments: {} })).rejects.toThrow(/Unknown tool/);
  });

  it('a rejected intent is recorded and returned as a result (not isError), with the fix from the ruling catalogue', async () => {
    const sid = sc<{ sessionId: string }>(await call('session_open', { spec: intentSpec(`mcp-intents-${process.pid}`) })).sessionId;
    const f = sc<{ entryHash: string; frameRoot: string }>(await call('session_frame', { sessionId: sid, ordinal: -1, time: frameTime(-1) }));
    const expired = new TextDecoder().decode(carry(await signed(openIntent({ nonce: `mcp-${process.pid}`, ttl: iso(frameTime(-1) - 1) }))));
    const r = await call('session_turn', { sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: expired } });
    expect(r.isError).toBeFalsy();
    expect(sc(r)).toMatchObject({ index: 2, ruling: { intent: { admitted: false, stage: 'ttl', code: 'expired' } } });
    expect(r.content[0]!.text).toMatch(/REJECTED.*expired.*Fix: Emit with a ttl in the future/s);
  });

  it('writes nothing but JSON-RPC messages on stdout; logs go to stderr without arguments or bytes', async () => {
    const child = spawn(process.execPath, [TALLY, 'mcp', '--db', 'memory:'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const send = (m: unknown) => child.stdin.write(JSON.stringify(m) + '\n');
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'session_open', arguments: { spec: { name: 'raw-secret-name-91f' } } } });
    send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'session_turn', arguments: { sessionId: 'ab'.repeat(32), ordinal: -1, parentHash: 'ab'.repeat(32), frameRoot: 'ab'.repeat(32), body: { kind: 'authored', text: 'raw-secret-bytes-77c' } } } });
    const deadline = Date.now() + 15_000;
    while (out.split('\n').filter((l) => l.trim() !== '').length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    child.stdin.end();
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).toBe(0);
    const lines = out.split('\n').filter((l) => l !== '');
    expect(lines.length).toBe(4);
    for (const l of lines) expect(JSON.parse(l)).toMatchObject({ jsonrpc: '2.0' });
    expect(lines.map((l) => (JSON.parse(l) as { id: number }).id)).toEqual([1, 2, 3, 4]);
    expect(err).toContain('"tool":"session_turn"');
    expect(err).not.toContain('raw-secret');
  });
});

describe('tally mcp --url (remote)', () => {
  it("an agent token bound to another key is refused in a session whose alpha is not its key (forbidden, nothing written), as on HTTP", async () => {
    const deskB = 'tly_test_mcp_desk_b_alpha_0123456789abcdef';
    const srv = await startServer({ db: 'memory:', auth: authDoc([{ name: 'desk-b-alpha', role: 'agent', agents: ['alpha'], signer: SIGNERS.beta, sha256: hashToken(deskB) }]) });
    try {
      const rt = await connect(['--url', srv.url], { TALLY_TOKEN: TOKENS.runtime });
      const sid = sc<{ sessionId: string }>(await call('session_open', { spec: intentSpec(`mcp-desk-a-${process.pid}`) }, rt.client)).sessionId;
      const f = sc<{ entryHash: string; frameRoot: string }>(await call('session_frame', { sessionId: sid, ordinal: -1, time: frameTime(-1) }, rt.client));
      const b = await connect(['--url', srv.url], { TALLY_TOKEN: deskB });
      const turn = await call('session_turn', { sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: 'desk B speaking' } }, b.client);
      expect(turn.isError).toBe(true);
      expect(sc(turn)).toMatchObject({ error: { type: 'forbidden', code: -32011, retryable: false } });
      await b.client.close();
      expect(sc<{ size: number }>(await call('session_describe', { sessionId: sid }, rt.client)).size).toBe(2);
      // The token bound to desk A's alpha key writes the turn.
      const a = await connect(['--url', srv.url], { TALLY_TOKEN: TOKENS.alpha });
      const text = new TextDecoder().decode(carry(await signed(openIntent({ nonce: `mcp-bound-${process.pid}`, ttl: iso(frameTime(-1) + 60_000) }))));
      expect(sc(await call('session_turn', { sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text } }, a.client))).toMatchObject({ index: 2 });
      await a.client.close();
      await rt.client.close();
    } finally {
      await srv.stop();
    }
  });

  it('calls a live tally serve with the token from TALLY_TOKEN; the server authorizes it', async () => {
    const srv = await startServer({ db: 'memory:' });
    try {
      const agent = await connect(['--url', srv.url], { TALLY_TOKEN: TOKENS.alpha });
      const denied = await call('session_open', { spec: { name: 'remote' } }, agent.client);
      expect(denied.isError).toBe(true);
      expect(sc(denied)).toMatchObject({ error: { type: 'forbidden', code: -32011, retryable: false } });
      await agent.client.close();
      const rt = await connect(['--url', srv.url], { TALLY_TOKEN: TOKENS.runtime });
      const sid = sc<{ sessionId: string }>(await call('session_open', { spec: { name: 'remote' } }, rt.client)).sessionId;
      const f = sc<{ entryHash: string; frameRoot: string }>(await call('session_frame', { sessionId: sid, ordinal: -1, time: 5 }, rt.client));
      expect(sc(await call('session_turn', { sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'stand-down', failureClass: 'provider' } }, rt.client))).toMatchObject({ index: 2 });
      expect(sc(await call('verify', { sessionId: sid, unsealed: true }, rt.client))).toMatchObject({ valid: true, size: 3, sealed: false });
      expect(sc(await call('verify', { sessionId: 'ab'.repeat(32) }, rt.client))).toMatchObject({ error: { type: 'wrong-session' } });
      expect(rt.stderr()).not.toContain(TOKENS.runtime);
      await rt.client.close();
      // The server is gone: a network refusal, retryable, as a result.
      await srv.stop();
      const lost = await connect(['--url', srv.url, '--retries', '1'], { TALLY_TOKEN: TOKENS.runtime });
      const r = await call('session_describe', { sessionId: sid }, lost.client);
      expect(sc(r)).toMatchObject({ error: { type: 'network', retryable: true } });
      await lost.client.close();
    } finally {
      await srv.stop();
    }
  });
});

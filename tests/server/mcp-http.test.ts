/**
 * `tally serve` answers MCP over Streamable HTTP at /mcp: the SDK Client with
 * StreamableHTTPClientTransport and a bearer token drives the same tools as
 * `tally mcp` (a real in-process WireServer); a session is its token's (a
 * request with another token is 404, with none 401); the token's role is
 * enforced as on /rpc; DELETE ends a session.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessServer } from './in-process.js';
import { TOKENS } from './helpers.js';

let s: InProcessServer;
beforeAll(async () => {
  s = await startInProcess();
});
afterAll(async () => {
  await s.server.close(1_000);
});

const connect = async (token: string) => {
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const c = new Client({ name: 'mcp-http-test', version: '1' });
  await c.connect(transport);
  return { c, transport };
};

describe('tally serve: MCP on /mcp', () => {
  it('serves the tools with a runtime token; the session is bound to its token; DELETE ends it', async () => {
    const { c, transport } = await connect(TOKENS.runtime);
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['session_open', 'session_frame', 'session_turn', 'session_finalize', 'verify']));
    const open = await c.callTool({ name: 'session_open', arguments: { spec: { name: 'over-mcp-http' } } });
    expect(open.isError).not.toBe(true);
    const sid = (open.structuredContent as { sessionId: string }).sessionId;
    expect(sid).toMatch(/^[0-9a-f]{64}$/);
    const f = await c.callTool({ name: 'session_frame', arguments: { sessionId: sid, ordinal: -1, time: 1_000 } });
    expect(f.isError).not.toBe(true);
    const session = transport.sessionId!;
    const body = JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' });
    const headers = (token?: string) => ({ 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) });
    expect((await fetch(`${s.url}/mcp`, { method: 'POST', headers: headers(TOKENS.auditor), body })).status).toBe(404);
    expect((await fetch(`${s.url}/mcp`, { method: 'POST', headers: headers(), body })).status).toBe(401);
    expect((await fetch(`${s.url}/mcp`, { method: 'POST', headers: headers(TOKENS.runtime), body: '{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}' })).status).toBe(400);
    await transport.terminateSession();
    expect((await fetch(`${s.url}/mcp`, { method: 'POST', headers: headers(TOKENS.runtime), body })).status).toBe(404);
    await c.close();
  }, 30_000);

  it('an auditor token cannot write through MCP (forbidden, as on /rpc)', async () => {
    const { c } = await connect(TOKENS.auditor);
    const r = await c.callTool({ name: 'session_open', arguments: { spec: { name: 'auditor-tries' } } });
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r.structuredContent)).toMatch(/forbidden/);
    await c.close();
  }, 30_000);
});

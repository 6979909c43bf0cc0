/**
 * The gateway's `/mcp` (`--listen`) under the MCP spec's session and
 * resumability rules, tested against the official SDK Client: a changed tool
 * list reaches the agent on its GET stream as `notifications/tools/list_changed`
 * (it did not reach an HTTP agent at all before); each event there has an id,
 * and a GET with `Last-Event-ID` is sent what came after it on that stream;
 * a request with an unknown `Mcp-Session-Id` is 404.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { serveHttp } from '../../src/gateway/index.js';
import { HOSTILE, startDay, type Day } from './helpers.js';

const days: Day[] = [];
const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const s of stops) await s();
  for (const d of days) await d.upstream.close();
});

/** Reads SSE events from a fetch body until `n` have come or `ms` pass. */
async function events(res: Response, n: number, ms: number): Promise<{ id?: string; data: string }[]> {
  const out: { id?: string; data: string }[] = [];
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  const deadline = Date.now() + ms;
  while (out.length < n && Date.now() < deadline) {
    const r = await Promise.race([reader.read(), new Promise<'late'>((ok) => setTimeout(() => ok('late'), Math.max(1, deadline - Date.now())))]);
    if (r === 'late' || r.done) break;
    buf += dec.decode(r.value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const ev: { id?: string; data: string } = { data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) ev.id = line.slice(4);
        else if (line.startsWith('data: ')) ev.data += line.slice(6);
      }
      if (ev.data !== '') out.push(ev);
    }
  }
  await reader.cancel().catch(() => undefined);
  return out;
}

describe('gateway /mcp: sessions and resumability', () => {
  it('list_changed reaches the SDK Client on its GET stream (it reached no HTTP agent before)', async () => {
    const d = await startDay(HOSTILE);
    days.push(d);
    const side = await serveHttp(d.gateway, '127.0.0.1', 0, (e) => {
      throw e;
    });
    stops.push(() => side.close());
    const client = new Client({ name: 'resume-test', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(side.url));
    await client.connect(transport);
    const changed: number[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      changed.push(Date.now());
    });
    const sid = transport.sessionId!;
    expect(sid).toMatch(/^[0-9a-f-]{36}$/);
    // The SDK client opens its GET stream after initialized; wait until the server holds it.
    await new Promise((r) => setTimeout(r, 300));
    const grew = await client.callTool({ name: 'grow', arguments: {} });
    expect(JSON.stringify(grew.content)).toContain('grew');
    for (let i = 0; i < 50 && changed.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(changed).toHaveLength(1);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('grown');

    await client.close();
    await d.gateway.finish('agent-disconnected');
  }, 60_000);

  it('each GET-stream event has an id; a GET with Last-Event-ID is sent what followed it; an unknown session is 404', async () => {
    const d = await startDay(HOSTILE);
    days.push(d);
    const side = await serveHttp(d.gateway, '127.0.0.1', 0, (e) => {
      throw e;
    });
    stops.push(() => side.close());
    const base = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2025-11-25' };
    const init = await fetch(side.url, { method: 'POST', headers: base, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) });
    expect(init.status).toBe(200);
    const sid = init.headers.get('mcp-session-id')!;
    expect(sid).toMatch(/^[0-9a-f-]{36}$/);
    await init.text();
    const headers = { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    expect((await fetch(side.url, { method: 'POST', headers: { ...base, 'mcp-session-id': sid }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).status).toBe(202);
    const first = new AbortController();
    const live = await fetch(side.url, { headers, signal: first.signal });
    expect(live.status).toBe(200);
    const post = (id: number) =>
      fetch(side.url, { method: 'POST', headers: { ...headers, accept: 'application/json, text/event-stream', 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'grow', arguments: {} } }) });
    expect((await post(101)).status).toBe(200);
    expect((await post(102)).status).toBe(200);
    const seen = await events(live, 2, 3000);
    expect(seen.map((e) => JSON.parse(e.data).method)).toEqual(['notifications/tools/list_changed', 'notifications/tools/list_changed']);
    expect(seen.every((e) => typeof e.id === 'string' && e.id.length > 0)).toBe(true);
    first.abort();
    // Reconnect after the first of the two: exactly the second is sent again, with its id.
    let again = await fetch(side.url, { headers: { ...headers, 'last-event-id': seen[0]!.id! } });
    for (let i = 0; i < 40 && again.status === 409; i++) {
      await new Promise((r) => setTimeout(r, 50));
      again = await fetch(side.url, { headers: { ...headers, 'last-event-id': seen[0]!.id! } });
    }
    expect(again.status).toBe(200);
    const replayed = await events(again, 2, 1500);
    expect(replayed.map((e) => e.id)).toEqual([seen[1]!.id]);

    const unknown = await fetch(side.url, { method: 'POST', headers: { ...headers, 'mcp-session-id': '00000000-0000-0000-0000-000000000000', accept: 'application/json, text/event-stream', 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) });
    expect(unknown.status).toBe(404);
    await d.gateway.finish('agent-disconnected');
  }, 60_000);
});

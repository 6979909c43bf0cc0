/**
 * MCP `tools/call` with `arguments` that are not an object (a string, an
 * array, null, a number): like every other argument that fails the schema,
 * an `isError` tool result with `structuredContent.error` (docs/WIRE.md §8),
 * never a JSON-RPC error carrying a validator's dump. In-process: the SDK's
 * own client over its in-memory transport, a real engine behind the tools.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { createMcpServer, localBackend } from '../../src/server/mcp/index.js';
import { WireService } from '../../src/server/service.js';

let client: Client;
let close: () => Promise<void>;

beforeAll(async () => {
  const mcp = createMcpServer(localBackend(new WireService(createEngine())));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await mcp.connect(a);
  client = new Client({ name: 'args-test', version: '1.0.0' });
  await client.connect(b);
  close = async () => {
    await client.close();
    await mcp.close();
  };
});
afterAll(() => close());

describe('tally mcp: arguments that are not an object', () => {
  it('is an isError result (malformed-entry, with advice), for every tool, never a protocol error', async () => {
    for (const name of ['session_open', 'session_turn', 'session_describe', 'verify']) {
      for (const args of ['x', [1, 2], null, 7, true]) {
        const r = await client.request({ method: 'tools/call', params: { name, arguments: args as unknown as Record<string, unknown> } }, CallToolResultSchema);
        expect(r.isError).toBe(true);
        expect(r.structuredContent).toEqual({
          error: { type: 'malformed-entry', code: -32007, retryable: false, message: expect.stringMatching(/arguments must be an object/), advice: expect.any(String), issues: [{ path: '', message: expect.stringMatching(/object/) }] },
        });
        expect(JSON.stringify(r)).not.toMatch(/invalid_type|"expected"|"received"/);
      }
    }
  });

  it('missing arguments still mean {} (the schema then names what is missing); an unknown tool stays a protocol error', async () => {
    const r = await client.request({ method: 'tools/call', params: { name: 'session_describe' } }, CallToolResultSchema);
    expect(r).toMatchObject({ isError: true, structuredContent: { error: { type: 'malformed-entry', issues: [{ path: 'sessionId' }] } } });
    await expect(client.request({ method: 'tools/call', params: { name: 'nope', arguments: {} } }, CallToolResultSchema)).rejects.toMatchObject({ code: -32602 });
    await expect(client.request({ method: 'tools/call', params: { arguments: {} } as never }, CallToolResultSchema)).rejects.toMatchObject({ code: -32602 });
  });

  it('a well-formed call still works', async () => {
    const r = await client.callTool({ name: 'session_open', arguments: { spec: { name: 'mcp-args' } } });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ created: true, sessionId: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });
});

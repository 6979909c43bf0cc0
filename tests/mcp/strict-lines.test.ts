/**
 * Issue #11, MCP: `tally mcp` reads each stdin line with the one strict
 * parser, not the SDK's JSON.parse. Raw lines written to the child's stdin: a
 * `tools/call` whose arguments name a key twice, or hold a lone-surrogate
 * escape, is answered with a JSON-RPC parse error (-32700, id null, data.code
 * the strict-JSON code) and nothing runs; well-formed lines around it are
 * answered as usual (docs/WIRE.md §8).
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { TALLY } from '../server/helpers.js';

describe('tally mcp: one encoding on stdin', () => {
  it('duplicate keys and lone surrogates in tools/call are -32700 parse errors; nothing is opened', async () => {
    const child = spawn(process.execPath, [TALLY, 'mcp', '--db', 'memory:'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.resume();
    const raw = (line: string) => child.stdin.write(line + '\n');
    raw(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } }));
    raw(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    raw('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"session_open","arguments":{"spec":{"name":"first"},"spec":{"name":"second"}}}}');
    raw('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"session_open","arguments":{"spec":{"name":"a\\ud800"}}}}');
    raw('{"jsonrpc":"2.0","id":4,"method":"tools/list"}\r');
    const deadline = Date.now() + 15_000;
    while (out.split('\n').filter((l) => l.trim() !== '').length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    child.stdin.end();
    expect(await new Promise<number | null>((r) => child.once('exit', r))).toBe(0);
    const msgs = out.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { id: number | null; result?: { tools?: unknown[] }; error?: { code: number; data?: { code: string } } });
    expect(msgs.length).toBe(4);
    // Refusals are answered as each line is read; results when their call completes.
    const refused = msgs.filter((m) => m.error !== undefined).sort((a, b) => Number(a.id) - Number(b.id));
    expect(refused).toMatchObject([
      { id: 2, error: { code: -32700, data: { code: 'duplicate-key' } } },
      { id: 3, error: { code: -32700, data: { code: 'lone-surrogate' } } },
    ]);
    expect(msgs.find((m) => m.id === 1)).toMatchObject({ result: {} });
    expect(msgs.find((m) => m.id === 4)!.result!.tools!.length).toBeGreaterThan(0);
    expect(msgs.some((m) => (m.id === 2 || m.id === 3) && m.result !== undefined)).toBe(false);
  });
});

/**
 * Several upstreams behind one gateway (docs/PROTOCOL.md §18.6): two real npm
 * servers at once (server-everything and server-filesystem), their tools
 * offered as `<name>__<tool>`; each call routed to its own upstream under the
 * upstream's own tool name; `mandate.tools` server rules checked against the
 * call's own upstream; a `list_changed` of one upstream re-reads only that
 * one; the day verifies and replays. Then the same through the built CLI,
 * driven by the official SDK Client.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import { ChildChannel, Gateway, Upstream } from '../../src/gateway/index.js';
import { createRefereeRuler } from '../../src/referee/ruler.js';
import { Engine } from '../../src/session/index.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { SessionSpec } from '../../src/protocol/index.js';
import { EVERYTHING, FILESYSTEM, HOSTILE, ROOT, frames, mandateSpec, toolRulings, verifyAndReplay } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-gw-multi-'));
const ups: Upstream[] = [];
afterAll(async () => {
  await Promise.all(ups.map((u) => u.close()));
  rmSync(dir, { recursive: true, force: true });
});

function child(command: readonly string[]): Upstream {
  const u = new Upstream(new ChildChannel(command[0]!, command.slice(1), 262_144), 262_144);
  ups.push(u);
  return u;
}

async function day(spec: SessionSpec, files: string) {
  const store = new MemoryStore();
  const engine = new Engine({ store, ruler: createRefereeRuler({ store }) });
  const gateway = new Gateway({ engine, upstreams: [{ name: 'ev', upstream: child(EVERYTHING) }, { name: 'fs', upstream: child(FILESYSTEM(files)) }, { name: 'odd', upstream: child(HOSTILE) }], spec, timeoutMs: 20_000 });
  await gateway.start();
  let id = 0;
  const call = async (name: string, args?: Record<string, unknown>) => (await gateway.handle({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, ...(args === undefined ? {} : { arguments: args }) } }))!;
  return { store, gateway, call };
}

const text = (r: Record<string, unknown>): string => ((r['result'] as { content?: { text?: string }[] }).content?.[0]?.text ?? '') as string;

describe('one gateway, several upstreams', () => {
  it('offers every upstream\'s tools namespaced, routes each call to its own upstream, and rules server rules per upstream', async () => {
    const files = mkdtempSync(join(dir, 'files-'));
    const spec = mandateSpec({
      allow: {
        ev__echo: { server: 'mcp-servers/everything' },
        // A rule naming the wrong server: the call is refused and never sent.
        'ev__get-sum': { server: 'secure-filesystem-server' },
        fs__write_file: { server: 'secure-filesystem-server', args: { path: { type: 'string' } } },
        odd__grow: {},
        odd__grown: {},
      },
    });
    const d = await day(spec, files);
    const init = await d.gateway.handle({ jsonrpc: '2.0', id: 'i', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    expect(JSON.stringify(init)).toContain('ev__<tool>');
    const listed = (await d.gateway.handle({ jsonrpc: '2.0', id: 'l', method: 'tools/list' }))!['result'] as { tools: { name: string }[] };
    const names = listed.tools.map((t) => t.name);
    expect(names).toContain('ev__echo');
    expect(names).toContain('fs__write_file');
    expect(names).toContain('odd__ok');
    expect(names.every((n) => /^(ev|fs|odd)__/.test(n))).toBe(true);

    expect(text(await d.call('ev__echo', { message: 'hi' }))).toBe('Echo: hi');
    const target = join(files, 'a.txt');
    expect((await d.call('fs__write_file', { path: target, content: 'one' }))['result']).not.toHaveProperty('isError');
    expect(readFileSync(target, 'utf8')).toBe('one');
    expect(text(await d.call('ev__get-sum', { a: 1, b: 2 }))).toMatch(/server_not_allowed/);
    expect(text(await d.call('fs__echo', { message: 'x' }))).toMatch(/tool_not_offered/);
    expect(text(await d.call('echo', { message: 'x' }))).toMatch(/tool_not_offered/);
    // list_changed on one upstream re-reads that one only.
    expect(text(await d.call('odd__grown'))).toMatch(/tool_not_offered/);
    expect(text(await d.call('odd__grow'))).toBe('grew');
    expect(text(await d.call('odd__grown'))).toBe('the new tool');
    await d.gateway.finish('agent-disconnected');
    expect(d.gateway.counts).toMatchObject({ turns: 8, upstreamCalls: 4 });

    const fs = await frames(d.store, d.gateway.sessionId);
    const open = fs[0]!['servers'] as Record<string, Record<string, unknown>>;
    expect(Object.keys(open)).toEqual(['ev', 'fs', 'odd']);
    expect(open['fs']!['server']).toBe('secure-filesystem-server');
    expect(Array.isArray(open['ev']!['tools']) && Array.isArray(open['fs']!['tools'])).toBe(true);
    expect(fs[0]).not.toHaveProperty('tools');
    const reread = fs.map((f) => (f['servers'] === undefined ? '' : Object.keys(f['servers'] as object).join(',')));
    // server-everything announces list_changed on its own at start; only the announcing upstream is re-read.
    expect(reread[0]).toBe('ev,fs,odd');
    expect(reread[7], JSON.stringify(reread)).toBe('odd');
    expect(reread.slice(1).every((r) => r === '' || r === 'ev' || r === 'odd'), JSON.stringify(reread)).toBe(true);
    const rulings = (await toolRulings(d.store, d.gateway.sessionId)).map((t) => (t.ruling === undefined ? 'close' : t.ruling['admitted'] === true ? 'ok' : t.ruling['code']));
    expect(rulings).toEqual(['ok', 'ok', 'server_not_allowed', 'tool_not_offered', 'tool_not_offered', 'tool_not_offered', 'ok', 'ok', 'close']);
    const { verified, replayed } = await verifyAndReplay(d.store, d.gateway.sessionId);
    expect(verified.ok, JSON.stringify(verified)).toBe(true);
    expect(replayed.ok, JSON.stringify(replayed)).toBe(true);
  }, 90_000);

  it('refuses bad upstream names before anything starts', () => {
    const store = new MemoryStore();
    const engine = new Engine({ store, ruler: createRefereeRuler({ store }) });
    const u = new Upstream(new ChildChannel(process.execPath, [], 1000), 1000);
    for (const name of ['', 'A', 'a_b', 'x'.repeat(33), '-a']) expect(() => new Gateway({ engine, upstreams: [{ name, upstream: u }], spec: { name: 'x', mcp: {} }, timeoutMs: 1000 })).toThrow(RangeError);
    expect(() => new Gateway({ engine, upstreams: [{ name: 'a', upstream: u }, { name: 'a', upstream: u }], spec: { name: 'x', mcp: {} }, timeoutMs: 1000 })).toThrow(/twice/);
  });
});

describe('tally mcp proxy --upstream name=… (twice), through the SDK Client', () => {
  it('serves both servers\' tools, an unoffered tool is refused isError, and the day verifies and replays', async () => {
    const TALLY = join(ROOT, 'dist/cli/main.js');
    const files = mkdtempSync(join(dir, 'cli-files-'));
    const db = join(dir, 'multi.db');
    const q = (argv: readonly string[]) => argv.map((a) => `'${a}'`).join(' ');
    const run = (args: string[]) => spawnSync(process.execPath, [TALLY, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, TALLY_NO_PROGRESS: '1' } });
    expect(run(['key', 'new']).status).toBe(0);
    const stderr: string[] = [];
    const t = new StdioClientTransport({
      command: process.execPath,
      args: [TALLY, 'mcp', 'proxy', '--db', db, '--upstream', `ev=${q(EVERYTHING)}`, '--upstream', `fs=${q(FILESYSTEM(files))}`],
      cwd: dir,
      stderr: 'pipe',
    });
    t.stderr?.on('data', (c: Buffer) => stderr.push(c.toString()));
    const c = new Client({ name: 'multi-test', version: '1' });
    await c.connect(t);
    const names = (await c.listTools()).tools.map((x) => x.name);
    expect(names).toContain('ev__get-sum');
    expect(names).toContain('fs__write_file');
    const sum = await c.callTool({ name: 'ev__get-sum', arguments: { a: 2, b: 3 } });
    expect(JSON.stringify(sum.content)).toContain('5');
    const written = join(files, 'b.txt');
    const w = await c.callTool({ name: 'fs__write_file', arguments: { path: written, content: 'two' } });
    expect(w.isError ?? false).toBe(false);
    expect(readFileSync(written, 'utf8')).toBe('two');
    const bad = await c.callTool({ name: 'fs__no_such_tool', arguments: {} });
    expect(bad.isError).toBe(true);
    await c.close();
    for (let i = 0; i < 200 && !stderr.join('').includes('"sealed"'); i++) await new Promise((r) => setTimeout(r, 50));
    const line = stderr.join('').split('\n').find((l) => l.includes('"event":"sealed"'));
    expect(line, stderr.join('')).toBeDefined();
    const sealed = JSON.parse(line!) as { sessionId: string; receiptRoot: string; turns: number; upstreamCalls: number };
    expect(sealed).toMatchObject({ turns: 3, upstreamCalls: 2 });
    const out = join(dir, 'multi-out');
    const e = run(['export', '--session', sealed.sessionId, '--out', out, '--db', db]);
    expect(e.status, e.stderr).toBe(0);
    expect(existsSync(join(out, 'bundle.jsonl'))).toBe(true);
    const v = run(['verify', join(out, 'bundle.jsonl'), '--root', sealed.receiptRoot]);
    expect(v.status, v.stderr + v.stdout).toBe(0);
    const r = run(['replay', join(out, 'bundle.jsonl')]);
    expect(r.status, r.stderr + r.stdout).toBe(0);
  }, 120_000);
});

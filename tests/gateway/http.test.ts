/**
 * Streamable HTTP on both sides, with the SDK's transports: the built
 * `tally mcp proxy --listen 127.0.0.1:0 --upstream-url <server-everything
 * over Streamable HTTP>`, driven by the SDK Client over
 * StreamableHTTPClientTransport. Results equal the direct ones; a second
 * agent session is refused; the agent's DELETE seals the day, which verifies
 * and replays.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

const TALLY = join(ROOT, 'dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'tally-gw-http-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const freePort = () =>
  new Promise<number>((r) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => r(p));
    });
  });

function start(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const c = spawn(process.execPath, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(c);
  let err = '';
  c.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const waitFor = async (re: RegExp): Promise<RegExpExecArray> => {
    for (let i = 0; i < 300; i++) {
      const m = re.exec(err);
      if (m) return m;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`timed out waiting for ${re}: ${err}`);
  };
  return { c, waitFor, stderr: () => err };
}

async function client(url: string): Promise<Client> {
  const c = new Client({ name: 'gateway-http-test', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  return c;
}

describe('tally mcp proxy over Streamable HTTP', () => {
  it('agent and upstream on Streamable HTTP: results unchanged, one agent per day, DELETE seals', async () => {
    const port = await freePort();
    const upstream = start([resolve(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'streamableHttp'], { ...process.env, PORT: String(port) });
    await upstream.waitFor(/listening on port/);
    const upstreamUrl = `http://127.0.0.1:${port}/mcp`;
    const db = join(dir, 'http.db');
    const proxy = start([TALLY, 'mcp', 'proxy', '--db', db, '--listen', '127.0.0.1:0', '--upstream-url', upstreamUrl]);
    const url = JSON.parse((await proxy.waitFor(/\{"event":"listening"[^\n]*\}/))[0]).url as string;
    const direct = await client(upstreamUrl);
    const agent = await client(url);
    for (const [name, args] of [['echo', { message: 'over http' }], ['get-sum', { a: 40, b: 2 }]] as const) {
      expect(await agent.callTool({ name, arguments: args })).toEqual(await direct.callTool({ name, arguments: args }));
    }
    const refused = await agent.callTool({ name: 'nope', arguments: {} });
    expect(refused.isError).toBe(true);
    await expect(client(url)).rejects.toThrow();
    await direct.close();
    const exited = new Promise<number | null>((r) => proxy.c.once('exit', (code) => r(code)));
    await (agent.transport as StreamableHTTPClientTransport).terminateSession();
    await agent.close();
    expect(await exited).toBe(0);
    const seal = JSON.parse(proxy.stderr().split('\n').find((l) => l.includes('"event":"sealed"'))!) as { sessionId: string; receiptRoot: string; reason: string };
    expect(seal.reason).toBe('agent-disconnected');
    const run = (args: string[]) => spawnSync(process.execPath, [TALLY, ...args], { cwd: dir, env: { ...process.env, npm_command: '' }, encoding: 'utf8' });
    expect(run(['key', 'new']).status).toBe(0);
    expect(run(['export', '--session', seal.sessionId, '--out', join(dir, 'out'), '--db', db]).status).toBe(0);
    expect(run(['verify', join(dir, 'out/bundle.jsonl'), '--root', seal.receiptRoot]).status).toBe(0);
    const r = run(['replay', join(dir, 'out/bundle.jsonl')]);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    upstream.c.kill('SIGTERM');
  }, 90_000);
});

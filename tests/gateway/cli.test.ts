/**
 * `tally mcp proxy` end to end, as an agent uses it: the official SDK Client
 * over StdioClientTransport starts the built CLI, which starts a real
 * upstream from npm (server-everything, server-filesystem). Allowed calls
 * come back exactly as the same server answers them directly; a refused
 * write leaves no file; the sealed day exports, verifies and replays with
 * the CLI. Needs `npm run build` (dist/), as tests/cli do.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import { EVERYTHING, FILESYSTEM, mandateSpec, ROOT } from './helpers.js';

const TALLY = join(ROOT, 'dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'tally-gw-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tally(args: string[]) {
  const r = spawnSync(process.execPath, [TALLY, ...args], { cwd: dir, env: { ...process.env, TALLY_NO_PROGRESS: '1', npm_command: '' }, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

async function connect(command: readonly string[], stderr?: string[]): Promise<Client> {
  const t = new StdioClientTransport({ command: command[0]!, args: command.slice(1), cwd: dir, stderr: 'pipe' });
  t.stderr?.on('data', (c: Buffer) => stderr?.push(c.toString()));
  const c = new Client({ name: 'gateway-test', version: '1' });
  await c.connect(t);
  return c;
}

/** Closes the agent side and waits for the proxy to print its seal. */
async function closeAndSeal(c: Client, stderr: string[]): Promise<{ sessionId: string; size: number; receiptRoot: string }> {
  await c.close();
  for (let i = 0; i < 100 && !stderr.join('').includes('"sealed"'); i++) await new Promise((r) => setTimeout(r, 50));
  const line = stderr.join('').split('\n').find((l) => l.includes('"event":"sealed"'));
  expect(line, stderr.join('')).toBeDefined();
  return JSON.parse(line!) as { sessionId: string; size: number; receiptRoot: string };
}

function exportVerifyReplay(db: string, sessionId: string, receiptRoot: string, out: string): string {
  const e = tally(['export', '--session', sessionId, '--out', out, '--db', db]);
  expect(e.code, e.stderr).toBe(0);
  const v = tally(['verify', join(out, 'bundle.jsonl'), '--root', receiptRoot]);
  expect(v.code, v.stderr + v.stdout).toBe(0);
  const r = tally(['replay', join(out, 'bundle.jsonl')]);
  expect(r.code, r.stderr + r.stdout).toBe(0);
  expect(r.stdout).toMatch(/rulings? re-derived/);
  return readFileSync(join(out, 'bundle.jsonl'), 'utf8');
}

describe('tally mcp proxy with real npm MCP servers', () => {
  expect(tally(['key', 'new']).code).toBe(0);

  it('server-everything: allowed results are unchanged, an unknown tool is refused, the day verifies and replays', async () => {
    const db = join(dir, 'everything.db');
    const direct = await connect(EVERYTHING);
    const stderr: string[] = [];
    const proxied = await connect([process.execPath, TALLY, 'mcp', 'proxy', '--db', db, '--', ...EVERYTHING], stderr);
    try {
      const names = (await proxied.listTools()).tools.map((t) => t.name);
      expect(names).toEqual((await direct.listTools()).tools.map((t) => t.name));
      for (const [name, args] of [['echo', { message: 'café ✓' }], ['get-sum', { a: 19, b: 23 }], ['get-tiny-image', {}], ['get-structured-content', { location: 'New York' }]] as const) {
        expect(await proxied.callTool({ name, arguments: args }), name).toEqual(await direct.callTool({ name, arguments: args }));
      }
      const refused = await proxied.callTool({ name: 'no-such-tool', arguments: {} });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toMatch(/tool_not_offered/);
    } finally {
      await direct.close();
    }
    const seal = await closeAndSeal(proxied, stderr);
    // genesis, OPEN frame, 5 calls × (turn, frame), the closing turn, the seal.
    expect(seal.size).toBe(2 + 2 * 5 + 2);
    const bundle = exportVerifyReplay(db, seal.sessionId, seal.receiptRoot, join(dir, 'out-everything'));
    expect(bundle).toContain('"kind":"mcp-open"');
  }, 90_000);

  it('server-filesystem under a signed mandate: a refused write_file leaves no file, an allowed one writes', async () => {
    const root = mkdtempSync(join(dir, 'files-'));
    const allowed = join(root, 'allowed.txt');
    const forbidden = join(root, 'forbidden.txt');
    const spec = mandateSpec({ allow: { write_file: { server: 'secure-filesystem-server', args: { path: { type: 'string', enum: [allowed] } } }, list_allowed_directories: {} } });
    const specFile = join(dir, 'fs-spec.json');
    writeFileSync(specFile, JSON.stringify(spec));
    const db = join(dir, 'fs.db');
    const stderr: string[] = [];
    const c = await connect([process.execPath, TALLY, 'mcp', 'proxy', '--db', db, '--mandate', specFile, '--', ...FILESYSTEM(root)], stderr);
    const no = await c.callTool({ name: 'write_file', arguments: { path: forbidden, content: 'x' } });
    expect(no.isError).toBe(true);
    expect(JSON.stringify(no.content)).toMatch(/tool_argument_refused.*path/);
    const read = await c.callTool({ name: 'read_text_file', arguments: { path: allowed } });
    expect(JSON.stringify(read.content)).toMatch(/tool_not_allowed/);
    const yes = await c.callTool({ name: 'write_file', arguments: { path: allowed, content: 'hello' } });
    expect(yes.isError).not.toBe(true);
    const seal = await closeAndSeal(c, stderr);
    expect(existsSync(forbidden)).toBe(false);
    expect(readFileSync(allowed, 'utf8')).toBe('hello');
    exportVerifyReplay(db, seal.sessionId, seal.receiptRoot, join(dir, 'out-fs'));
    // The same signed spec is one day: a second run refuses to record over it.
    const again = spawnSync(process.execPath, [TALLY, 'mcp', 'proxy', '--db', db, '--mandate', specFile, '--', ...FILESYSTEM(root)], { cwd: dir, input: '', encoding: 'utf8', timeout: 60_000 });
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/already exists/);
  }, 90_000);
});

describe('tally mcp proxy stops cleanly', () => {
  it('SIGTERM seals the day (reason signal) and the upstream child dies with the proxy', async () => {
    const { spawn } = await import('node:child_process');
    const { COUNTING } = await import('./helpers.js');
    const pidFile = join(dir, 'upstream.pid');
    const countFile = join(dir, 'sigterm-count.jsonl');
    writeFileSync(countFile, '');
    const db = join(dir, 'sigterm.db');
    const p = spawn(process.execPath, [TALLY, 'mcp', 'proxy', '--db', db, '--', ...COUNTING], { cwd: dir, env: { ...process.env, PID_FILE: pidFile, COUNT_FILE: countFile }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    p.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((r) => p.once('exit', (code) => r(code)));
    const send = (m: unknown) => p.stdin.write(JSON.stringify(m) + '\n');
    const waitFor = async (f: () => boolean) => {
      for (let i = 0; i < 200 && !f(); i++) await new Promise((r) => setTimeout(r, 50));
      expect(f(), out + err).toBe(true);
    };
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 } } });
    await waitFor(() => out.includes('"id":2'));
    expect(JSON.parse(out.split('\n').find((l) => l.includes('"id":2'))!)).toEqual({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: '3' }] } });
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    p.kill('SIGTERM');
    expect(await exited).toBe(0);
    const seal = JSON.parse(err.split('\n').find((l) => l.includes('"event":"sealed"'))!) as { reason: string; sessionId: string; receiptRoot: string };
    expect(seal.reason).toBe('signal');
    let alive = true;
    for (let i = 0; i < 60 && alive; i++) {
      try {
        process.kill(pid, 0);
        await new Promise((r) => setTimeout(r, 50));
      } catch {
        alive = false;
      }
    }
    expect(alive).toBe(false);
    exportVerifyReplay(db, seal.sessionId, seal.receiptRoot, join(dir, 'out-sigterm'));
  }, 60_000);
});

describe('tally mcp proxy --judge with tally judge serve', () => {
  it('server-everything: the judge ALLOWs echo, DENYs get-sum (never sent), a dead judge fails closed; the CLI replays', async () => {
    const { spawn } = await import('node:child_process');
    const { privateKeyToAccount } = await import('viem/accounts');
    const key = `0x${'0d'.repeat(32)}` as const;
    writeFileSync(join(dir, 'judge.key'), key + '\n', { mode: 0o600 });
    const judge = spawn(process.execPath, [TALLY, 'judge', 'serve', '--key', join(dir, 'judge.key'), '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        judge.stdout!.on('data', (c: Buffer) => {
          out += c.toString('utf8');
          const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        judge.once('exit', (code) => reject(new Error(`tally judge serve exited ${code}: ${out}`)));
      });
      const signer = privateKeyToAccount(key).address.toLowerCase();
      // The local rules model reads "never touch <name>" against the request's market (the tool).
      const judged = { rules: ['never touch get-sum'], judges: [signer] };
      const spec = mandateSpec({ allow: { echo: { ...judged }, 'get-sum': { ...judged } } });
      const specFile = join(dir, 'judged-spec.json');
      writeFileSync(specFile, JSON.stringify(spec));
      const db = join(dir, 'judged.db');
      const stderr: string[] = [];
      const c = await connect([process.execPath, TALLY, 'mcp', 'proxy', '--db', db, '--mandate', specFile, '--judge', `${url}/v1`, '--judge-signature-header', 'x-verdict-signature', '--', ...EVERYTHING], stderr);
      const yes = await c.callTool({ name: 'echo', arguments: { message: 'hi' } });
      expect(yes.isError, JSON.stringify(yes)).not.toBe(true);
      expect(JSON.stringify(yes.content)).toContain('hi');
      const no = await c.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
      expect(no.isError).toBe(true);
      expect(JSON.stringify(no.content)).toMatch(/judge_denied/);
      const seal = await closeAndSeal(c, stderr);
      const bundle = exportVerifyReplay(db, seal.sessionId, seal.receiptRoot, join(dir, 'out-judged'));
      expect(bundle).toContain('"code":"judge_denied"');
      expect(bundle).toContain('"decision":"ALLOW"');

      // A judge that is not there: the call is refused judge_unavailable and the day still replays.
      const spec2 = mandateSpec({ allow: { echo: { ...judged } } });
      writeFileSync(specFile, JSON.stringify(spec2));
      const stderr2: string[] = [];
      const c2 = await connect([process.execPath, TALLY, 'mcp', 'proxy', '--db', db, '--mandate', specFile, '--judge', 'http://127.0.0.1:9/v1', '--judge-signature-header', 'x-verdict-signature', '--judge-timeout', '2000', '--', ...EVERYTHING], stderr2);
      const dead = await c2.callTool({ name: 'echo', arguments: { message: 'hi' } });
      expect(dead.isError).toBe(true);
      expect(JSON.stringify(dead.content)).toMatch(/judge_unavailable/);
      const seal2 = await closeAndSeal(c2, stderr2);
      exportVerifyReplay(db, seal2.sessionId, seal2.receiptRoot, join(dir, 'out-judged-dead'));
    } finally {
      const done = new Promise((r) => judge.once('exit', r));
      judge.kill('SIGTERM');
      await done;
    }
  }, 120_000);
});

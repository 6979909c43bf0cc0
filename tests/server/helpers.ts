/**
 * Test harness for the wire: `tally serve` started as a real child process
 * (the built binary, as a user runs it), tokens made with the real hashing,
 * and raw JSON-RPC over loopback HTTP.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { hashToken } from '../../src/server/auth.js';

/** Path of the built `tally` executable. */
export const TALLY = resolve(import.meta.dirname, '../../dist/cli/main.js');

const dirs: string[] = [];

/** Creates an engine key at `path` as a user does, on purpose (`tally key new`); returns its verifier key. */
export function newEngineKey(path: string, name?: string): string {
  return execFileSync(process.execPath, [TALLY, 'key', 'new', '--key', path, ...(name === undefined ? [] : ['--name', name])], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** A fresh temporary directory (removed by {@link cleanup}). */
export function tempDir(tag: string): string {
  const d = mkdtempSync(join(tmpdir(), `tally-wire-${tag}-`));
  dirs.push(d);
  return d;
}

/** Removes every directory made by {@link tempDir}. */
export function cleanup(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** The tokens every test server accepts. */
export const TOKENS = {
  runtime: 'tly_test_runtime_0123456789abcdef0123456789',
  alpha: 'tly_test_agent_alpha_0123456789abcdef012345',
  beta: 'tly_test_agent_beta_0123456789abcdef0123456',
  auditor: 'tly_test_auditor_0123456789abcdef0123456789',
} as const;

/** The keys the agent tokens are bound to: Anvil #0 and #1, the signers of tests/rules/fixtures.ts's alpha and beta. */
export const SIGNERS = {
  alpha: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
  beta: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
} as const;

/** The auth config document for {@link TOKENS} (hashes only). */
export function authDoc(extra: Record<string, unknown>[] = []): { tokens: Record<string, unknown>[] } {
  return {
    tokens: [
      { name: 'runtime', role: 'runtime', sha256: hashToken(TOKENS.runtime) },
      { name: 'alpha', role: 'agent', agents: ['alpha'], signer: SIGNERS.alpha, sha256: hashToken(TOKENS.alpha) },
      { name: 'beta', role: 'agent', agents: ['beta'], signer: SIGNERS.beta, sha256: hashToken(TOKENS.beta) },
      { name: 'auditor', role: 'auditor', sha256: hashToken(TOKENS.auditor) },
      ...extra,
    ],
  };
}

/** A running `tally serve`. */
export interface ServerProc {
  readonly url: string;
  readonly port: number;
  readonly proc: ChildProcess;
  /** Everything the server wrote to stderr so far (JSON log lines). */
  stderr(): string;
  stdout(): string;
  /** Resolves once `pred` holds for the stderr so far (checked on every chunk the server writes); rejects if it exits first. */
  untilStderr(pred: (stderr: string) => boolean): Promise<void>;
  /** Sends `signal` and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves with the exit code when the process ends. */
  readonly exited: Promise<number | null>;
}

/** Starts `tally serve --port 0` and waits for its "listening on" line. */
export async function startServer(opts: { db?: string; args?: string[]; env?: Record<string, string>; auth?: object; dir?: string; port?: number } = {}): Promise<ServerProc> {
  const dir = opts.dir ?? tempDir('srv');
  const authFile = join(dir, `auth-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(authFile, JSON.stringify(opts.auth ?? authDoc()));
  const args = [TALLY, 'serve', '--port', String(opts.port ?? 0), '--auth', authFile, '--db', opts.db ?? join(dir, 'tally.db'), ...(opts.args ?? [])];
  const proc = spawn(process.execPath, args, { env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  // Waits for the event (listening, or exit), not for a while: on a loaded machine a start may be slow,
  // and a start that never comes is the test's own timeout.
  const url = await new Promise<string>((resolveUrl, reject) => {
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolveUrl(m[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`server exited with ${code} before listening:\n${err}`)));
  });
  return {
    url,
    port: Number(new URL(url).port),
    proc,
    stderr: () => err,
    stdout: () => out,
    untilStderr: (pred) =>
      new Promise<void>((resolveWait, rejectWait) => {
        const check = (): void => {
          if (!pred(err)) return;
          proc.stderr!.off('data', check);
          resolveWait();
        };
        proc.stderr!.on('data', check);
        void exited.then(() => rejectWait(new Error(`server exited before the awaited log output:\n${err}`)));
        check();
      }),
    exited,
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill(signal);
      return exited;
    },
  };
}

let rpcId = 1;

/** A JSON-RPC response body as the tests read it. */
export interface RpcBody {
  readonly jsonrpc?: string;
  readonly id?: unknown;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code: number; readonly message: string; readonly data: Record<string, unknown> & { readonly type: string; readonly retryable: boolean } };
}

/** A raw JSON-RPC call: the HTTP status and the parsed response. */
export async function rpc(url: string, token: string | undefined, method: string, params: unknown): Promise<{ status: number; body: RpcBody; headers: Headers }> {
  const res = await fetch(`${url}/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method, params }),
  });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as RpcBody, headers: res.headers };
}

/** POSTs a raw body to /rpc. */
/**
 * Opens a session on the server at `url` as the runtime and returns a
 * function that appends one frame and its authored turn (ordinals -1, 0, 1, …).
 */
export async function liveSession(url: string, name: string): Promise<{ sid: string; step: () => Promise<void> }> {
  const open = await rpc(url, TOKENS.runtime, 'session/open', { spec: { name } });
  const sid = open.body.result!['sessionId'] as string;
  let ord = -1;
  const step = async (): Promise<void> => {
    const f = await rpc(url, TOKENS.runtime, 'session/frame', { sessionId: sid, ordinal: ord, time: 1_000 + (ord + 1) * 60_000, data: { n: ord } });
    const fr = f.body.result!;
    await rpc(url, TOKENS.runtime, 'session/turn', { sessionId: sid, ordinal: ord, parentHash: fr['entryHash'], frameRoot: fr['frameRoot'], body: { kind: 'authored', text: `turn ${ord}` } });
    ord++;
  };
  return { sid, step };
}

export async function post(url: string, token: string | undefined, body: string | Uint8Array, contentType = 'application/json'): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(`${url}/rpc`, {
    method: 'POST',
    headers: { 'content-type': contentType, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // keep text
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** A GET with a token. */
export async function get(url: string, token: string | undefined, path: string): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(url + path, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

/** Unwraps a JSON-RPC result (fails the test with the error otherwise). */
export function ok<T = Record<string, unknown>>(r: { status: number; body: RpcBody }): T {
  if (r.status !== 200 || r.body?.result === undefined) throw new Error(`expected a result, got HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body.result as T;
}

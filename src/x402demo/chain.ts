/**
 * A local EVM for the x402 demo and tests: Hardhat 3's simulated network (EDR, chain id 31337,
 * the 20 public test accounts) served as JSON-RPC over HTTP on 127.0.0.1 at an ephemeral port,
 * in a child process. Hardhat's own `hardhat node` command refuses Node 20 while its network runs
 * there, so the child serves the provider itself ({@link CHAIN_SCRIPT}). It prints
 * `listening <port>` once and exits when its parent closes stdin (so a parent killed by any
 * signal, SIGKILL included, leaves no chain behind), or on SIGTERM/SIGINT.
 *
 * The chain not starting is a typed error (`TALLY_DEMO_CHAIN`), never a skip.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TallyError } from '../protocol/index.js';

/** The child's program: argv[1] is the file URL of `hardhat/hre`. Run with `node --input-type=module -e`. */
export const CHAIN_SCRIPT = `
import { createServer } from 'node:http';
const { createHardhatRuntimeEnvironment } = await import(process.argv[1]);
const hre = await createHardhatRuntimeEnvironment({}, {}, process.cwd());
const { provider } = await hre.network.connect();
async function answer(call) {
  const id = call?.id ?? null;
  try {
    const result = await provider.request({ method: call.method, params: call.params ?? [] });
    return { jsonrpc: '2.0', id, result: result ?? null };
  } catch (e) {
    const data = e?.data;
    return { jsonrpc: '2.0', id, error: { code: typeof e?.code === 'number' ? e.code : -32603, message: String(e?.message ?? e), ...(data === undefined ? {} : { data }) } };
  }
}
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    let body;
    try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { res.writeHead(400).end(); return; }
    const out = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body);
    const text = JSON.stringify(out, (_k, v) => (typeof v === 'bigint' ? '0x' + v.toString(16) : v));
    res.writeHead(200, { 'content-type': 'application/json' }).end(text);
  });
});
server.keepAliveTimeout = 1000;
server.listen(0, '127.0.0.1', () => process.stdout.write('listening ' + server.address().port + '\\n'));
const stop = () => { server.close(() => process.exit(0)); server.closeAllConnections(); setTimeout(() => process.exit(0), 500).unref(); };
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
`;

export interface LocalChain {
  readonly url: string;
  readonly port: number;
  /** The child's process id. */
  readonly pid: number;
  /** Ends the child (stdin closed, SIGKILL after 3 s) and removes its scratch directory. */
  stop(): Promise<void>;
}

export interface StartChainOptions {
  /** How long the child may take to listen (default 60 000 ms). */
  readonly timeoutMs?: number;
  /** The module the child loads as `hardhat/hre` (default: resolved from this package). */
  readonly hre?: string;
}

/**
 * Hardhat's native EDR binary for this platform. It asks Node 22, so npm on Node 20 skips it as an
 * optional dependency of hardhat: it must be named (the clone pins it as a devDependency).
 */
export function edrBinaryPackage(platform: string = process.platform, arch: string = process.arch): string {
  const suffix = platform === 'linux' ? '-gnu' : platform === 'win32' ? '-msvc' : '';
  return `@nomicfoundation/edr-${platform}-${arch}${suffix}@0.22.0`;
}

/** Where `hardhat/hre` is, as a file URL; a typed error when hardhat is not installed. */
export function hardhatHre(): string {
  try {
    return pathToFileURL(createRequire(import.meta.url).resolve('hardhat/hre')).href;
  } catch (e) {
    throw new TallyError('TALLY_DEMO_X402_DEPS', 'the local chain needs hardhat, which is not installed', { details: (e as Error).message });
  }
}

/** Starts the chain process and waits for its port. */
export async function startChain(options: StartChainOptions = {}): Promise<LocalChain> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  // Hardhat's project root: a scratch directory, so nothing it may cache lands in the user's.
  const scratch = mkdtempSync(join(tmpdir(), 'tally-x402-chain-'));
  writeFileSync(join(scratch, 'package.json'), '{"name":"tally-x402-chain","private":true,"type":"module"}\n');
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHAIN_SCRIPT, options.hre ?? hardhatHre()], {
    cwd: scratch,
    // Loopback only: no telemetry (it is off without a TTY anyway; this says so).
    env: { ...process.env, HARDHAT_DISABLE_TELEMETRY: 'true' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const kill = setTimeout(() => child.kill('SIGKILL'), 3000);
      child.stdin!.end();
      await exited;
      clearTimeout(kill);
    }
    rmSync(scratch, { recursive: true, force: true });
  };
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err = (err + c.toString('utf8')).slice(-4000)));
  try {
    const port = await new Promise<number>((ok, fail) => {
      let out = '';
      const timer = setTimeout(() => fail(new TallyError('TALLY_DEMO_CHAIN', `the local chain (Hardhat network) did not start in ${timeoutMs} ms`, { details: err.trim() })), timeoutMs);
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString('utf8');
        const m = /listening (\d+)\n/.exec(out);
        if (m) {
          clearTimeout(timer);
          ok(Number(m[1]));
        }
      });
      child.once('error', (e) => {
        clearTimeout(timer);
        fail(new TallyError('TALLY_DEMO_CHAIN', 'the local chain (Hardhat network) could not be started', { details: e.message }));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (/Cannot find native binding/.test(err)) {
          return fail(new TallyError('TALLY_DEMO_X402_DEPS', `the local chain needs hardhat's native EDR binary, which npm did not install (on Node 20 it skips it: the binary asks Node 22). Install it with: npm install ${edrBinaryPackage()}`));
        }
        fail(new TallyError('TALLY_DEMO_CHAIN', `the local chain (Hardhat network) exited (${signal ?? code}) before listening`, { details: err.trim().split('\n').slice(-3).join(' | ') }));
      });
    });
    return { url: `http://127.0.0.1:${port}`, port, pid: child.pid!, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

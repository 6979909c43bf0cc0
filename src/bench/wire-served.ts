/**
 * Wire benchmark across processes: `tally serve` (auth, limits and info logs
 * on) in its own process and the clients (the client library's default
 * keep-alive transport) in another, beside a minimal node:http JSON-RPC echo
 * server driven by the same client code in the same run. The memory store is
 * the headline; SQLite and PostgreSQL (when `TALLY_PG_URL` is set) are beside
 * it. `TALLY_BENCH_PROF=<dir>` adds `--cpu-prof` to every child.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pgClient from 'pg';
import { generateToken, hashToken } from '../server/auth.js';
import type { Figure } from './core.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Options of {@link benchWireServed}. */
export interface BenchWireServedOptions {
  readonly turns?: number;
  readonly concurrency?: number;
  readonly maxMs?: number;
  /** PostgreSQL URL (default `TALLY_PG_URL`; unset: no PostgreSQL figure). */
  readonly postgresUrl?: string;
}

/** One client run's figures. */
export interface ClientRun {
  readonly turns: number;
  readonly failures: number;
  readonly seconds: number;
  readonly turnsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Turns sent before the clock started (JIT, lazily loaded modules), and their p99. */
  readonly warmupTurns: number;
  readonly warmupP99Ms: number;
}

function profArgs(tag: string): string[] {
  const dir = process.env['TALLY_BENCH_PROF'];
  return dir ? ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-name', `${tag}-${Date.now()}.cpuprofile`] : [];
}

/** Starts a child that prints `listening on <url>`; resolves with the url. */
function startChild(args: readonly string[], env: NodeJS.ProcessEnv, stderrFd: number | 'ignore'): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', stderrFd] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ child, url: m[1]! });
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${String(code)} before listening`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

function runClients(job: Record<string, unknown>, tag: string): Promise<ClientRun> {
  const child = spawn(process.execPath, [...profArgs(`clients-${tag}`), join(here, 'wire-clients.js'), JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => (out += d));
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`wire clients exited ${String(code)}`));
      resolve(JSON.parse(out.trim()) as ClientRun);
    });
  });
}

/** Drops the schema the served PostgreSQL run created (the bench leaves nothing behind). */
async function dropSchema(url: string, schema: string): Promise<void> {
  const c = new pgClient.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`DROP SCHEMA IF EXISTS ${pgClient.escapeIdentifier(schema)} CASCADE`);
  } finally {
    await c.end();
  }
}

const round = (x: number, d = 2): number => Math.round(x * 10 ** d) / 10 ** d;

/**
 * Runs the echo limit, then `tally serve` on each store, each with the same
 * client process job. Prints nothing.
 *
 * @example
 * const { figures } = await benchWireServed({ turns: 4000 });
 */
export async function benchWireServed(options: BenchWireServedOptions = {}): Promise<{ figures: Figure[]; runs: Record<string, ClientRun> }> {
  const turns = options.turns ?? 6_000;
  const concurrency = options.concurrency ?? 16;
  const maxMs = options.maxMs ?? 10_000;
  const pg = options.postgresUrl ?? process.env['TALLY_PG_URL'];  // '' turns PostgreSQL off
  const token = generateToken();
  const dir = mkdtempSync(join(tmpdir(), 'tally-bench-wire-'));
  const runs: Record<string, ClientRun> = {};
  try {
    const echo = await startChild([...profArgs('echo'), join(here, 'echo-server.js')], process.env, 'ignore');
    try {
      runs['echo'] = await runClients({ url: echo.url, token, turns, concurrency, maxMs }, 'echo');
    } finally {
      await stop(echo.child);
    }
    const stores: [string, string][] = [
      ['memory', 'memory:'],
      ['sqlite', join(dir, 'bench.db')],
    ];
    const pgSchema = `bench_wire_${process.pid}_${Date.now()}`;
    if (pg) stores.push(['postgres', `${pg}${pg.includes('?') ? '&' : '?'}schema=${pgSchema}`]);
    const env = { ...process.env, TALLY_TOKENS: JSON.stringify({ tokens: [{ name: 'bench', role: 'runtime', sha256: hashToken(token) }] }) };
    for (const [name, db] of stores) {
      const logFd = openSync(join(dir, `${name}.log`), 'w');
      try {
        const served = await startChild([...profArgs(`serve-${name}`), join(here, '..', 'cli', 'main.js'), 'serve', '--port', '0', '--db', db, '--rate', '1000000', '--burst', '1000000', '--log-level', 'info'], env, logFd);
        try {
          runs[name] = await runClients({ url: served.url, token, turns, concurrency, maxMs }, name);
        } finally {
          await stop(served.child);
        }
      } finally {
        closeSync(logFd);
        if (name === 'postgres' && pg) await dropSchema(pg, pgSchema);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const e = runs['echo']!;
  const figures: Figure[] = [];
  for (const name of ['memory', 'sqlite', 'postgres']) {
    const r = runs[name];
    if (!r) continue;
    figures.push({
      name: `tally serve turns, ${name} store (${concurrency} clients, other process)`,
      perSecond: Math.round(r.turnsPerSecond),
      baselineName: 'node:http JSON-RPC echo, same clients',
      baselinePerSecond: Math.round(e.turnsPerSecond),
      ratio: round(r.turnsPerSecond / e.turnsPerSecond, 3),
      note: `p50 ${round(r.p50Ms)} ms, p99 ${round(r.p99Ms)} ms (cold: p99 ${round(r.warmupP99Ms)} ms over the ${r.warmupTurns} warm-up turns before the clock), failures ${r.failures}; echo p50 ${round(e.p50Ms)} ms, p99 ${round(e.p99Ms)} ms; each turn is a frame and a turn round trip`,
    });
  }
  return { figures, runs };
}

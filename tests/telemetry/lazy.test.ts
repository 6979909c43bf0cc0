/**
 * Who pays for the SDK: a module-resolution hook records every
 * `@opentelemetry/*` package a process resolves. `tally --help` resolves none;
 * the library and `tally verify` resolve only `@opentelemetry/api`; `tally
 * serve` adds the metrics pieces for /metrics, and only `--otel` the tracing
 * SDK and the OTLP exporters.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runDay } from '../helpers/day.js';
import { authDoc } from '../server/helpers.js';

const root = resolve(import.meta.dirname, '../..');
const TALLY = join(root, 'dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'tally-lazy-'));
writeFileSync(join(dir, 'hooks.mjs'), "export async function resolve(s, c, next) { const r = await next(s, c); if (s.startsWith('@opentelemetry/')) process.stderr.write(`RESOLVED ${s.split('/').slice(0, 2).join('/')}\\n`); return r; }\n");
writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});\n`);
const IMPORT = ['--import', pathToFileURL(join(dir, 'register.mjs')).href];

const resolved = (stderr: string): string[] => [...new Set([...stderr.matchAll(/^RESOLVED (\S+)$/gm)].map((m) => m[1]!))].sort();

/** Runs `tally …` to completion and returns the @opentelemetry packages it resolved. */
function packagesOf(args: string[]): string[] {
  const r = spawnSync(process.execPath, [...IMPORT, TALLY, ...args], { cwd: root, encoding: 'utf8', env: { ...process.env, TALLY_NO_PROGRESS: '1' } });
  // A crash resolves nothing too: only a run that did its work counts.
  expect(r.status, r.stderr).toBe(0);
  return resolved(r.stderr);
}

/** Starts `tally serve …`, waits until it listens, stops it, and returns what it resolved. */
async function servePackages(extra: string[]): Promise<string[]> {
  const auth = join(dir, 'auth.json');
  writeFileSync(auth, JSON.stringify(authDoc()));
  const p = spawn(process.execPath, [...IMPORT, TALLY, 'serve', '--port', '0', '--db', 'memory:', '--auth', auth, '--log-level', 'silent', ...extra], {
    cwd: root,
    env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' },
  });
  let err = '';
  p.stderr.on('data', (c: Buffer) => (err += c.toString()));
  await new Promise<void>((ok) => p.stdout.on('data', (c: Buffer) => c.toString().includes('listening on') && ok()));
  p.kill('SIGTERM');
  await new Promise((ok) => p.once('exit', ok));
  return resolved(err);
}

describe('the SDK loads only where it is used', () => {
  it('tally --help resolves no OpenTelemetry package', () => {
    expect(packagesOf(['--help'])).toEqual([]);
  });

  it('tally verify (the library) resolves only the API', async () => {
    const { bundle } = await runDay({ wakes: 2 });
    const file = join(dir, 'day.jsonl');
    writeFileSync(file, bundle);
    expect(packagesOf(['verify', file])).toEqual(['@opentelemetry/api']);
  });

  it('tally serve adds the metrics pieces; --otel adds tracing and the OTLP exporters', async () => {
    const plain = await servePackages([]);
    expect(plain).toContain('@opentelemetry/sdk-metrics');
    expect(plain).toContain('@opentelemetry/exporter-prometheus');
    expect(plain).not.toContain('@opentelemetry/sdk-trace-node');
    expect(plain).not.toContain('@opentelemetry/exporter-trace-otlp-http');
    const otel = await servePackages(['--otel']);
    for (const p of ['@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/exporter-metrics-otlp-http']) expect(otel).toContain(p);
  }, 30_000);
});

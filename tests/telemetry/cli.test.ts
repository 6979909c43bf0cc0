/** `tally serve`'s observability options from outside: refusals are exit code 2 with one line on stderr. */
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { authDoc, cleanup, tempDir } from '../server/helpers.js';

const TALLY = resolve(import.meta.dirname, '../../dist/cli/main.js');
afterAll(cleanup);

function serve(args: string[], env: Record<string, string> = {}): { status: number | null; stderr: string; stdout: string } {
  const dir = tempDir('otel-cli');
  const auth = join(dir, 'auth.json');
  writeFileSync(auth, JSON.stringify(authDoc()));
  const r = spawnSync(process.execPath, [TALLY, 'serve', '--db', 'memory:', '--port', '0', '--auth', auth, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 20_000 });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

describe('tally serve --otel / --metrics-bind', () => {
  it('refuses an OTLP protocol other than http/json', () => {
    const r = serve(['--otel'], { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^tally serve: OTEL_EXPORTER_OTLP_PROTOCOL must be http\/json .*got "grpc"/m);
    expect(r.stdout).toBe('');
  });

  it('refuses a malformed OTEL_METRIC_EXPORT_INTERVAL', () => {
    const r = serve(['--otel'], { OTEL_METRIC_EXPORT_INTERVAL: '1e3' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^tally serve: OTEL_METRIC_EXPORT_INTERVAL must be an integer/m);
  });

  it('refuses a malformed --metrics-bind before starting', () => {
    for (const bad of ['9464', '127.0.0.1', 'host:99999', 'a b:1']) {
      const r = serve(['--metrics-bind', bad]);
      expect(r.status, bad).toBe(2);
      expect(r.stderr).toMatch(/^tally serve: --metrics-bind must be <host>:<port>/m);
    }
  });
});

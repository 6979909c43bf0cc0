/**
 * `tally serve` from the command line: making token config lines, refusing
 * to start without tokens or with a bad config, a port that is taken.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Authenticator, hashToken, parseAuthConfig } from '../../src/server/auth.js';
import { tally } from '../cli/helpers.js';
import { cleanup, startServer, tempDir } from './helpers.js';

afterAll(cleanup);

describe('tally serve (command line)', () => {
  it('--hash-token prints a config entry holding only the hash; - reads the token from stdin', () => {
    const token = 'tly_cli_test_token_0123456789abcdef';
    const signer = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
    const r = tally(['serve', '--hash-token', token, '--role', 'agent', '--agent', 'alpha', '--agent', 'beta', '--signer', signer, '--name', 'desk']);
    expect(r.code).toBe(0);
    const entry = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(entry).toEqual({ name: 'desk', role: 'agent', agents: ['alpha', 'beta'], signer, sha256: hashToken(token) });
    // An agent token is bound to a key: without --signer it is refused (a name alone proves nothing).
    const unbound = tally(['serve', '--hash-token', token, '--role', 'agent', '--agent', 'alpha']);
    expect(unbound.code).toBe(2);
    expect(unbound.stderr).toContain('--signer');
    expect(r.stdout).not.toContain(token);
    const viaStdin = tally(['serve', '--hash-token', '-', '--role', 'auditor'], { input: token + '\n' });
    expect(viaStdin.code).toBe(0);
    expect(JSON.parse(viaStdin.stdout)).toMatchObject({ role: 'auditor', sha256: hashToken(token) });
  });

  it('--new-token prints a fresh token and the entry that accepts it', () => {
    const r = tally(['serve', '--new-token', '--role', 'runtime', '--name', 'rt']);
    expect(r.code).toBe(0);
    const [token, line] = r.stdout.trim().split('\n');
    expect(token).toMatch(/^tly_[A-Za-z0-9_-]{43}$/);
    const cfg = parseAuthConfig({ tokens: [JSON.parse(line!)] });
    if (!cfg.ok) throw new Error(cfg.problem);
    expect(new Authenticator(cfg.config).principalOf(token!)?.name).toBe('rt');
    expect(r.stderr).toContain('shown once');
  });

  it('refuses bad token requests and starts without tokens never', () => {
    expect(tally(['serve', '--hash-token', 'short']).code).toBe(2);
    expect(tally(['serve', '--hash-token', 'tly_long_enough_token_000', '--role', 'agent']).code).toBe(2);
    expect(tally(['serve', '--hash-token', 'tly_long_enough_token_000', '--role', 'admin']).code).toBe(2);
    const none = tally(['serve', '--db', 'memory:'], { env: { TALLY_AUTH_FILE: '', TALLY_TOKENS: '' } });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('No tokens are configured');
    const dir = tempDir('cli');
    const bad = join(dir, 'auth.json');
    writeFileSync(bad, JSON.stringify({ tokens: [{ name: 'x', role: 'runtime', sha256: 'tly_plaintext_token' }] }));
    const r = tally(['serve', '--db', 'memory:', '--auth', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('sha256');
    expect(r.stderr).not.toContain('tly_plaintext_token');
    expect(tally(['serve', '--db', 'memory:', '--auth', join(dir, 'missing.json')]).code).toBe(2);
    expect(tally(['serve', '--port', '70000'], { env: { TALLY_TOKENS: JSON.stringify([{ name: 'x', role: 'runtime', sha256: hashToken('y'.repeat(20)) }]) } }).code).toBe(2);
  });

  it('reads tokens from TALLY_TOKENS, and exits 3 when the port is taken', async () => {
    const srv = await startServer({ db: 'memory:' });
    try {
      const env = { TALLY_TOKENS: JSON.stringify({ tokens: [{ name: 'x', role: 'runtime', sha256: hashToken('y'.repeat(20)) }] }) };
      const r = tally(['serve', '--db', 'memory:', '--port', String(srv.port)], { env });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('cannot listen');
    } finally {
      await srv.stop();
    }
  });

  it('--help documents the routes, the limits and the exit codes', () => {
    const r = tally(['serve', '--help']);
    expect(r.code).toBe(0);
    for (const s of ['POST /rpc', '--auth', '--hash-token', '--max-body', '--rate', 'SIGTERM', 'Exit codes']) expect(r.stdout).toContain(s);
    expect(tally(['mcp', '--help']).stdout).toContain('isError: true');
  });
});

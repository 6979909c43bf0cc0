/**
 * No key by surprise: creating the engine key is one explicit act (`tally key
 * new`); every command that signs or prints the engine key refuses a missing
 * one with exit 3 and writes nothing; the key directory is owner-only even
 * when the store made it first.
 */
import { existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tally } from './helpers.js';

const fresh = () => mkdtempSync(join(tmpdir(), 'tally-cli-key-'));

describe('tally key new', () => {
  it('creates the key on purpose, names the file and key id on stderr, prints the verifier key, and never replaces it', () => {
    const dir = fresh();
    const made = tally(['key', 'new', '--name', 'tally.example/desk'], { cwd: dir, env: { TALLY_KEY: '' } });
    expect(made.code, made.stderr).toBe(0);
    const vkey = made.stdout.trim();
    expect(vkey).toMatch(/^tally\.example\/desk\+([0-9a-f]{8})\+A[A-Za-z0-9+/]{43}$/);
    const path = join(dir, '.tally', 'engine.key');
    expect(made.stderr).toContain(`created engine key ${path}`);
    expect(made.stderr).toContain(`key id ${vkey.split('+')[1]}`);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, '.tally')).mode & 0o777).toBe(0o700);
    expect(tally(['checkpoint', '--print-key'], { cwd: dir, env: { TALLY_KEY: '' } }).stdout.trim()).toBe(vkey);
    const again = tally(['key', 'new', '--json'], { cwd: dir, env: { TALLY_KEY: '' } });
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: false, code: 'TALLY_KEY_EXISTS', verifierKey: vkey });
  });

  it('the key directory is 0700 even when the store created it first', () => {
    const dir = fresh();
    expect(tally(['open', '--name', 'desk-1'], { cwd: dir, env: { TALLY_DB: '', TALLY_KEY: '' } }).code).toBe(0);
    expect(statSync(join(dir, '.tally')).mode & 0o777).toBe(0o700);
    expect(tally(['key', 'new'], { cwd: dir, env: { TALLY_KEY: '' } }).code).toBe(0);
    expect(statSync(join(dir, '.tally')).mode & 0o777).toBe(0o700);
  });

  it('checkpoint --print-key, checkpoint, export, serve --key and mcp --key refuse a missing key (exit 3) and create none', () => {
    const dir = fresh();
    const typo = join(dir, 'typo', 'engin.key');
    const env = { TALLY_KEY: typo, TALLY_DB: join(dir, 'day.db') };
    const sid = (JSON.parse(tally(['open', '--name', 'desk-1', '--json'], { cwd: dir, env }).stdout) as { sessionId: string }).sessionId;
    for (const args of [
      ['checkpoint', '--print-key'],
      ['checkpoint', '--session', sid],
      ['export', '--session', sid, '--out', 'out', '--unsealed'],
      ['serve', '--db', 'memory:', '--port', '0', '--key', typo],
      ['mcp', '--db', 'memory:', '--key', typo],
    ]) {
      const r = tally(args, { cwd: dir, env: { ...env, TALLY_TOKENS: JSON.stringify({ tokens: [{ name: 'a', role: 'auditor', sha256: 'ab'.repeat(32) }] }) } });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(3);
      expect(r.stderr).toContain('key new');
      expect(r.stdout).toBe('');
    }
    expect(existsSync(join(dir, 'typo'))).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(['day.db', 'day.db-shm', 'day.db-wal'].filter((f) => existsSync(join(dir, f))));
  });
});

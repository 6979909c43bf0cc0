/**
 * `tally judge keygen`, like `witness keygen` and `grade key`: creates the
 * judge's secp256k1 key owner-only, never replaces it, and prints the signer
 * address a mandate names; `judge serve` with that key signs as that address.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TALLY, tally } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-judge-keygen-'));

describe('tally judge keygen', () => {
  it('creates the key owner-only, prints its address, and never replaces it', async () => {
    const key = join(dir, 'keys', 'judge.key');
    const r = tally(['judge', 'keygen', '--key', key]);
    expect(r.code, r.stderr).toBe(0);
    const address = r.stdout.trim();
    expect(address).toMatch(/^0x[0-9a-f]{40}$/);
    expect(r.stderr).toContain(`created judge key ${key}`);
    expect(statSync(key).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'keys')).mode & 0o777).toBe(0o700);
    expect(readFileSync(key, 'utf8')).toMatch(/^0x[0-9a-f]{64}\n$/);
    // The same address another command derives from the same file.
    expect(tally(['intent', 'address', '--key', key]).stdout.trim().toLowerCase()).toBe(address);
    const before = readFileSync(key, 'utf8');
    const again = tally(['judge', 'keygen', '--key', key, '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ ok: true, created: false, path: key, address });
    expect(again.stderr).toBe('');
    expect(readFileSync(key, 'utf8')).toBe(before);

    // judge serve signs as the address keygen printed.
    const child = spawn(process.execPath, [TALLY, 'judge', 'serve', '--key', key, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(out);
        });
        child.once('exit', (code) => reject(new Error(`judge serve exited ${code}`)));
      });
      expect(line).toMatch(new RegExp(`signer ${address}\\n`));
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('needs --key (or $TALLY_JUDGE_KEY_FILE), and an unreadable existing key is refused', () => {
    const r = tally(['judge', 'keygen'], { env: { TALLY_JUDGE_KEY_FILE: '' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('tally judge keygen needs --key <file>');
    const dirAsKey = tally(['judge', 'keygen', '--key', dir]);
    expect(dirAsKey.code).toBe(3);
  });
});

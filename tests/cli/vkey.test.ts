/**
 * `--vkey` names a verifier key, `--key` a private key file: the commands that
 * take a verifier key (verify, replay, verify-proof, prove, view, monitor,
 * consistency verify, grade verify) take --vkey, and still accept the old
 * --key for one release with a one-line notice on stderr.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tally } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-vkey-'));

describe('--vkey and the old --key', () => {
  it('verify and replay: --vkey works silently, --key works with one notice line, both at once is a usage error', () => {
    const demo = tally(['demo', '--out', join(dir, 'demo'), '--wakes', '4', '--json']);
    expect(demo.code, demo.stderr).toBe(0);
    const d = join(dir, 'demo');
    const vkey = join(d, 'engine.vkey');
    for (const cmd of ['verify', 'replay']) {
      const now = tally([cmd, join(d, 'bundle.jsonl'), '--vkey', vkey, '--checkpoint', join(d, 'receipt.note')]);
      expect(now.code, now.stderr).toBe(0);
      expect(now.stderr).toBe('');
      expect(now.stdout).toMatch(/valid, pinned to the checkpoint/);
      const old = tally([cmd, join(d, 'bundle.jsonl'), '--key', vkey, '--checkpoint', join(d, 'receipt.note')]);
      expect(old.code, old.stderr).toBe(0);
      expect(old.stdout).toBe(now.stdout);
      expect(old.stderr).toBe(`tally ${cmd}: --key here is now --vkey (a verifier key, not a private key file); --key is accepted until the next release\n`);
      const both = tally([cmd, join(d, 'bundle.jsonl'), '--key', vkey, '--vkey', vkey, '--checkpoint', join(d, 'receipt.note')]);
      expect(both.code).toBe(2);
      expect(both.stderr).toContain('give --vkey only');
    }
  });

  it('grade and consistency rename --key only where it is a verifier key (verify), not where it is a key file', () => {
    const key = join(dir, 'grader.key');
    const g = tally(['grade', 'key', '--key', key, '--name', 'grader.example']);
    expect(g.code, g.stderr).toBe(0);
    expect(g.stderr).not.toContain('--vkey');
    const v = tally(['grade', 'verify', join(dir, 'none.grade'), join(dir, 'none.jsonl'), '--key', g.stdout.trim()]);
    expect(v.stderr).toContain('tally grade: --key here is now --vkey');
  });

  it('help names --vkey', () => {
    for (const cmd of ['verify', 'replay', 'verify-proof', 'prove', 'view', 'monitor']) expect(tally([cmd, '--help']).stdout, cmd).toMatch(/^ {2}--vkey </m);
  });
});

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tally } from './helpers.js';

const golden = resolve(import.meta.dirname, '../golden/transcript.jsonl');
const receipt = (JSON.parse(readFileSync(resolve(import.meta.dirname, '../golden/golden.json'), 'utf8')) as { receipt: { receiptRoot: string; sessionId: string } }).receipt;
const dir = mkdtempSync(join(tmpdir(), 'tally-cli-'));

describe('tally verify (from outside)', () => {
  it('exit 0 and a readable summary for a valid bundle', () => {
    const r = tally(['verify', golden]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('valid, unpinned (internal consistency only; pin with --root or --vkey + --checkpoint)');
    expect(r.stdout).toContain('entries      10 (');
    expect(r.stdout).toContain(receipt.receiptRoot);
    expect(r.stderr).toBe('');
  });

  it('--json prints the summary as JSON', () => {
    const r = tally(['verify', golden, '--json', '--root', receipt.receiptRoot, '--session', receipt.sessionId]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, receiptRoot: receipt.receiptRoot, sealed: true });
  });

  it('exit 1 naming the entry for a tampered bundle', () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, readFileSync(golden, 'utf8').replace('open long 0.1', 'open long 9.9').replace('"ordinal":1,', '"ordinal":1 ,'));
    const r = tally(['verify', bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^invalid: entry \d+: not-canonical: /);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('exit 1 when the pinned root differs', () => {
    const r = tally(['verify', golden, '--root', '0'.repeat(64)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('pin-mismatch');
  });

  it('exit 1 for a truncated bundle', () => {
    const cut = join(dir, 'cut.jsonl');
    const text = readFileSync(golden, 'utf8');
    writeFileSync(cut, text.slice(0, text.lastIndexOf('\n', text.length - 2) + 1));
    const r = tally(['verify', cut]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('not-sealed');
  });

  it('exit 3 for a missing file, exit 2 for usage errors', () => {
    expect(tally(['verify', join(dir, 'missing.jsonl')]).code).toBe(3);
    const noArg = tally(['verify']);
    expect(noArg.code).toBe(2);
    expect(noArg.stderr).toContain('exactly one bundle path');
    expect(tally(['verify', golden, '--bogus']).code).toBe(2);
    expect(tally(['verify', golden, '--root', 'xyz']).code).toBe(2);
    expect(tally(['frobnicate']).code).toBe(2);
  });

  it('--help for the tool and the command', () => {
    const top = tally(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('verify');
    const cmd = tally(['verify', '--help']);
    expect(cmd.code).toBe(0);
    expect(cmd.stdout).toContain('Usage: tally verify');
  });
});

describe('tally verify --parallel', () => {
  it('gives the same verdicts as the sequential path', () => {
    const ok = tally(['verify', golden, '--parallel', '--json']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, receiptRoot: receipt.receiptRoot });
    const bad = join(dir, 'bad-par.jsonl');
    writeFileSync(bad, readFileSync(golden, 'utf8').replace('"ordinal":1,', '"ordinal":1 ,'));
    const seq = tally(['verify', bad, '--json']);
    const par = tally(['verify', bad, '--json', '--parallel']);
    expect(par.code).toBe(1);
    expect(JSON.parse(par.stdout)).toEqual(JSON.parse(seq.stdout));
  });
});

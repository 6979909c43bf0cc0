/**
 * A single-valued option given twice is a usage error (exit 2) that names it,
 * never "last wins": on an append-only log, `--text a --text b` must not
 * record b silently. Options meant to repeat (`--witness`, `--log-key`,
 * `--agent`) still do. `tally version` prints what `--version` prints.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tally } from './helpers.js';

describe('repeated options', () => {
  it('a repeated single-valued option exits 2, names it and writes nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-repeat-'));
    const env = { TALLY_DB: join(dir, 'day.db') };
    const sid = (JSON.parse(tally(['open', '--name', 'desk-1', '--json'], { cwd: dir, env }).stdout) as { sessionId: string }).sessionId;
    expect(tally(['frame', '--session', sid, '--ordinal', 'open', '--time', '2030-01-01T09:00:00Z'], { cwd: dir, env }).code).toBe(0);
    const r = tally(['turn', '--session', sid, '--auto', '--text', 'a', '--text', 'b'], { cwd: dir, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--text was given more than once');
    expect(JSON.parse(tally(['describe', '--session', sid, '--json'], { cwd: dir, env }).stdout)).toMatchObject({ size: 2 });
    expect(tally(['verify', 'x.jsonl', '--root', '0', '--root', '1']).stderr).toContain('--root was given more than once');
    // Under --json the same usage error is the JSON failure object on stdout.
    expect(JSON.parse(tally(['verify', 'x.jsonl', '--json', '--json']).stdout)).toMatchObject({ ok: false, code: 'TALLY_CLI_USAGE', exit: 2, message: expect.stringContaining('--json was given more than once') });
  });

  it('options meant to repeat still repeat', () => {
    const r = tally(['serve', '--new-token', '--role', 'agent', '--agent', 'alpha', '--agent', 'beta', '--signer', '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266']); // an agent token names its signer (WIRE.md §3)
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('"agents":["alpha","beta"]');
  });

  it('tally version prints the version, like --version', () => {
    const v = tally(['--version']).stdout;
    expect(v).toMatch(/^\d+\.\d+\.\d+/);
    expect(tally(['version']).stdout).toBe(v);
  });
});

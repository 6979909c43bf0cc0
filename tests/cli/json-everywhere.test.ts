/**
 * `--json` is the framework's: every command takes it, and under it a usage or
 * I/O error is one JSON object on stdout ({"ok":false,"code","message","exit"},
 * exit = the process exit code) with nothing on stderr. The commands that had
 * no JSON output (view, witness, serve --new-token, judge, tiles) print one
 * object; replay --json prints nothing human on stderr, even when it fails.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands/index.js';
import { tally } from './helpers.js';

const golden = resolve(import.meta.dirname, '../golden/transcript.jsonl');
const dir = mkdtempSync(join(tmpdir(), 'tally-json-'));

/** Exactly one JSON object on one stdout line. */
function one(stdout: string): Record<string, unknown> {
  const lines = stdout.split('\n').filter((l) => l !== '');
  expect(lines, stdout).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

describe('--json on every command', () => {
  it.each(COMMANDS.map((c) => c.name))('tally %s --json: an unknown option is a JSON usage error on stdout, stderr empty', (name) => {
    const r = tally([name, '--json', '--no-such-option']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('');
    expect(one(r.stdout)).toEqual({ ok: false, code: 'TALLY_CLI_USAGE', message: expect.stringContaining('unknown option --no-such-option'), exit: 2 });
  });

  it('without --json the same error stays one human line on stderr', () => {
    const r = tally(['view', '--no-such-option']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^tally view: unknown option --no-such-option/);
  });

  it('an unknown command and an I/O error under --json', () => {
    const u = tally(['veriffy', '--json']);
    expect(u.code).toBe(2);
    expect(one(u.stdout)).toMatchObject({ ok: false, code: 'TALLY_CLI_USAGE', exit: 2, message: expect.stringContaining("did you mean 'verify'") });
    const io = tally(['view', join(dir, 'missing.jsonl'), '--json']);
    expect(io.code).toBe(3);
    expect(io.stderr).toBe('');
    expect(one(io.stdout)).toMatchObject({ ok: false, code: 'TALLY_CLI_IO', exit: 3 });
    const engine = tally(['checkpoint', '--session', 'ab'.repeat(32), '--db', join(dir, 'none.db'), '--key', join(dir, 'nokey'), '--json']);
    expect(engine.stderr).toBe('');
    expect(one(engine.stdout)).toMatchObject({ ok: false, exit: engine.code });
  });

  it('view --json prints where the page was written', () => {
    const out = join(dir, 'day.html');
    const r = tally(['view', golden, '--out', out, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(one(r.stdout)).toEqual({ ok: true, out, bytes: readFileSync(out).length });
  });

  it('witness keygen, print-key and trust --json', () => {
    const key = join(dir, 'w.key');
    const k = tally(['witness', 'keygen', '--name', 'w.example/1', '--key', key, '--json']);
    expect(k.code, k.stderr).toBe(0);
    const made = one(k.stdout);
    expect(made).toMatchObject({ ok: true, name: 'w.example/1', verifierKey: expect.stringMatching(/^w\.example\/1\+[0-9a-f]{8}\+/), policyLine: expect.stringMatching(/^witness w\.example\/1 [0-9a-f]{64}$/) });
    expect(one(tally(['witness', 'print-key', '--key', key, '--json']).stdout)).toEqual(made);
    const engine = JSON.parse(tally(['key', 'new', '--key', join(dir, 'engine.key'), '--json']).stdout) as { verifierKey: string };
    const t = tally(['witness', 'trust', engine.verifierKey, '--db', join(dir, 'w.db'), '--json']);
    expect(t.code, t.stderr).toBe(0);
    expect(one(t.stdout)).toMatchObject({ ok: true, trusted: engine.verifierKey });
    const missing = tally(['witness', 'print-key', '--key', join(dir, 'nope.key'), '--json']);
    expect(missing.code).toBe(3);
    expect(one(missing.stdout)).toMatchObject({ ok: false, code: 'TALLY_KEY_FILE_NOT_FOUND', exit: 3 });
  });

  it('serve --new-token --json is one object holding the token and its entry', () => {
    const r = tally(['serve', '--new-token', '--role', 'auditor', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const o = one(r.stdout) as { ok: boolean; token: string; entry: { role: string; sha256: string } };
    expect(o.ok).toBe(true);
    expect(o.entry.role).toBe('auditor');
    expect(o.token.length).toBeGreaterThanOrEqual(16);
  });

  it('judge serve --json: a missing key is a JSON usage error', () => {
    const r = tally(['judge', 'serve', '--json'], { env: { TALLY_JUDGE_KEY_FILE: '' } });
    expect(r.code).toBe(2);
    expect(one(r.stdout)).toMatchObject({ ok: false, code: 'TALLY_CLI_USAGE', message: expect.stringContaining('needs --key') });
  });

  it('replay --json prints nothing human on stderr, passing or failing', () => {
    const ok = tally(['replay', golden, '--json'], { env: { TALLY_NO_PROGRESS: '' } });
    expect(ok.code).toBe(0);
    expect(ok.stderr).toBe('');
    expect(one(ok.stdout)).toMatchObject({ ok: true });
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, readFileSync(golden, 'utf8').replace('"ordinal":1,', '"ordinal":1 ,'));
    const r = tally(['replay', bad, '--json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    expect(one(r.stdout)).toMatchObject({ ok: false, stage: 'chain' });
  });
});

/**
 * `tally export` from outside: a day driven from the shell leaves the store as
 * the files a grader checks (bundle, seal receipt, signed checkpoint, turn
 * receipts), and those files verify with the exported verifier key alone.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tally } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-cli-export-'));
const env = { TALLY_KEY: join(dir, 'keys', 'engine.key'), TALLY_DB: join(dir, 'day.db') };
const run = (args: string[]) => tally(args, { cwd: dir, env });

describe('tally export (from outside)', () => {
  it('writes bundle, receipt, signed checkpoint and turn receipts that verify; refuses unsealed and unknown sessions', () => {
    const sid = (JSON.parse(run(['open', '--name', 'export-day', '--json']).stdout) as { sessionId: string }).sessionId;
    expect(run(['frame', '--session', sid, '--ordinal', 'open', '--time', '2030-01-01T09:00:00Z']).code).toBe(0);
    expect(run(['turn', '--session', sid, '--auto', '--text', 'hold']).code).toBe(0);
    // No key by surprise: without an engine key, export refuses (exit 3) and creates none.
    const nokey = run(['export', '--session', sid, '--out', 'early', '--unsealed']);
    expect(nokey.code, nokey.stderr).toBe(3);
    expect(nokey.stderr).toContain('tally key new');
    expect(existsSync(env.TALLY_KEY)).toBe(false);
    expect(run(['key', 'new']).code).toBe(0);
    const unsealed = run(['export', '--session', sid, '--out', 'early']);
    expect(unsealed.code).toBe(1);
    expect(unsealed.stderr).toContain('the session is not sealed (phase awaiting-frame): seal it with tally finalize, or pass --unsealed');
    expect(run(['frame', '--session', sid, '--ordinal', '0', '--time', '2030-01-01T09:30:00Z']).code).toBe(0);
    expect(run(['turn', '--session', sid, '--auto', '--stand-down', 'timeout']).code).toBe(0);
    const fin = run(['finalize', '--session', sid, '--json']);
    const root = (JSON.parse(fin.stdout) as { receipt: { receiptRoot: string } }).receipt.receiptRoot;

    const r = run(['export', '--session', sid, '--out', 'out', '--turn-receipts']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`exported session ${sid} (6 entries, sealed)`);
    expect(r.stdout).toContain('turns/ (2 turn receipts)');
    const out = join(dir, 'out');
    expect(readdirSync(join(out, 'turns')).sort()).toEqual(['2.tlog-proof', '4.tlog-proof']);
    const receipt = JSON.parse(readFileSync(join(out, 'receipt.json'), 'utf8')) as Record<string, unknown>;
    expect(receipt).toMatchObject({ sessionId: sid, size: 6, receiptRoot: root, sealed: true });
    const vkey = readFileSync(join(out, 'engine.vkey'), 'utf8').trim();
    expect(receipt['verifierKey']).toBe(vkey);

    const v = run(['verify', 'out/bundle.jsonl', '--vkey', vkey, '--checkpoint', 'out/receipt.note']);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toContain('valid, pinned to the checkpoint out/receipt.note (6 entries)');
    for (const n of [2, 4]) {
      const p = run(['verify-proof', `out/turns/${n}.tlog-proof`, '--vkey', 'out/engine.vkey', '--checkpoint', 'out/receipt.note']);
      expect(p.code, p.stderr).toBe(0);
      expect(p.stdout).toContain(`valid: entry ${n} of session ${sid} (pinned checkpoint)`);
    }
    const unknown = run(['export', '--session', 'ab'.repeat(32), '--out', 'nope']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^tally export: wrong-session: /);
    expect(run(['export', '--session', sid]).code).toBe(2);
  });
});

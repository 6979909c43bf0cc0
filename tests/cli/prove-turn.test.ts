/**
 * One numbering for a turn: `tally prove --turn <ordinal>` (the ordinal
 * `inspect` prints) proves the same entry as `--entry <index>` (turn k is
 * entry 2k+4), and says both; giving both is a usage error.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tally } from './helpers.js';

describe('tally prove --turn', () => {
  it('proves turn k as entry 2k+4, names both, and refuses --turn with --entry', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-prove-turn-'));
    expect(tally(['demo', '--out', 'day', '--wakes', '4'], { cwd: dir }).code).toBe(0);
    const vkey = readFileSync(join(dir, 'day', 'engine.vkey'), 'utf8').trim();
    const base = ['prove', 'day/bundle.jsonl', '--checkpoint', 'day/receipt.note', '--vkey', vkey];
    const byEntry = tally([...base, '--entry', '4'], { cwd: dir });
    const byTurn = tally([...base, '--turn', '0'], { cwd: dir });
    expect(byTurn.code, byTurn.stderr).toBe(0);
    expect(byTurn.stdout).toBe(byEntry.stdout);
    expect(tally([...base, '--turn', 'open'], { cwd: dir }).stdout).toBe(tally([...base, '--entry', '2'], { cwd: dir }).stdout);
    expect(tally([...base, '--turn', '-1'], { cwd: dir }).stdout).toBe(tally([...base, '--entry', '2'], { cwd: dir }).stdout);
    const json = JSON.parse(tally([...base, '--turn', '1', '--json'], { cwd: dir }).stdout) as { index: number; turn: number };
    expect([json.index, json.turn]).toEqual([6, 1]);
    const out = tally([...base, '--turn', '0', '--out', 't0.tlog-proof'], { cwd: dir });
    expect(out.stdout).toContain('receipt for turn 0, entry 4 of');
    expect(tally([...base, '--turn', '0', '--entry', '4'], { cwd: dir }).code).toBe(2);
    expect(tally([...base, '--turn', '-2'], { cwd: dir }).code).toBe(2);
  });
});

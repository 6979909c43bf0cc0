/**
 * The grader's block (docs/GRADER.md), run verbatim: the ```sh block after "A grader
 * needs only files and that key" is executed by bash (`set -e`) in the
 * directory of a fresh demo day inside the clone, with no shim: `npx tally`
 * resolves to this package as it does for a user after `npm ci`. No engine key is in reach of the grader (TALLY_KEY points at a
 * path that does not exist), so nothing in the block can sign as the engine.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tally } from './helpers.js';

const readme = readFileSync(new URL('../../docs/GRADER.md', import.meta.url), 'utf8');

/** The sh block that follows `marker` in the README. */
function blockAfter(marker: string): string {
  const at = readme.indexOf(marker);
  expect(at, `docs/GRADER.md has "${marker}"`).toBeGreaterThan(-1);
  const m = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  if (!m) throw new Error(`no sh block after "${marker}"`);
  return m[1]!;
}

describe("README's grader block", () => {
  it('runs verbatim against a demo day: every command exits 0, the receipt is of one turn and verifies pinned to receipt.note', () => {
    const dir = mkdtempSync(join(resolve(import.meta.dirname, '../..'), '.docs-shell-grader-'));
    const day = join(dir, 'day');
    const demo = tally(['demo', '--out', day, '--wakes', '4']);
    expect(demo.code, demo.stderr).toBe(0);
    for (const f of ['bundle.jsonl', 'receipt.note', 'engine.vkey']) expect(existsSync(join(day, f)), f).toBe(true);
    const block = blockAfter('A grader needs only files and that key');
    expect(block).toContain('npx tally prove bundle.jsonl --entry 4 --checkpoint receipt.note');
    const r = spawnSync('bash', ['-e', '-c', block], {
      cwd: day,
      env: { ...process.env, TALLY_NO_PROGRESS: '1', TALLY_KEY: join(dir, 'no-engine-key-here') },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('checkpoint   12 entries (the whole bundle)');
    expect(r.stdout).toMatch(/valid: entry 4 of session [0-9a-f]{64} \(pinned checkpoint\)\nentry {8}turn 0 \(authored/);
    expect(r.stdout).toContain('valid: grade of session');
    expect(existsSync(join(dir, 'no-engine-key-here'))).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  }, 240_000);
});

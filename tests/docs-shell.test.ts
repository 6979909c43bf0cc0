/**
 * Every shell block of README.md and docs/*.md, run verbatim from the clone (a
 * fresh directory inside this repository, after `npm ci`), and the rules every
 * block must keep. The same blocks from a project that installed the packed
 * tarball: tests/docs-shell-installed.test.ts. The parts: tests/helpers/docs-shell.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { all, root, runAll, userEnv } from './helpers/docs-shell.js';

describe('every shell block of README.md and docs/ runs verbatim', () => {
  it('finds the blocks, skips only marked ones (listing why), has one install block and no unbounded wait', () => {
    expect(all.length).toBeGreaterThanOrEqual(5);
    const skipped = all.filter((b) => b.skip !== undefined);
    for (const b of skipped) console.log(`shell-test: skipped ${b.doc}:${b.line} (${b.section}): ${b.skip}`);
    for (const b of skipped) expect(b.skip!.length, `${b.doc}:${b.line} skip needs a reason`).toBeGreaterThan(10);
    // Keep skips rare: a new skip marker must be argued for here (today: npm test itself, the long-running server and MCP blocks,
    // the Jaeger trace view, which needs Docker, and two lines run from the repository root: the faults suite's
    // reproduce line, which npm test runs, and a benchmark run, whose sections tests/server/bench and tests/perf run small).
    expect(skipped.length).toBeLessThanOrEqual(6);
    expect(all.filter((b) => b.install).map((b) => `${b.doc}:${b.line}`)).toHaveLength(1);
    for (const b of all) {
      const commands = b.code.split('\n').map((l) => l.replace(/(^|\s)#.*$/, ''));
      expect(commands.filter((l) => /(^|[;&|]\s*)(until|while)\b/.test(l.trim())), `${b.doc}:${b.line}: a wait loop must be bounded (for _ in $(seq N); do …; done)`).toEqual([]);
      // What a user types: `npx tally`, never a bare `tally` that is on no PATH after npm ci or npm install.
      const bare = commands.filter((l) => /(^|[\s;&|(`]|\$\()tally\s/.test(l.replace(/npx (-p \S+ )?tally\s/g, '')));
      expect(bare, `${b.doc}:${b.line}: spell the command npx tally`).toEqual([]);
    }
    expect(execFileSync('bash', ['-c', 'command -v jq'], { encoding: 'utf8' }).trim(), 'jq is needed by the README (.ci/run installs it)').not.toBe('');
  });

  it('runs each block from the clone, leaving nothing running', async () => {
    const dir = mkdtempSync(join(root, '.docs-shell-'));
    try {
      await runAll(dir, userEnv(), 'clone');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 900_000);
});

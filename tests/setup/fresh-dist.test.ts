/** The global setup's freshness check: a source newer than its output (or without one) is stale. */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { staleSource } from './fresh-dist.js';

const root = mkdtempSync(join(tmpdir(), 'tally-fresh-dist-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function file(path: string, seconds: number): void {
  const p = join(root, path);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, '');
  utimesSync(p, seconds, seconds);
}

describe('staleSource', () => {
  it('is undefined when every output is newer than its source and the configs; names the first stale source otherwise', () => {
    for (const f of ['tsconfig.json', 'tsconfig.build.json', 'package.json']) file(f, 1_000);
    file('src/a.ts', 2_000);
    file('src/deep/b.ts', 2_000);
    file('src/types.d.ts', 9_000); // declaration files emit nothing
    file('dist/a.js', 3_000);
    file('dist/deep/b.js', 3_000);
    expect(staleSource(root)).toBeUndefined();
    file('src/deep/b.ts', 4_000);
    expect(staleSource(root)).toBe(join('src', 'deep', 'b.ts'));
    file('dist/deep/b.js', 5_000);
    expect(staleSource(root)).toBeUndefined();
    file('src/new.ts', 1_500); // no output at all
    expect(staleSource(root)).toBe(join('src', 'new.ts'));
    file('dist/new.js', 5_000);
    file('tsconfig.build.json', 6_000); // a changed build config makes every output stale
    expect(staleSource(root)).toMatch(/^src/);
  });
});

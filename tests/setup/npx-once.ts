/**
 * Vitest global setup: the first `npx tally` typed inside this repository
 * (the docs shell test's clone run, the GRADER.md block, the launcher test)
 * installs the project into npm's own cache, `~/.npm/_npx/<hash of its path>`,
 * and later ones reuse it. Two first uses at once — two test files on two
 * workers — race on that directory and can leave it half made (no
 * package.json), and then every later `npx tally` here fails with npm's
 * ENOENT. So the first use is made here, once, before any file runs, as a
 * user's would be: from a fresh directory in the clone, through npm itself.
 * A failure fails the run.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export default function setup(): void {
  const dir = mkdtempSync(join(ROOT, '.npx-once-'));
  try {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(npm_|VITEST|NODE_OPTIONS$)/i.test(k)) env[k] = v;
    execFileSync('npx', ['--yes', 'tally', '--version'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'inherit'], timeout: 120_000 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

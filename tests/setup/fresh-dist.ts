/**
 * Vitest global setup: the tests that run the BUILD (`tally serve`, `tally
 * mcp`, the CLI, the crash/storm workers, the perf tests) must test the
 * sources as they are now. Before any test file runs, every `src/**\/*.ts`
 * is compared with its `dist/**\/*.js` (and the build config with the
 * oldest output); if any output is missing or older, `npm run build` runs
 * once, and a failed build fails the run. `npm test` builds first, so there
 * this is a cheap check.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The first source whose build output is missing or older than it, or `undefined` when dist/ is current. */
export function staleSource(root = ROOT): string | undefined {
  const src = join(root, 'src');
  const configs = ['tsconfig.json', 'tsconfig.build.json', 'package.json'].map((f) => statSync(join(root, f)).mtimeMs);
  const newestConfig = Math.max(...configs);
  const walk = (dir: string): string | undefined => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) {
        // Excluded from tsc by tsconfig.build.json: scripts/build-web.mjs bundles it into one page.
        if (relative(src, p) === join('web', 'browser')) continue;
        const found = walk(p);
        if (found) return found;
      } else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) {
        const out = join(root, 'dist', relative(src, p)).replace(/\.ts$/, '.js');
        if (!existsSync(out)) return relative(root, p);
        const built = statSync(out).mtimeMs;
        if (built < statSync(p).mtimeMs || built < newestConfig) return relative(root, p);
      }
    }
    return undefined;
  };
  return walk(src);
}

/** Rebuilds dist/ when any source is newer than its output. */
export default function setup(): void {
  const stale = staleSource();
  if (stale === undefined) return;
  process.stdout.write(`[fresh-dist] dist/ is older than ${stale}: running npm run build once before the tests\n`);
  execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  const still = staleSource();
  if (still !== undefined) throw new Error(`[fresh-dist] after npm run build, dist/ is still older than ${still}`);
}

import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * Worker threads run compiled code (dist/), so tests that start them first
 * check that dist/ is at least as new as every source file of `areas`.
 */
export function requireFreshDist(areas: readonly string[]): void {
  for (const area of areas) {
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (name.endsWith('.ts')) {
          const out = join(ROOT, 'dist', p.slice(join(ROOT, 'src').length)).replace(/\.ts$/, '.js');
          if (!existsSync(out) || statSync(out).mtimeMs < statSync(p).mtimeMs) {
            throw new Error(`dist/ is missing or older than ${p.slice(ROOT.length)}: worker threads run dist/. Run \`npx tsc -p tsconfig.build.json\` (npm test does it).`);
          }
        }
      }
    };
    walk(join(ROOT, 'src', area));
  }
}

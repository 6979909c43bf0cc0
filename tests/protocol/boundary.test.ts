import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../src/protocol');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

// Anything that reaches outside the pure layer: clocks, randomness, crypto,
// I/O, timers, the process, the console, the network, dynamic code.
const FORBIDDEN: readonly [RegExp, string][] = [
  [/\bDate\b/, 'clock (Date)'],
  [/\bperformance\b/, 'clock (performance)'],
  [/\bMath\.random\b/, 'RNG (Math.random)'],
  [/\bcrypto\b/, 'crypto'],
  [/\bprocess\b/, 'process'],
  [/\bconsole\b/, 'console'],
  [/\bfetch\s*\(/, 'network (fetch)'],
  [/\brequire\s*\(/, 'require'],
  [/\bimport\s*\(/, 'dynamic import'],
  [/\bset(Timeout|Interval|Immediate)\b/, 'timers'],
  [/\beval\s*\(|\bnew Function\b/, 'dynamic code'],
  [/\bBuffer\b/, 'node Buffer'],
  [/\bglobalThis\b/, 'globalThis'],
];

function stripComments(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
}

describe('src/protocol boundary', () => {
  const all = files(root);

  it('has source files to check', () => {
    expect(all.length).toBeGreaterThan(5);
  });

  it.each(all.map((f) => [relative(root, f), f]))('%s imports only from inside src/protocol', (_name, file) => {
    const src = stripComments(readFileSync(file, 'utf8'));
    const specs = [...src.matchAll(/\b(?:import|export)\b[^;'"]*?from\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
    const bare = [...src.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
    for (const spec of [...specs, ...bare]) {
      expect(spec.startsWith('.'), `${file}: import "${spec}" is not relative`).toBe(true);
      const target = resolve(dirname(file), spec);
      expect(target.startsWith(root), `${file}: import "${spec}" leaves src/protocol`).toBe(true);
    }
  });

  it.each(all.map((f) => [relative(root, f), f]))('%s uses no clock, RNG, crypto or I/O', (_name, file) => {
    const code = stripComments(readFileSync(file, 'utf8'));
    for (const [re, what] of FORBIDDEN) {
      expect(re.test(code), `${file} uses ${what}`).toBe(false);
    }
  });

  it('the scanner itself catches a breach', () => {
    const bad = "import { readFileSync } from 'node:fs';\nconst t = Date.now();";
    const specs = [...bad.matchAll(/\b(?:import|export)\b[^;'"]*?from\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
    expect(specs).toEqual(['node:fs']);
    expect(FORBIDDEN.some(([re]) => re.test(bad))).toBe(true);
  });
});

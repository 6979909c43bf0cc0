/**
 * Every `exports` subpath of package.json resolves and loads from the BUILT
 * package, the way a user imports it right after `npm ci`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown>; bin: Record<string, string> };
const subpaths = Object.keys(pkg.exports).filter((k) => k !== './package.json');

describe('package exports', () => {
  it('has the required entries', () => {
    expect(subpaths).toEqual(expect.arrayContaining(['.', './protocol', './merkle', './intent']));
    expect(pkg.bin).toEqual({ tally: 'dist/cli/main.js' });
  });

  it.each(subpaths)('agent-tally%s loads and exports something', (sub) => {
    const spec = sub === '.' ? pkg.name : `${pkg.name}/${sub.slice(2)}`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(spec)}); console.log(Object.keys(m).length);`], { cwd: root, encoding: 'utf8' });
    expect(Number(out.trim())).toBeGreaterThan(0);
  });
});

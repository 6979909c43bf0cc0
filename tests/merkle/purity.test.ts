/**
 * Architecture rule: src/protocol/merkle is pure. It imports only from inside
 * src/protocol, and touches no clock, RNG, console, process or crypto.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PROTOCOL = fileURLToPath(new URL('../../src/protocol/', import.meta.url));
const MERKLE = join(PROTOCOL, 'merkle');
const files = readdirSync(MERKLE).filter((f) => f.endsWith('.ts'));

/** Drops comments and string contents, keeping import specifiers found first. */
function stripComments(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
}

function specifiers(src: string): string[] {
  const code = stripComments(src);
  const out: string[] = [];
  for (const re of [/\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]/g, /\brequire\s*\(\s*['"]([^'"]+)['"]/g]) {
    for (const m of code.matchAll(re)) out.push(m[1]!);
  }
  return out;
}

describe('src/protocol/merkle is pure', () => {
  it('has source files to scan', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
    expect(files).toContain('index.ts');
  });

  it.each(files)('%s imports only relative .js paths inside src/protocol', (file) => {
    const src = readFileSync(join(MERKLE, file), 'utf8');
    for (const spec of specifiers(src)) {
      expect(spec, `${file}: ${spec}`).toMatch(/^\.\.?\/.*\.js$/);
      const target = resolve(MERKLE, spec);
      expect(relative(PROTOCOL, target).startsWith('..'), `${file}: ${spec} leaves src/protocol`).toBe(false);
    }
    expect(stripComments(src)).not.toMatch(/\brequire\s*\(|\bimport\s*\(/);
  });

  it.each(files)('%s uses no clock, RNG, console, process, crypto or timers', (file) => {
    const code = stripComments(readFileSync(join(MERKLE, file), 'utf8'));
    expect(code).not.toMatch(/\b(Date|console|process|globalThis|crypto|setTimeout|setInterval|performance|Buffer)\b|Math\.random/);
  });

  it('the scanner catches a forbidden import (self-test)', () => {
    expect(specifiers(`import { x } from 'node:crypto';\nimport y from "../../store/db.js";`)).toEqual(['node:crypto', '../../store/db.js']);
    expect(resolve(MERKLE, '../../store/db.js').startsWith(PROTOCOL)).toBe(false);
  });
});

/**
 * The library example (docs/HARNESS.md, linked from the README) is run verbatim against the BUILT package, as
 * a user would after `npm ci` (imports resolve through package.json `exports`).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');

function example(): string {
  const readme = readFileSync(join(root, 'docs/HARNESS.md'), 'utf8');
  const m = /<!-- readme-example:[^>]*-->\s*```ts\n([\s\S]*?)```/.exec(readme);
  if (!m) throw new Error('docs/HARNESS.md has no marked example');
  return m[1]!;
}

describe('README library example', () => {
  it('type-checks against the built package types', () => {
    // Placed at the package root so `agent-tally` resolves by self-reference to dist/*.d.ts.
    const file = join(root, '.readme-example.ts');
    writeFileSync(file, example());
    try {
      const program = ts.createProgram([file], {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        types: ['node'],
        skipLibCheck: true,
      });
      const diags = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      expect(diags).toEqual([]);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it('runs against the built package, printing true twice', () => {
    const out = ts.transpileModule(example(), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
    // Run from the package root so `agent-tally` resolves to this package by self-reference.
    const stdout = execFileSync(process.execPath, ['--input-type=module', '-e', out], { cwd: root, encoding: 'utf8' });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe('true');
    expect(lines[1]).toMatch(/^true [0-9a-f]{64}$/);
  });
});

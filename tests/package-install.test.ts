/**
 * The published package as a user gets it: `npm pack` the built package,
 * install the tarball into a scratch project (its dependencies linked from this
 * repository's node_modules, so the test needs no network), then type-check
 * and run the README library example against it. Also checks what the tarball
 * holds: a LICENSE, no benchmarks, no source maps pointing at unshipped sources.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; dependencies: Record<string, string> };
const scratch = mkdtempSync(join(tmpdir(), 'tally-pack-'));
let files: string[] = [];

function example(): string {
  const m = /<!-- readme-example:[^>]*-->\s*```ts\n([\s\S]*?)```/.exec(readFileSync(join(root, 'docs/HARNESS.md'), 'utf8'));
  if (!m) throw new Error('README has no marked example');
  return m[1]!;
}

beforeAll(() => {
  // npm test builds first; --ignore-scripts keeps `prepare` from building again.
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', scratch], { cwd: root, encoding: 'utf8' });
  const packed = (JSON.parse(out) as { filename: string; files: { path: string }[] }[])[0]!;
  files = packed.files.map((f) => f.path);
  const target = join(scratch, 'node_modules', pkg.name);
  mkdirSync(target, { recursive: true });
  execFileSync('tar', ['xzf', join(scratch, packed.filename), '-C', target, '--strip-components=1']);
  for (const dep of [...Object.keys(pkg.dependencies), '@types/node']) {
    const link = join(scratch, 'node_modules', dep);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(join(root, 'node_modules', dep), link, 'dir');
  }
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
}, 120_000);

describe('the packed package', () => {
  it('holds a LICENSE (Apache-2.0) and no benchmarks, source maps or tests', () => {
    expect(files).toContain('LICENSE');
    expect(readFileSync(join(scratch, 'node_modules', pkg.name, 'LICENSE'), 'utf8')).toContain('Apache License\n                           Version 2.0, January 2004');
    expect(files.filter((f) => f.startsWith('dist/bench/') || f.endsWith('.map') || f.startsWith('tests/') || f.startsWith('src/'))).toEqual([]);
    expect(files).toContain('dist/cli/main.js');
  });

  it('the README library example type-checks and runs against the installed tarball', () => {
    const file = join(scratch, 'example.ts');
    writeFileSync(file, example());
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ['node'],
      typeRoots: [join(scratch, 'node_modules', '@types')],
      skipLibCheck: true,
    });
    expect(ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
    const js = ts.transpileModule(example(), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
    writeFileSync(join(scratch, 'example.mjs'), js);
    const lines = execFileSync(process.execPath, ['example.mjs'], { cwd: scratch, encoding: 'utf8' }).trim().split('\n');
    expect(lines[0]).toBe('true');
    expect(lines[1]).toMatch(/^true [0-9a-f]{64}$/);
    // The binary of the installed package runs too.
    expect(execFileSync(process.execPath, [join(scratch, 'node_modules', pkg.name, 'dist/cli/main.js'), '--version'], { encoding: 'utf8' }).trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

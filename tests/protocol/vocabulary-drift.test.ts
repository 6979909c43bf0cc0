import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const source = readFileSync(resolve(import.meta.dirname, '../../src/protocol/vocabulary.ts'), 'utf8');

function typeErrors(code: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'tally-drift-'));
  const file = join(dir, 'vocabulary.ts');
  writeFileSync(file, code);
  const program = ts.createProgram([file], { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true, types: [] });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('both-ways vocabulary guards break the build on drift', () => {
  it('the unmodified file type-checks', () => {
    expect(typeErrors(source)).toEqual([]);
  });

  it('a diagnostic added to the union only', () => {
    const drifted = source.replace("| 'malformed-entry';", "| 'malformed-entry'\n  | 'brand-new';");
    expect(drifted).not.toBe(source);
    expect(typeErrors(drifted).length).toBeGreaterThan(0);
  });

  it('a verb added to the tuple only', () => {
    const drifted = source.replace("  'session/finalize',\n] as const", "  'session/finalize',\n  'session/advance',\n] as const");
    expect(drifted).not.toBe(source);
    expect(typeErrors(drifted).length).toBeGreaterThan(0);
  });

  it('an interaction missing from the total map', () => {
    const drifted = source.replace("  artifacts: 'session/finalize',\n} as const", '} as const');
    expect(drifted).not.toBe(source);
    expect(typeErrors(drifted).length).toBeGreaterThan(0);
  });

  it('a failure class removed from the tuple only', () => {
    const drifted = source.replace("export const FAILURE_CLASSES = ['provider', 'timeout', 'malformed']", "export const FAILURE_CLASSES = ['provider', 'timeout']");
    expect(drifted).not.toBe(source);
    expect(typeErrors(drifted).length).toBeGreaterThan(0);
  });
});

/**
 * No import circles in src/. A circle makes load order matter (a module can
 * see another's exports still uninitialised) and means two files are one
 * purpose split badly; the fix is to move what both need into a third module.
 *
 * The graph holds every edge that loads a module at run time: `import` and
 * `export … from` declarations (an `import { type A } from` included: under
 * `verbatimModuleSyntax` it still loads the module), side-effect imports, and
 * dynamic `import()` calls. Declarations marked `type` as a whole and
 * `import('x').T` in type positions are erased by the compiler and are not
 * edges. The files are parsed with the TypeScript compiler, not matched with
 * regular expressions.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const src = resolve(import.meta.dirname, '../../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** The relative module specifiers `code` loads at run time. */
function runtimeImports(fileName: string, code: string): string[] {
  const sf = ts.createSourceFile(fileName, code, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const specs: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly && ts.isStringLiteral(node.moduleSpecifier)) {
      specs.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      specs.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      if (arg && ts.isStringLiteralLike(arg)) specs.push(arg.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return specs.filter((s) => s.startsWith('.'));
}

/** Every circle of `graph`, one per strongly connected component, as a path that returns to its start. */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component);
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);
  // One concrete circle per component: breadth-first from its first file back to itself, inside the component.
  return components.map((component) => {
    const members = new Set(component);
    const start = [...component].sort()[0]!;
    const parent = new Map<string, string>();
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      const v = queue[i]!;
      for (const w of graph.get(v) ?? []) {
        if (!members.has(w)) continue;
        if (w === start) {
          const path = [start];
          for (let u = v; u !== start; u = parent.get(u)!) path.splice(1, 0, u);
          return [...path, start];
        }
        if (!parent.has(w)) {
          parent.set(w, v);
          queue.push(w);
        }
      }
    }
    return [start, start];
  });
}

function sourceGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files(src)) {
    const from = relative(src, file);
    const to = runtimeImports(file, readFileSync(file, 'utf8')).map((spec) => relative(src, resolve(dirname(file), spec)).replace(/\.js$/, '.ts'));
    graph.set(from, [...new Set(to)]);
  }
  return graph;
}

describe('import circles', () => {
  it('finds a circle closed by a dynamic import, and ignores type-only edges', () => {
    const a = runtimeImports('a.ts', "export async function f() { const { g } = await import('./b.js'); return g; }\nexport type T = import('./c.js').C;");
    const b = runtimeImports('b.ts', "import { f } from './a.js';\nimport type { C } from './c.js';\nexport { f as g };");
    const c = runtimeImports('c.ts', "import { type A } from './a.js';\nexport type C = A;");
    expect(a).toEqual(['./b.js']);
    expect(b).toEqual(['./a.js']);
    expect(c).toEqual(['./a.js']);
    const graph = new Map([['a.ts', ['b.ts']], ['b.ts', ['a.ts']], ['c.ts', ['a.ts']], ['d.ts', ['d.ts']]]);
    expect(findCycles(graph)).toEqual([['a.ts', 'b.ts', 'a.ts'], ['d.ts', 'd.ts']]);
    expect(findCycles(new Map([['a.ts', ['b.ts']], ['b.ts', []]]))).toEqual([]);
  });

  it('src/ has none', () => {
    const cycles = findCycles(sourceGraph()).map((c) => c.join(' → '));
    expect(cycles, `import circles in src/ (move what both sides need into a module of its own):\n  ${cycles.join('\n  ')}`).toEqual([]);
  });
});

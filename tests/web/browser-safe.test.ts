/**
 * The page reuses the engine's rules instead of copying them, so everything
 * the browser bundle imports must be browser-safe: no `node:` module, no
 * Node-bound digest, anywhere in the import graph of the page and its worker.
 * (vite would only warn and ship a stub that fails at run time.) Type-only
 * imports are erased and not followed; a module named in
 * src/web/browser/bindings.json is followed to its browser twin, as the build
 * resolves it, and the twin must export exactly what the module it replaces
 * exports (values and types, however declared or re-exported). Sources are
 * read with the TypeScript compiler API, not patterns.
 */
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const src = resolve(import.meta.dirname, '../../src');
const ENTRIES = ['web/browser/main.ts', 'web/browser/worker.ts'].map((f) => resolve(src, f));
const BINDINGS = JSON.parse(readFileSync(resolve(src, 'web/browser/bindings.json'), 'utf8')) as Record<string, string>;

/**
 * The module specifiers a file loads at run time: `import` and `export … from`
 * declarations that are not `type`-only (under `verbatimModuleSyntax` only
 * those are erased) and `import()` calls with a literal specifier.
 */
function runtimeSpecifiers(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const specs: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!node.importClause?.isTypeOnly) specs.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!node.isTypeOnly) specs.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg !== undefined && ts.isStringLiteralLike(arg)) specs.push(arg.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return specs;
}

/** Every file reachable from `entries` through relative imports, and every bare import seen. */
function graph(entries: string[]): { files: Set<string>; bare: Map<string, string> } {
  const files = new Set<string>();
  const bare = new Map<string, string>();
  const todo = [...entries];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const spec of runtimeSpecifiers(file)) {
      if (!spec.startsWith('.')) {
        bare.set(spec, relative(src, file));
        continue;
      }
      const path = resolve(dirname(file), spec.replace(/\?.*$/, ''));
      if (path.endsWith('.css')) continue;
      const source = path.endsWith('.js') ? path.replace(/\.js$/, '.ts') : path;
      const bound = BINDINGS[relative(src, source)];
      todo.push(bound === undefined ? source : resolve(src, bound));
    }
  }
  return { files, bare };
}

/**
 * The exports of each of `files` (relative to src/), resolved by the type
 * checker — `export const`/`let`, `function`, `class`, `enum`, `default`,
 * `export { … }`, `export { … } from` and `export * from` alike — split into
 * run-time values and type-only names.
 */
function exportsOf(files: readonly string[]): Map<string, { values: string[]; types: string[] }> {
  const paths = files.map((f) => resolve(src, f));
  const program = ts.createProgram(paths, { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, types: ['node'], skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const out = new Map<string, { values: string[]; types: string[] }>();
  files.forEach((f, i) => {
    const sf = program.getSourceFile(paths[i]!);
    const module = sf === undefined ? undefined : checker.getSymbolAtLocation(sf);
    if (module === undefined) throw new Error(`${f}: not a module`);
    const values: string[] = [];
    const types: string[] = [];
    for (const sym of checker.getExportsOfModule(module)) {
      const typeOnly = (sym.declarations ?? []).some((d) => ts.isTypeOnlyImportOrExportDeclaration(d));
      const target = sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym;
      (!typeOnly && target.flags & ts.SymbolFlags.Value ? values : types).push(sym.name);
    }
    out.set(f, { values: values.sort(), types: types.sort() });
  });
  return out;
}

describe('the browser bundle', () => {
  const { files, bare } = graph(ENTRIES);

  it('reaches the protocol and receipt rules it reuses', () => {
    const rel = [...files].map((f) => relative(src, f));
    for (const f of ['protocol/chain.ts', 'protocol/stream.ts', 'receipt/note/open-pinned.ts', 'receipt/session/checkpoint-note.ts', 'receipt/proof/bundle-checkpoint.ts', 'receipt/proof/turn-receipt-text.ts', 'receipt/replay/replay.ts', 'referee/replay-ruler.ts', 'referee/ruler.ts', 'payments/replay-ruler.ts', 'payments/ruler.ts', 'payments/evidence-check.ts', 'receipt/proof/turn-receipt-check.ts', 'rules/intent.ts', 'session/engine.ts', 'witness/policy/check.ts', 'witness/policy/parse-text.ts', 'mandates/ruler.ts', 'mandates/sdjwt.ts', 'mandates/vi.ts', 'mandates/digest.ts']) {
      expect(rel).toContain(f);
    }
  });

  it('imports no node: module and no Node-bound file', () => {
    for (const [spec, from] of bare) expect(spec.startsWith('node:') || ['fs', 'crypto', 'path', 'os'].includes(spec), `${from} imports ${spec}`).toBe(false);
    const rel = [...files].map((f) => relative(src, f));
    for (const nodeBound of ['codec/sha256.ts', 'codec/bundle.ts', 'receipt/note/ed25519.ts', 'receipt/note/verifierKey.ts', 'receipt/note/open.ts', 'receipt/bytes.ts', 'witness/cosignature/key.ts', 'witness/policy/parse.ts', 'receipt/proof/bundle.ts']) {
      expect(rel, nodeBound).not.toContain(nodeBound);
    }
  });

  it('only bare imports are the page libraries and the universal ones the replayed engine uses', () => {
    // jose (its only build is WebCrypto's) and @sd-jwt/core (handed the project's SHA-256) verify AP2 and VI credentials.
    expect([...bare.keys()].sort()).toEqual(['@noble/curves/abstract/modular.js', '@noble/curves/secp256k1.js', '@noble/hashes/sha2.js', '@noble/hashes/sha3.js', '@opentelemetry/api', '@sd-jwt/core', 'fast-json-stable-stringify', 'hash-wasm', 'jose', 'uplot', 'uplot/dist/uPlot.min.css', 'viem', 'viem/accounts', 'zod']);
  });

  it('binds only modules it replaces with a twin of the same exports', () => {
    // An emptied bindings file must not pass by checking nothing.
    expect(Object.keys(BINDINGS)).toContain('codec/sha256.ts');
    const exported = exportsOf([...new Set(Object.entries(BINDINGS).flat())]);
    for (const [from, to] of Object.entries(BINDINGS)) {
      expect(exported.get(from)!.values.length, `${from} exports values`).toBeGreaterThan(0);
      expect(exported.get(to), `${from} → ${to}`).toEqual(exported.get(from));
    }
  });
});

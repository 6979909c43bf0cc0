/**
 * The page reuses the engine's rules instead of copying them, so everything
 * the browser bundle imports must be browser-safe: no `node:` module, no
 * Node-bound digest, anywhere in the import graph of the page and its worker.
 * (vite would only warn and ship a stub that fails at run time.) Type-only
 * imports are erased and not followed; a module named in
 * src/web/browser/bindings.json is followed to its browser twin, as the build
 * resolves it.
 */
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = resolve(import.meta.dirname, '../../src');
const ENTRIES = ['web/browser/main.ts', 'web/browser/worker.ts'].map((f) => resolve(src, f));
const BINDINGS = JSON.parse(readFileSync(resolve(src, 'web/browser/bindings.json'), 'utf8')) as Record<string, string>;

/** Every file reachable from `entries` through relative imports, and every bare import seen. */
function graph(entries: string[]): { files: Set<string>; bare: Map<string, string> } {
  const files = new Set<string>();
  const bare = new Map<string, string>();
  const todo = [...entries];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    const code = readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '')
      .replace(/(^|\n)\s*(?:import|export)\s+type\s[^;]*?from\s*['"][^'"]+['"]/g, '$1');
    for (const m of code.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
      const spec = m[1]!;
      if (!spec.startsWith('.')) {
        bare.set(spec, relative(src, file));
        continue;
      }
      const path = resolve(dirname(file), spec.replace(/\?.*$/, ''));
      if (path.endsWith('.css')) continue;
      const ts = path.endsWith('.js') ? path.replace(/\.js$/, '.ts') : path;
      const bound = BINDINGS[relative(src, ts)];
      todo.push(bound === undefined ? ts : resolve(src, bound));
    }
  }
  return { files, bare };
}

describe('the browser bundle', () => {
  const { files, bare } = graph(ENTRIES);

  it('reaches the protocol and receipt rules it reuses', () => {
    const rel = [...files].map((f) => relative(src, f));
    for (const f of ['protocol/chain.ts', 'protocol/stream.ts', 'receipt/note/open-pinned.ts', 'receipt/session/checkpoint-note.ts', 'receipt/proof/bundle-checkpoint.ts', 'receipt/proof/turn-receipt-text.ts', 'receipt/replay/replay.ts', 'referee/replay-ruler.ts', 'referee/ruler.ts', 'rules/intent.ts', 'session/engine.ts', 'witness/policy/check.ts', 'witness/policy/parse-text.ts']) {
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
    expect([...bare.keys()].sort()).toEqual(['@noble/curves/abstract/modular.js', '@noble/curves/secp256k1.js', '@noble/hashes/sha2.js', '@noble/hashes/sha3.js', '@opentelemetry/api', 'fast-json-stable-stringify', 'uplot', 'uplot/dist/uPlot.min.css', 'viem/accounts', 'zod']);
  });

  it('binds only modules it replaces with a twin of the same exports', () => {
    for (const [from, to] of Object.entries(BINDINGS)) {
      const exported = (f: string) => [...readFileSync(resolve(src, f), 'utf8').matchAll(/export const (\w+)/g)].map((m) => m[1]);
      expect(exported(to), `${from} → ${to}`).toEqual(exported(from));
    }
  });
});

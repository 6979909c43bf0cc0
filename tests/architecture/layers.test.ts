/**
 * ARCHITECTURE.md's layer table as a test: a layer may import only from
 * layers ranked below it (and from itself). Adding an upward import — say the
 * store reaching into the session — fails here.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = resolve(import.meta.dirname, '../../src');

const RANK: Record<string, number> = {
  protocol: 0,
  // Below every layer that reports to it; imports only protocol (and @opentelemetry/api).
  telemetry: 0.5,
  // node:http plumbing every server shares (slow-client limits, bounded body reads); imports nothing of ours.
  http: 0.6,
  codec: 1,
  merkle: 1,
  intent: 1,
  store: 1,
  session: 2,
  rules: 3,
  'engine.ts': 4,
  receipt: 4,
  referee: 4,
  // The engine log: above the receipt layer it signs with, below the witnesses that cosign it.
  // AP2 / Verifiable Intent mandates (SD-JWT credentials): above referee and store, below the engine log and server.
  mandates: 4.1,
  log: 4.2,
  // x402 payments: above the referee (its mandate signs the payment policy, its ruler is the inner one) and the session.
  payments: 4.3,
  witness: 4.5,
  // The log's identity document and shard rotation: above the engine log (bindings) and the witnesses (policies).
  identity: 4.6,
  server: 5,
  web: 5,
  // The MCP gateway: the runtime of a session in front of an upstream MCP server (rules through the referee).
  gateway: 5.5,
  client: 6,
  demo: 6,
  // The x402 desk demo: above the demo (its engine key) and payments; its chain and x402 servers are optional peer dependencies, loaded on use.
  x402demo: 6.5,
  'index.ts': 7,
  cli: 8,
  bench: 8,
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const layerOf = (file: string): string => relative(src, file).split('/')[0]!;

describe('layering', () => {
  const all = files(src);

  it('knows every top-level layer', () => {
    for (const f of all) expect(RANK, `unranked layer of ${relative(src, f)}`).toHaveProperty([layerOf(f)]);
  });

  it.each(all.map((f) => [relative(src, f), f]))('%s imports only from lower layers', (_n, file) => {
    const from = layerOf(file);
    const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    const specs = [...code.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1]!);
    for (const spec of specs) {
      const target = resolve(dirname(file), spec);
      const to = layerOf(target.replace(/\.js$/, '.ts'));
      if (to === from) continue;
      expect(RANK[to]! < RANK[from]!, `${relative(src, file)} imports ${spec} (${from} → ${to})`).toBe(true);
    }
  });
});

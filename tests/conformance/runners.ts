/**
 * Every verifier in the project as a corpus runner: given the bundle cases, it
 * answers each one. A new verifier (the browser's) is one more entry in
 * RUNNERS: a name, what it cannot express, and a batch `run`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { verifyBundle } from '../../src/codec/index.js';
import { verifyChunks } from '../../src/protocol/index.js';
import { sha256 as browserSha256 } from '../../src/web/browser/crypto.js';
import { createEngine } from '../../src/engine.js';
import { createMcpServer, localBackend } from '../../src/server/mcp/index.js';
import { WireService } from '../../src/server/service.js';
import { TALLY } from '../cli/helpers.js';
import { VECTORS, bundleBytes, type BundleCase } from './corpus.js';
import { cliBatch, spawnOut } from './cli.js';
import { pageRunner } from './page-runner.js';

/** A verifier's answer, in the corpus's terms (`code` absent when the verifier names none). */
export type Outcome =
  | { ok: true; sessionId?: string | undefined; size?: number | undefined; receiptRoot?: string | undefined; sealed?: boolean | undefined }
  | { ok: false; index?: number | undefined; code?: string | undefined };

/** One verifier under test. */
export interface Runner {
  readonly name: string;
  /** Why a case cannot be put to this verifier (its interface cannot express it), or undefined. */
  readonly cannot?: (c: BundleCase) => string | undefined;
  /** Answers the cases, in order. */
  readonly run: (cases: readonly BundleCase[]) => Promise<Outcome[]>;
}

const library = (name: string, verify: typeof verifyBundle): Runner => ({
  name,
  run: (cases) => Promise.all(cases.map((c) => verify([bundleBytes(c)], c.options ?? {}) as Promise<Outcome>)),
});

/** The `tally verify` arguments for a case whose bundle is in `file`. */
function verifyArgs(c: BundleCase, file: string, parallel: boolean): string[] {
  const o = c.options ?? {};
  const args = ['verify', file, '--json', ...(parallel ? ['--parallel'] : []), ...(o.requireSealed === false ? ['--unsealed'] : [])];
  if (o.pin?.sessionId) args.push('--session', o.pin.sessionId);
  if (o.pin?.size !== undefined) args.push('--size', String(o.pin.size));
  if (o.pin?.receiptRoot) args.push('--root', o.pin.receiptRoot);
  return args;
}

/**
 * `tally verify` in a spawned process. Batched: one child runs the built
 * dispatcher for every case (tests/conformance/cli-batch.mjs), and the first
 * two cases also go through the `tally` binary itself, one process each, so
 * the batch is tied to the executable.
 */
function cli(parallel: boolean): Runner {
  return {
    name: parallel ? 'tally verify --parallel (spawned)' : 'tally verify (spawned)',
    run: async (cases) => {
      const dir = mkdtempSync(join(tmpdir(), 'tally-corpus-'));
      const argv = cases.map((c, i) => {
        const file = join(dir, `${i}.jsonl`);
        writeFileSync(file, bundleBytes(c));
        return verifyArgs(c, file, parallel);
      });
      const batch = await cliBatch(argv);
      const out = batch.map((r) => ({ ...(JSON.parse(r.stdout) as Outcome), exit: r.code }));
      for (let i = 0; i < Math.min(2, argv.length); i++) {
        const own = JSON.parse(await spawnOut(process.execPath, [TALLY, ...argv[i]!])) as Outcome;
        if (JSON.stringify(own) !== JSON.stringify(JSON.parse(batch[i]!.stdout))) throw new Error(`the tally binary and the batched dispatcher differ on case ${i}`);
      }
      // Exit status follows the verdict: 0 valid, 1 invalid.
      for (const o of out) if (o.exit !== (o.ok ? 0 : 1)) throw new Error(`exit ${o.exit} for ${JSON.stringify(o)}`);
      return out;
    },
  };
}

const mcp: Runner = {
  name: 'MCP verify tool (in-process)',
  cannot: (c) => {
    if (c.options?.pin?.sessionId !== undefined) return 'its sessionId argument fetches a stored session; it pins no id for bundle text';
    try {
      new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bundleBytes(c));
    } catch {
      return 'bundle text is a string: bytes that are not UTF-8 cannot be given';
    }
    return undefined;
  },
  run: async (cases) => {
    const server = createMcpServer(localBackend(new WireService(createEngine())));
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: 'corpus', version: '1.0.0' });
    await client.connect(b);
    try {
      const out: Outcome[] = [];
      for (const c of cases) {
        const o = c.options ?? {};
        const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bundleBytes(c));
        const args = { bundle: text, ...(o.requireSealed === false ? { unsealed: true } : {}), ...(o.pin?.size !== undefined ? { size: o.pin.size } : {}), ...(o.pin?.receiptRoot ? { receiptRoot: o.pin.receiptRoot } : {}) };
        const r = (await client.callTool({ name: 'verify', arguments: args })) as { structuredContent?: { valid: boolean; index?: number; code?: string; sessionId?: string; size?: number; receiptRoot?: string; sealed?: boolean } };
        const s = r.structuredContent!;
        out.push(s.valid ? { ok: true, sessionId: s.sessionId, size: s.size, receiptRoot: s.receiptRoot, sealed: s.sealed } : { ok: false, index: s.index, code: s.code });
      }
      return out;
    } finally {
      await client.close();
      await server.close();
    }
  },
};

/** The Python verifier written from PROTOCOL.md (tests/golden/verify_bundle.py), whole corpus in one process. */
const python: Runner = {
  name: 'Python verify_bundle.py --corpus',
  run: async () => JSON.parse(await spawnOut('python3', [join(import.meta.dirname, '../golden/verify_bundle.py'), '--corpus', join(VECTORS, 'bundles.json')])) as Outcome[],
};

// The worker pool loads its worker from the built package (as the codec tests do).
const { verifyBundleParallel } = (await import('../../dist/codec/parallel/index.js')) as { verifyBundleParallel: typeof verifyBundle };

/**
 * The browser verifier's loop as its page worker runs it (src/web/browser/worker.ts):
 * the protocol's verifyChunks over the page's own SHA-256 (@noble/hashes), in
 * this process. The real page in Chromium is the next runner (page-runner.ts),
 * present where Chromium is installed.
 */
const browserLoop = library('browser verify loop (verifyChunks, the page\'s SHA-256)', (chunks, options) => verifyChunks(browserSha256, chunks, options));

/** Every verifier of the project that runs the corpus. */
const page = pageRunner();
export const RUNNERS: readonly Runner[] = [library('verifyBundle', verifyBundle), library('verifyBundleParallel', verifyBundleParallel), cli(false), cli(true), mcp, python, browserLoop, ...(page === undefined ? [] : [page])];

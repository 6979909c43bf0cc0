/**
 * The parallel verifier's tree split: workers hash the interior nodes of their
 * batch (the roots of the aligned perfect subtrees tiling it) and the main
 * thread merges those roots. Held to the leaf-by-leaf frontier and to the
 * reference root (rootFromLeafHashes), and verifyBundleParallel with batches
 * of every size to verifyBundle on a day long enough for subtrees up to 2^9.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Frontier, rfc6962Hasher, rootFromLeafHashes } from '../../src/protocol/index.js';
import { encodeBundle, sha256, verifyBundle } from '../../src/codec/index.js';
import { analyzeBatch } from '../../src/codec/parallel/analyze.js';
import { RECORD_BYTES, OFF, subtreeHeights } from '../../src/codec/parallel/layout.js';
import { createEngine } from '../../src/session/index.js';
import { requireFreshDist } from './helpers/dist.js';

requireFreshDist(['protocol', 'codec']);
const par = await import('../../dist/codec/parallel/index.js');
type Pool = Awaited<ReturnType<typeof par.createVerifyPool>>;

const hasher = rfc6962Hasher(sha256);
const leaf = (i: number): Uint8Array => sha256(Uint8Array.of(i & 255, (i >> 8) & 255, (i >> 16) & 255));

describe('subtreeHeights', () => {
  it('tiles [base, base + count) with perfect subtrees each on its own boundary (seed 0x5b7)', () => {
    fc.assert(
      fc.property(fc.nat({ max: 2 ** 40 }), fc.integer({ min: 0, max: 5000 }), (base, count) => {
        let at = base;
        for (const h of subtreeHeights(base, count)) {
          expect(at % 2 ** h).toBe(0);
          at += 2 ** h;
        }
        expect(at).toBe(base + count);
      }),
      { seed: 0x5b7, numRuns: 500 },
    );
    expect(subtreeHeights(6, 7)).toEqual([1, 2, 0]);
    expect(subtreeHeights(0, 512)).toEqual([9]);
    expect(subtreeHeights(3, 0)).toEqual([]);
  });
});

describe('Frontier.appendSubtree', () => {
  it('appending subtree roots gives the border of appending their leaves one by one (seed 0x5b8)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 12 }), (batches) => {
        const byLeaf = new Frontier(hasher);
        const byRoot = new Frontier(hasher);
        const leaves: Uint8Array[] = [];
        for (const n of batches) {
          const base = leaves.length;
          for (let i = 0; i < n; i++) {
            leaves.push(leaf(base + i));
            byLeaf.append(leaves[base + i]!);
          }
          let at = base;
          for (const h of subtreeHeights(base, n)) {
            byRoot.appendSubtree(rootFromLeafHashes(hasher, leaves.slice(at, at + 2 ** h)), h);
            at += 2 ** h;
          }
          expect(byRoot.size).toBe(byLeaf.size);
          expect(byRoot.hashes()).toEqual(byLeaf.hashes());
          expect(byRoot.root()).toEqual(rootFromLeafHashes(hasher, leaves));
        }
      }),
      { seed: 0x5b8, numRuns: 200 },
    );
  });

  it('refuses a subtree that does not start on its boundary, and a root that is not 32 bytes', () => {
    const f = new Frontier(hasher);
    f.append(leaf(0));
    expect(() => f.appendSubtree(leaf(1), 1)).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_OUT_OF_RANGE' }));
    expect(() => f.appendSubtree(leaf(1), -1)).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_OUT_OF_RANGE' }));
    expect(() => f.appendSubtree(new Uint8Array(31), 0)).toThrow(expect.objectContaining({ code: 'TALLY_MERKLE_BAD_HASH' }));
    expect(f.size).toBe(1);
    f.appendSubtree(leaf(1), 0);
    f.appendSubtree(rootFromLeafHashes(hasher, [leaf(2), leaf(3)]), 1);
    expect(f.root()).toEqual(rootFromLeafHashes(hasher, [0, 1, 2, 3].map(leaf)));
  });
});

/** A sealed day of `wakes` frame + turn pairs (2 · wakes + 2 entries). */
async function day(wakes: number): Promise<Uint8Array[]> {
  const engine = createEngine();
  const open = await engine.open({ name: 'subtrees', turns: wakes });
  if (!open.ok) throw new Error(open.message);
  const sid = open.sessionId;
  const enc = new TextEncoder();
  for (let ord = -1; ord < wakes - 1; ord++) {
    const f = await engine.frame({ sessionId: sid, ordinal: ord, time: 1_000 + ord, ...(ord % 5 === 0 ? { data: { n: ord, s: 'é' } } : {}) });
    if (!f.ok) throw new Error(f.message);
    const t = await engine.turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(`turn ${ord}`) } });
    if (!t.ok) throw new Error(t.message);
  }
  const fin = await engine.finalize(sid);
  if (!fin.ok) throw new Error(fin.message);
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(sid)) lines.push(l);
  return lines;
}

describe('worker subtree roots', () => {
  let lines: Uint8Array[];
  let pool: Pool;
/** The same on worker threads (the only pool `split: 'records'` takes). */
let threads: Pool;
  beforeAll(async () => {
    lines = await day(700);
    pool = par.createVerifyPool({ workers: 2 });
    threads = par.createVerifyPool({ workers: 2, mode: 'threads' });
  });
  afterAll(async () => {
    await Promise.all([pool.close(), threads.close()]);
  });

  it('analyzeBatch with a base returns the reference roots of its aligned subtrees (newline-separated lines)', () => {
    for (const [base, count] of [[0, 1], [0, 512], [5, 300], [513, 700], [1000, 402]] as const) {
      const part = lines.slice(base, base + count);
      const bytes = encodeBundle(part);
      const ends = new Uint32Array(part.length);
      let at = 0;
      part.forEach((l, i) => {
        ends[i] = at + l.length;
        at += l.length + 1;
      });
      const r = analyzeBatch(0, bytes, ends, { separated: true, base });
      const rec = new Uint8Array(r.records);
      const leaves = part.map((_, i) => rec.slice(i * RECORD_BYTES + OFF.hash, i * RECORD_BYTES + OFF.hash + 32));
      const roots = new Uint8Array(r.roots!);
      let first = 0;
      subtreeHeights(base, count).forEach((h, k) => {
        expect(roots.slice(32 * k, 32 * k + 32)).toEqual(rootFromLeafHashes(hasher, leaves.slice(first, first + 2 ** h)));
        first += 2 ** h;
      });
      expect(first).toBe(count);
    }
  });

  it('verifyBundleParallel equals verifyBundle for batches of 1 to 512 lines and any chunking, sealed, cut and forged (seed 0x5b9)', async () => {
    const bundle = encodeBundle(lines);
    const seal = lines.length - 1;
    const forged = lines.slice();
    forged[seal] = new TextEncoder().encode(new TextDecoder().decode(lines[seal]).replace(/"root":"(.)/, (_, c: string) => `"root":"${c === '0' ? '1' : '0'}`));
    const variants = [bundle, bundle.subarray(0, bundle.length - lines[seal]!.length - 1), encodeBundle(forged), bundle.subarray(0, bundle.length - 7)];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...variants.keys()), fc.integer({ min: 1, max: 512 }), fc.integer({ min: 1, max: 70_000 }), async (v, batchLines, chunk) => {
        const bytes = variants[v]!;
        const chunks: Uint8Array[] = [];
        for (let o = 0; o < bytes.length; o += chunk) chunks.push(bytes.subarray(o, o + chunk));
        const want = await verifyBundle(chunks, { requireSealed: v !== 1 });
        const got = await par.verifyBundleParallel(chunks, { pool: threads, split: 'records', batchLines, requireSealed: v !== 1 });
        expect(got).toEqual(want);
        // The default split, in segments of about 1 to 180 lines.
        for (const p of [pool, threads]) expect(await par.verifyBundleParallel(chunks, { pool: p, segmentBytes: 1 + 128 * batchLines, requireSealed: v !== 1 })).toEqual(want);
        if (v === 0 || v === 1) expect(want.ok).toBe(true);
        else expect(want.ok).toBe(false);
      }),
      { seed: 0x5b9, numRuns: 60 },
    );
  });
});

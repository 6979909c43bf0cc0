/**
 * Issue #11's closing requirement: arbitrary byte edits of a valid bundle, a
 * signed note and a tlog-proof — bit flips, inserted and deleted bytes, a BOM
 * at the start of a line, a duplicated key, a character rewritten as its
 * `\u` escape, added whitespace — fed to every verifier entry point (plain
 * and parallel bundle verification, openNote on bytes and on text,
 * verifyTlogProof). Whatever is accepted must re-encode to exactly its input
 * bytes: there is one encoding, so an accepted edit can only be no edit.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBundle, sha256, verifyBundle } from '../../src/codec/index.js';
import { canonicalBytes, inclusionProofFromLeafHashes, rfc6962Hasher, rootFromLeafHashes, type CanonicalObject } from '../../src/protocol/index.js';
import { checkpointOrigin, formatCheckpoint, formatTlogProof, parseTlogProof, verifyTlogProof } from '../../src/receipt/checkpoint/index.js';
import { generateEngineKey } from '../../src/receipt/keys/index.js';
import { openNote, signNote } from '../../src/receipt/note/index.js';
import { runDay } from '../helpers/day.js';
import { requireFreshDist } from '../perf/helpers/dist.js';

requireFreshDist(['protocol', 'codec']);
const par = await import('../../dist/codec/parallel/index.js');
let pool: Awaited<ReturnType<typeof par.createVerifyPool>>;
/** The same on worker threads (the only pool `split: 'records'` takes). */
let threads: Awaited<ReturnType<typeof par.createVerifyPool>>;
beforeAll(() => {
  pool = par.createVerifyPool({ workers: 2 });
  threads = par.createVerifyPool({ workers: 2, mode: 'threads' });
});
afterAll(async () => {
  await Promise.all([pool.close(), threads.close()]);
});

const SEED = 0xb17e5;
const enc = new TextEncoder();
const lossy = new TextDecoder('utf-8', { ignoreBOM: true }); // what a careless reader does: repairs
const strictText = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const eq = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

type Edit = (b: Uint8Array, at: number, x: number) => Uint8Array;
const splice = (b: Uint8Array, at: number, del: number, ins: readonly number[]): Uint8Array => Uint8Array.from([...b.subarray(0, at), ...ins, ...b.subarray(at + del)]);
const lineStart = (b: Uint8Array, at: number): number => {
  let i = Math.min(at, b.length);
  while (i > 0 && b[i - 1] !== 0x0a) i--;
  return i;
};
const asText = (f: (s: string, at: number) => string): Edit => (b, at) => {
  const s = lossy.decode(b);
  return enc.encode(f(s, at % (s.length + 1)));
};
const EDITS: Record<string, Edit> = {
  flip: (b, at, x) => splice(b, at % b.length, 1, [b[at % b.length]! ^ (1 << (x % 8))]),
  insert: (b, at, x) => splice(b, at % (b.length + 1), 0, [x % 256]),
  delete: (b, at) => splice(b, at % b.length, 1, []),
  bom: (b, at) => splice(b, lineStart(b, at % (b.length + 1)), 0, [0xef, 0xbb, 0xbf]),
  space: (b, at, x) => splice(b, at % (b.length + 1), 0, [[0x20, 0x09, 0x0d, 0x0a][x % 4]!]),
  escape: asText((s, at) => {
    const i = s.slice(at).search(/[a-z0-9]/);
    return i < 0 ? s : s.slice(0, at + i) + `\\u${s.charCodeAt(at + i).toString(16).padStart(4, '0')}` + s.slice(at + i + 1);
  }),
  duplicateKey: asText((s, at) => {
    const m = /"([a-zA-Z]+)":("[^"\\]*"|-?\d+)/g;
    m.lastIndex = at;
    const hit = m.exec(s) ?? /"([a-zA-Z]+)":("[^"\\]*"|-?\d+)/.exec(s);
    return hit ? s.slice(0, hit.index) + `${hit[0]},${hit[0]}` + s.slice(hit.index + hit[0].length) : s;
  }),
};
const edit = fc.record({ kind: fc.constantFrom(...Object.keys(EDITS)), at: fc.nat(), x: fc.nat() });
const apply = (b: Uint8Array, e: { kind: string; at: number; x: number }): Uint8Array => EDITS[e.kind]!(b, e.at, e.x);
const runs = { seed: SEED, numRuns: 300 };

describe(`byte-edit fuzz of every verifier entry point (seed ${SEED.toString(16)})`, () => {
  it('bundles: plain and parallel agree, and anything accepted is its own canonical re-encoding', async () => {
    const { bundle } = await runDay({ wakes: 2 });
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 2 }), async (edits) => {
        const bytes = edits.reduce(apply, bundle);
        const plain = await verifyBundle([bytes]);
        expect(await par.verifyBundleParallel([bytes], { pool: threads, split: 'records', batchLines: 3 })).toEqual(plain);
        for (const p of [pool, threads]) expect(await par.verifyBundleParallel([bytes], { pool: p, segmentBytes: 300 })).toEqual(plain);
        if (!plain.ok) return;
        accepted++;
        const text = strictText.decode(bytes);
        const lines = text.split('\n').slice(0, -1);
        expect(eq(encodeBundle(lines.map((l) => canonicalBytes(JSON.parse(l) as CanonicalObject))), bytes)).toBe(true);
      }),
      { ...runs, numRuns: 200 },
    );
    expect(accepted).toBeLessThan(200); // the edits do bite
  });

  const key = generateEngineKey('tally.example/fuzz');
  const hasher = rfc6962Hasher(sha256);
  const leaves = Array.from({ length: 5 }, (_, i) => hasher.hashLeaf(enc.encode(`entry ${i}`)));
  const origin = checkpointOrigin(key.name, 'ab'.repeat(32));
  const note = signNote(formatCheckpoint({ origin, size: leaves.length, root: rootFromLeafHashes(hasher, leaves) }), [key]);

  it('signed notes: openNote on bytes and on text accepts only the exact note', () => {
    const bytes = enc.encode(note);
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 2 }), (edits) => {
        const edited = edits.reduce(apply, bytes);
        const r = openNote(edited, [key.verifierKey]);
        const t = openNote(lossy.decode(edited), [key.verifierKey]);
        for (const o of [r, t]) {
          if (!o.ok) continue;
          const again = enc.encode(`${o.text}\n${[...o.verified, ...o.unverified].map((s) => `\u2014 ${s.name} ${s.base64}\n`).join('')}`);
          expect(eq(again, edited), lossy.decode(edited)).toBe(true);
        }
      }),
      runs,
    );
  });

  it('tlog-proofs: verifyTlogProof accepts only text that formats back to exactly its bytes', () => {
    const proofText = formatTlogProof({ index: 3, proof: inclusionProofFromLeafHashes(hasher, leaves, 3), signedCheckpoint: note, extraData: enc.encode('{"a":1}') });
    const bytes = enc.encode(proofText);
    expect(verifyTlogProof(proofText, { verifiers: [key.verifierKey], leafHash: leaves[3]!, origin }).ok).toBe(true);
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 2 }), (edits) => {
        const edited = edits.reduce(apply, bytes);
        const text = lossy.decode(edited);
        const r = verifyTlogProof(text, { verifiers: [key.verifierKey], leafHash: leaves[3]!, origin });
        if (!r.ok) return;
        const parsed = parseTlogProof(text);
        expect(parsed.ok).toBe(true);
        expect(eq(enc.encode(parsed.ok ? formatTlogProof(parsed.tlogProof) : ''), edited), text).toBe(true);
      }),
      runs,
    );
  });
});

/**
 * One day, one encoding (issue #11): a bundle line is accepted only when its
 * RAW BYTES are the canonical encoding of its value. Every other byte
 * sequence that parses to the same values — a BOM, a duplicate key, an
 * escape, whitespace, another key order — is refused by the plain and the
 * parallel verifier at the same index with the same code, even when the rest
 * of the bundle is re-linked to the forged bytes. Also: nesting at and past
 * the one depth limit, and over-long lines that do end in a newline.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBundle, verifyBundle } from '../../src/codec/index.js';
import { canonicalBytes, canonicalJson, JSON_MAX_DEPTH, LIMITS, type CanonicalObject, type CanonicalValue } from '../../src/protocol/index.js';
import { checkEntryBytes } from '../../src/receipt/index.js';
import { createEngine } from '../../src/session/index.js';
import { runDay } from '../helpers/day.js';
import { relink } from '../helpers/relink.js';
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

const enc = new TextEncoder();
const dec = new TextDecoder();
const BOM = Uint8Array.of(0xef, 0xbb, 0xbf);
const cat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) (out.set(p, o), (o += p.length));
  return out;
};

/** Both verifiers; they must agree exactly (summary, or index, code and message). */
async function verifyBoth(bytes: Uint8Array) {
  const plain = await verifyBundle([bytes]);
  const parallel = await par.verifyBundleParallel([bytes], { pool: threads, split: 'records', batchLines: 2 });
  expect(parallel).toEqual(plain);
  for (const p of [pool, threads]) expect(await par.verifyBundleParallel([bytes], { pool: p, segmentBytes: 400 })).toEqual(plain);
  return plain;
}

// Byte sequences that JSON.parse maps to the SAME value as the canonical line.
const SAME_VALUE: ReadonlyArray<readonly [string, (line: string) => string | undefined]> = [
  ['BOM', (l) => `\uFEFF${l}`],
  ['duplicate key', (l) => l.replace(/^\{"(\w+)":("[^"]*"|\{[^}]*\}),/, (_m, k: string, v: string) => `{"${k}":${v},"${k}":${v},`)],
  ['\\u0061 escape for a', (l) => (l.includes('a') ? l.replace(/"kind":"(\w*)a/, '"kind":"$1\\u0061') : undefined)],
  ['escaped slash', (l) => l.replace('"kind"', '"\\u006bind"')],
  ['space after a colon', (l) => l.replace(':', ': ')],
  ['trailing space', (l) => `${l} `],
  ['trailing CR', (l) => `${l}\r`],
  ['keys reordered', (l) => JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(l) as Record<string, unknown>).reverse()))],
  ['1.0 for an integer', (l) => (/"ordinal":\d/.test(l) ? l.replace(/"ordinal":(\d+)/, '"ordinal":$1.0') : undefined)],
];

describe('one encoding per entry', () => {
  it('a BOM on the genesis line of a re-linked bundle is refused by both verifiers (entry 0), as it was not before', async () => {
    const { lines } = await runDay({ wakes: 2 });
    const forged = encodeBundle(relink(lines, 0, cat(BOM, lines[0]!)));
    const r = await verifyBoth(forged);
    expect(r).toMatchObject({ ok: false, index: 0, code: 'not-json' });
    expect(r.ok || r.message).toContain('bom');
    // A BOM in the middle of the day, also re-linked.
    const mid = await verifyBoth(encodeBundle(relink(lines, 3, cat(BOM, lines[3]!))));
    expect(mid).toMatchObject({ ok: false, index: 3, code: 'not-json' });
    // The single-entry check of tlog proofs uses the same rule.
    expect(checkEntryBytes(lines[0]!).ok).toBe(true);
    expect(checkEntryBytes(cat(BOM, lines[0]!))).toMatchObject({ ok: false, code: 'not-json' });
  });

  it('every valid bundle re-encodes to exactly its bytes, and every other encoding of the same values is refused at its index (seed 0x0e1c)', async () => {
    const days = await Promise.all([1, 2, 4].map((wakes) => runDay({ wakes, name: `enc-${wakes}` })));
    let refusedCount = 0;
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: days.length - 1 }), fc.nat(), fc.nat({ max: SAME_VALUE.length - 1 }), async (d, pick, m) => {
        const { lines, bundle } = days[d]!;
        // Re-encoding the parsed lines gives the same bytes.
        expect(encodeBundle(lines.map((l) => canonicalBytes(JSON.parse(dec.decode(l)) as CanonicalObject)))).toEqual(bundle);
        expect(await verifyBoth(bundle)).toMatchObject({ ok: true });
        const at = pick % lines.length;
        const text = dec.decode(lines[at]!);
        const other = SAME_VALUE[m]![1](text);
        if (other === undefined || other === text) return;
        expect(JSON.parse(other.replace(/^\uFEFF/, ''))).toEqual(JSON.parse(text)); // the same values (a decoder that skips a BOM)…
        const r = await verifyBoth(encodeBundle(relink(lines, at, enc.encode(other))));
        expect(r).toMatchObject({ ok: false, index: at }); // …are another entry: refused where they are
        expect(['not-json', 'not-canonical']).toContain(r.ok ? '' : r.code);
        refusedCount++;
      }),
      { seed: 0x0e1c, numRuns: 150 },
    );
    expect(refusedCount).toBeGreaterThan(50);
  });

  it('a duplicate key is refused with the strict parser naming it', async () => {
    const { lines } = await runDay({ wakes: 1 });
    const dup = dec.decode(lines[0]!).replace('{"kind":"genesis",', '{"kind":"genesis","kind":"genesis",');
    const r = await verifyBoth(encodeBundle(relink(lines, 0, enc.encode(dup))));
    expect(r).toMatchObject({ ok: false, index: 0, code: 'not-canonical' });
    expect(r.ok || r.message).toContain('duplicate-key');
  });
});

function nested(levels: number): CanonicalValue {
  let v: CanonicalValue = 'x';
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

describe('one depth limit (the entry object is level 1)', () => {
  it('the engine records frame data nesting to level 64 and refuses level 65 with malformed-entry (no throw)', async () => {
    const engine = createEngine();
    const open = await engine.open({ name: 'deep', day: 1 });
    if (!open.ok) throw new Error(open.message);
    // data at level 2; 63 levels of arrays inside it reach level 64 of the entry.
    const over = await engine.frame({ sessionId: open.sessionId, ordinal: -1, time: 1, data: nested(JSON_MAX_DEPTH) });
    expect(over).toMatchObject({ ok: false, diagnostic: 'malformed-entry' });
    const at = await engine.frame({ sessionId: open.sessionId, ordinal: -1, time: 1, data: nested(JSON_MAX_DEPTH - 1) });
    expect(at.ok).toBe(true);
    const t = await engine.turn({ sessionId: open.sessionId, ordinal: -1, parentHash: at.ok ? at.entryHash : '', frameRoot: at.ok ? at.frameRoot : '', body: { kind: 'stand-down', failureClass: 'timeout' } });
    expect(t.ok).toBe(true);
    await engine.finalize(open.sessionId);
    const lines: Uint8Array[] = [];
    for await (const l of engine.exportEntries(open.sessionId)) lines.push(l);
    expect(await verifyBoth(encodeBundle(lines))).toMatchObject({ ok: true, size: 4 });
  });

  it('a frame nesting to level 65 is refused by both verifiers as not-canonical, never thrown', async () => {
    const { lines } = await runDay({ wakes: 1 });
    const frame = JSON.parse(dec.decode(lines[1]!)) as Record<string, unknown>;
    const { data: _shallow, ...rest } = frame;
    const deep = `{"data":${JSON.stringify(nested(JSON_MAX_DEPTH))},${canonicalJson(rest as CanonicalObject).slice(1)}`;
    expect(JSON.parse(deep)).toMatchObject({ kind: 'frame', frameRoot: frame['frameRoot'] });
    const r = await verifyBoth(encodeBundle(relink(lines, 1, enc.encode(deep))));
    expect(r).toMatchObject({ ok: false, index: 1, code: 'not-canonical' });
    expect(r.ok || r.message).toContain('too-deep');
  });
});

describe('over-long lines', () => {
  it('a line over the limit that ends in a newline (even past the 2 MiB read-ahead) is too-large at its index', async () => {
    const { lines } = await runDay({ wakes: 1 });
    for (const size of [LIMITS.entryBytes + 1, 3 * 1024 * 1024 + 17]) {
      const long = new Uint8Array(size).fill(0x20);
      const bytes = encodeBundle([...lines.slice(0, 2), long, ...lines.slice(2)]);
      expect(await verifyBoth(bytes)).toMatchObject({ ok: false, index: 2, code: 'too-large' });
      // Unterminated and longer than any entry: too-large as well, not "truncated?".
      const cut = cat(encodeBundle(lines.slice(0, 2)), long);
      expect(await verifyBoth(cut)).toMatchObject({ ok: false, index: 2, code: 'too-large' });
    }
    const short = cat(encodeBundle(lines.slice(0, 2)), lines[2]!);
    expect(await verifyBoth(short)).toMatchObject({ ok: false, index: 2, code: 'missing-newline' });
  });
});

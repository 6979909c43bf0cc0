/**
 * verifyBundleParallel by segments (the default split, dist/) against
 * verifyBundle on forged days that are consistent everywhere except one
 * chain rule: a frame re-timed (earlier, equal or later than the frame
 * before) or re-numbered, with its frame root, the answering turn's
 * frameRoot and every later link recomputed. A worker proves its segment
 * from an assumed start, so these are the joins it leaves to the main thread
 * (the first frame's time against the frame before; the first line by the
 * full rules); segments of 50–1,500 bytes put every line at a boundary.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, frameRoot, toHex, type CanonicalValue } from '../../src/protocol/index.js';
import { encodeBundle, sha256, verifyBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/session/index.js';
import { relink } from '../helpers/relink.js';
import { requireFreshDist } from './helpers/dist.js';

requireFreshDist(['protocol', 'codec']);
const par = await import('../../dist/codec/parallel/index.js');
type Pool = Awaited<ReturnType<typeof par.createVerifyPool>>;

const enc = new TextEncoder();
const td = new TextDecoder();
let pool: Pool;
/** The same on worker threads (the only pool `split: 'records'` takes). */
let threads: Pool;
beforeAll(() => {
  pool = par.createVerifyPool({ workers: 2 });
  threads = par.createVerifyPool({ workers: 2, mode: 'threads' });
});
afterAll(async () => {
  await Promise.all([pool.close(), threads.close()]);
});

/** A sealed day of `wakes` frames 10 ms apart, each answered (authored turns, and a stand-down every third). */
async function day(wakes: number): Promise<Uint8Array[]> {
  const engine = createEngine();
  const open = await engine.open({ name: 'segments', plan: 'parallel' });
  if (!open.ok) throw new Error(open.message);
  const sid = open.sessionId;
  for (let i = 0; i < wakes; i++) {
    const f = await engine.frame({ sessionId: sid, ordinal: i - 1, time: 1000 + 10 * i, ...(i % 4 === 1 ? { data: { i } } : {}) });
    if (!f.ok) throw new Error(f.message);
    const body = i % 3 === 2 ? { kind: 'stand-down' as const, failureClass: 'timeout' as const } : { kind: 'authored' as const, bytes: enc.encode(`turn ${i}`) };
    const t = await engine.turn({ sessionId: sid, ordinal: i - 1, parentHash: f.entryHash, frameRoot: f.frameRoot, body });
    if (!t.ok) throw new Error(t.message);
  }
  const fin = await engine.finalize(sid, { note: 'x' });
  if (!fin.ok) throw new Error(fin.message);
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(sid)) lines.push(l);
  return lines;
}

const parse = (l: Uint8Array): Record<string, unknown> => JSON.parse(td.decode(l)) as Record<string, unknown>;
const encode = (v: Record<string, unknown>): Uint8Array => enc.encode(canonicalJson(v as CanonicalValue));

/** Frame `at` (a line index) with a new time or ordinal, its root recomputed, the turn after it naming that root, and everything after re-linked. */
function forge(lines: readonly Uint8Array[], at: number, edit: { time?: number; ordinal?: number }): Uint8Array[] {
  const v = parse(lines[at]!);
  if (edit.time !== undefined) v['time'] = edit.time;
  if (edit.ordinal !== undefined) v['ordinal'] = edit.ordinal;
  const data = v['data'] as CanonicalValue | undefined;
  const root = toHex(frameRoot(sha256, { ordinal: v['ordinal'] as number, time: v['time'] as number, ...(data === undefined ? {} : { data }) }));
  v['frameRoot'] = root;
  const next = lines.slice();
  const turn = parse(next[at + 1]!);
  turn['frameRoot'] = root;
  next[at + 1] = encode(turn);
  return relink(next, at, encode(v));
}

function chunked(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let o = 0; o < bytes.length; o += size) out.push(bytes.subarray(o, o + size));
  return out;
}

describe('verifyBundleParallel by segments', () => {
  it('gives the first error of verifyBundle on re-timed and re-numbered frames, re-linked (seed 0x5e61)', async () => {
    const lines = await day(24);
    const frames = lines.map((l, i) => (td.decode(l).includes('"kind":"frame"') ? i : -1)).filter((i) => i >= 0);
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: frames.length - 1 }),
        fc.oneof(fc.record({ time: fc.integer({ min: 0, max: 1400 }) }), fc.record({ ordinal: fc.integer({ min: -1, max: 30 }) })),
        fc.integer({ min: 50, max: 1500 }),
        fc.integer({ min: 40, max: 5000 }),
        async (f, edit, segmentBytes, chunk) => {
          const bytes = encodeBundle(forge(lines, frames[f]!, edit));
          const ref = await verifyBundle(chunked(bytes, chunk));
          seen.add(ref.ok ? 'ok' : ref.code);
          for (const p of [pool, threads]) expect(await par.verifyBundleParallel(chunked(bytes, chunk), { pool: p, segmentBytes })).toEqual(ref);
        },
      ),
      { seed: 0x5e61, numRuns: 300 },
    );
    for (const code of ['ok', 'time-regressed', 'bad-ordinal']) expect(seen, code).toContain(code);
  });

  it('equals verifyBundle on a valid day for every segment size from one line to the whole day', async () => {
    const bytes = encodeBundle(await day(40));
    const ref = await verifyBundle([bytes]);
    expect(ref.ok).toBe(true);
    for (const segmentBytes of [1, 120, 333, 700, 1024, 4096, 1 << 20]) {
      for (const p of [pool, threads]) expect(await par.verifyBundleParallel(chunked(bytes, 777), { pool: p, segmentBytes })).toEqual(ref);
    }
  });
});

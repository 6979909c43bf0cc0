/**
 * `onProgress` of verifyBundle / verifyBundleFile (what `tally verify` shows
 * on a terminal): the verdict-only path, called after each chunk with the
 * entries verified so far, rising to the bundle's size, on one thread and in
 * parallel; the verdict is the one without it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeBundle, verifyBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/session/index.js';
import { requireFreshDist } from '../perf/helpers/dist.js';

// The parallel path starts child processes from dist/ (their entry point is built JavaScript).
requireFreshDist(['protocol', 'codec']);
const { verifyBundleFile } = await import('../../dist/codec/index.js');

async function day(wakes: number): Promise<Uint8Array> {
  const engine = createEngine();
  const open = await engine.open({ name: 'progress', wakes });
  if (!open.ok) throw new Error(open.message);
  const sid = open.sessionId;
  for (let i = 0; i < wakes; i++) {
    const f = await engine.frame({ sessionId: sid, ordinal: i - 1, time: 1000 + i });
    if (!f.ok) throw new Error(f.message);
    const t = await engine.turn({ sessionId: sid, ordinal: i - 1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: new TextEncoder().encode(`turn ${i}`) } });
    if (!t.ok) throw new Error(t.message);
  }
  if (!(await engine.finalize(sid)).ok) throw new Error('seal');
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(sid)) lines.push(l);
  return encodeBundle(lines);
}

const rising = (seen: number[], size: number): void => {
  expect(seen.length).toBeGreaterThan(1);
  for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThanOrEqual(seen[i - 1]!);
  expect(seen.at(-1)).toBe(size);
};

describe('onProgress', () => {
  it('rises chunk by chunk to the size, and leaves the verdict as it is', async () => {
    const bytes = await day(300);
    const chunks: Uint8Array[] = [];
    for (let o = 0; o < bytes.length; o += 4096) chunks.push(bytes.subarray(o, o + 4096));
    const seen: number[] = [];
    const r = await verifyBundle(chunks, { onProgress: (n) => seen.push(n) });
    expect(r).toEqual(await verifyBundle([bytes]));
    expect(r.ok && r.size).toBe(602);
    rising(seen, 602);
  });

  it('verifyBundleFile reports it on one thread and in parallel alike', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-progress-'));
    try {
      const path = join(dir, 'day.jsonl');
      writeFileSync(path, await day(3000));
      const want = await verifyBundleFile(path);
      for (const parallel of [false, { segmentBytes: 65536 }]) {
        const seen: number[] = [];
        expect(await verifyBundleFile(path, { onProgress: (n) => seen.push(n), ...(parallel ? { parallel } : {}) })).toEqual(want);
        rising(seen, 6002);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
